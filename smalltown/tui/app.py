"""The smalltown TUI: the town's map, its agents and its events, live; a debugger of its days.

Threads: a Textual thread worker runs `SimRunner.run`, the only code that calls `sim.step()`.
The interface sends it commands (`SimRunner.send`) and draws the `Frame`s it posts back as
`FrameReady` messages; it never reads or changes the simulation itself. Interventions (whisper,
interview, edit an object, save; in `interventions.py`) are commands too, run by the worker
between ticks, and their results come back as `Replied` messages. `sim.close()` is called once
the worker has returned (after the screens' reader: the last connection folds the log in).
Opening another save or world, or going on in a copy ("save as"), ends this app with the file to
open as its result; `session.run_tui` opens it in a new app.
"""

from __future__ import annotations

import asyncio
import signal
import threading
import time
from datetime import datetime
from pathlib import Path
from typing import Iterable

from textual.app import ComposeResult, SystemCommand
from textual.css.query import NoMatches
from textual.message import Message
from textual.screen import Screen
from textual.worker import Worker, WorkerState

from smalltown.llm.tasks import TASKS
from smalltown.shown import shown
from smalltown.sim.breakpoints import Breakpoint
from smalltown.sim.clock import clock_near
from smalltown.sim.commands import Break, Cancel, Faster, RunUntil, Slower, Step, StepAgent, Toggle, Unbreak
from smalltown.sim.simulation import Simulation
from smalltown.tui.interventions import Interventions, Kept
from smalltown.tui.keys import BINDINGS, COMMANDS
from smalltown.tui.palette import agent_colours
from smalltown.tui.reader import SaveReader
from smalltown.tui.runner import SimRunner
from smalltown.tui.screens.calls import CallsScreen
from smalltown.tui.screens.day import DayScreen, replay_hint
from smalltown.tui.screens.forms import AskScreen, BreakpointsScreen
from smalltown.tui.screens.help import HelpScreen
from smalltown.tui.screens.inspector import InspectorScreen
from smalltown.tui.screens.models import CallCount, ModelsScreen, backend_facts, state_line
from smalltown.tui.screens.timeline import ConversationsScreen, TimelineScreen
from smalltown.tui.screens.town_goods import TownScreen
from smalltown.tui.snapshot import Frame
from smalltown.tui.widgets.map_view import MapView
from smalltown.tui.widgets.panels import ClockBar, EventLog

SHUTDOWN_WAIT_SECONDS = 10  # how long an exit waits for the worker (a stop cuts off its model call at once)
SCREEN_RELOAD_SECONDS = 0.5  # an open debugger screen re-reads the save at most this often
BUSY_SHOWN_AFTER = 0.25  # seconds a tick runs before the "thinking" indicator shows


class FrameReady(Message):
    """Posted from the worker thread: a new picture of the town."""

    def __init__(self, frame: Frame) -> None:
        super().__init__()
        self.frame = frame


class SmalltownApp(Interventions):  # its result: a file to open next, or None
    TITLE = "smalltown"
    BINDINGS = BINDINGS

    def __init__(self, sim: Simulation, until: datetime | None = None,
                 start_paused: bool = True, notice: str | None = None, can_open: bool = True,
                 saving_to: Path | None = None, error: str | None = None, kept: Kept | None = None) -> None:
        super().__init__()
        self._kept = kept or Kept()
        self._error = error  # why the file the user asked to open did not open: the first note
        self.sim = sim
        self._can_open = can_open  # run_tui can open another file when this app ends
        self._notice = notice  # e.g. that no model is configured, and how to add one
        self._saving_to = saving_to  # said in the log when the run was opened from the command line
        self._colours = agent_colours([a.name for a in sim.agents])
        # paused, unless told to run or to run until a time (the user asked to get there)
        self._runner = SimRunner(sim, self._publish, until=until, paused=start_paused and until is None,
                                 speed_index=self._kept.speed, breakpoints=self._kept.breakpoints)
        # The worker has not started: reading the sim here is safe, and gives a full first picture.
        self.set_reactive(SmalltownApp.frame, self._runner.frame())
        self._worker: Worker[None] | None = None
        self._quitting = False
        self._closed = False
        # Static world data, read once here; everything that changes comes in frames.
        self._world_name = sim.world.name
        self._world = sim.world
        self._backend = sim.backend.name
        self._facts, self._call_count = backend_facts(sim.backend), CallCount()  # the worker has not started
        self._save_name = sim.save.path.name
        self._names = [a.name for a in self.frame.agents]
        self._reader: SaveReader | None = None
        self._reloaded = 0.0
        first = self._kept.selected if self._kept.selected in self._names else self._names[0] if self._names else None
        self.set_reactive(SmalltownApp.selected, first)
        self.following = False
        self._next_breakpoint = self._kept.next_breakpoint
        self._reopen: Path | None = None  # what to open when this app ends
        self._busy_shown = ""
        self.terminated = False  # ended by SIGTERM
        self.interrupted = False  # ended by Ctrl-C (the command exits 130, as after Ctrl-C anywhere)
        self._on_sigterm = False  # our SIGTERM handler is in place (removed on unmount)

    def compose(self) -> ComposeResult:
        yield from self.compose_town(self._world, self._colours, self._backend, self._save_name)

    def on_mount(self) -> None:
        self.use_saved_theme()
        log = self.query_one(EventLog)
        log.carry(self._kept.log)  # (a rewind's or a save as's: the log of the run it came from)
        log.show_perceived = self._kept.show_perceived
        if self._error:
            log.note(self._error)
            self.notify(shown(self._error), severity="error", timeout=15, markup=False)
        how = "Running — space pauses" if self.frame.running else "Paused — space to run"
        log.note(f"{self._world_name}: {len(self.frame.agents)} agents. {how}, n steps a tick, "
                 "s to the selected agent's next event, ? lists the keys.")
        if self._saving_to is not None:
            log.note(f"Saving to {self._saving_to} (every tick that changes something is committed as it runs).")
        for line in (self._notice or "").splitlines():  # (each a note of its own)
            log.note(line)
        if self._notice and self._backend == "scripted":  # no model was chosen: the way to one, in view a while
            self.notify("No model: the scripted stand-in answers. m: how to add a model.", timeout=15)
        self._show_backend_state()
        self.set_interval(2.0, self._show_backend_state)
        self.watch_frame(self.frame)  # set before mounting, when there was nothing to draw on
        self._worker = self.run_worker(self._runner.run, name="simulation", group="simulation",
                                       thread=True, exit_on_error=True)
        self.set_interval(0.2, self._show_busy)
        # SIGTERM is delivered to the main thread only: an app run elsewhere (a test's thread) leaves it be
        if threading.current_thread() is threading.main_thread():
            asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, self._terminated)
            self._on_sigterm = True

    def _terminated(self) -> None:
        """SIGTERM: leave as a quit does, at once (the worker stops mid-tick, the save is whole)."""
        self.terminated = True
        self._runner.stop()
        self.run_worker(self.action_quit(), exclusive=False)

    def _show_busy(self) -> None:
        """While a tick takes long (a model answering), say so and who is asking what: the
        interface stays live because the model works on the simulation's thread."""
        started, asking = self._runner.in_flight()
        text = ""
        if started is not None and time.monotonic() - started > BUSY_SHOWN_AFTER:
            text = f"thinking {time.monotonic() - started:.1f}s"
            if asking:
                agent, task, _ = min(asking, key=lambda a: a[2])
                text += f" · {agent.split()[0]}: {task}" + (f" +{len(asking) - 1}" if len(asking) > 1 else "")
        if text != self._busy_shown:
            self._busy_shown = text
            try:
                self.query_one(ClockBar).busy(text)
            except NoMatches:
                pass  # the app is closing: its widgets are gone

    # --- frames from the worker -------------------------------------------------------------

    def _publish(self, frame: Frame) -> None:
        """Runs on the worker thread: post_message is thread-safe and never blocks."""
        try:
            self.post_message(FrameReady(frame))
        except RuntimeError:
            pass  # the event loop is gone: the app is exiting

    def on_frame_ready(self, message: FrameReady) -> None:
        self.frame = message.frame
        if message.frame.hits:
            self._breakpoint_hit(message.frame)
        if message.frame.stopped:
            self._note(message.frame.stopped)  # what a run until or a step stopped on
        reload = getattr(self.screen, "reload", None)
        now = time.monotonic()
        # (a paused town's frame is rare and final: the screen shows where it stopped, unthrottled)
        if reload is not None and (now - self._reloaded >= SCREEN_RELOAD_SECONDS or not message.frame.running):
            self._reloaded = now
            reload()  # a debugger screen reads what the last ticks committed
        self._runner.frame_shown()

    # --- debugger screens: they read the save, never the simulation ------------------------

    def _save_reader(self) -> SaveReader:
        if self._reader is None:
            self._reader = SaveReader(self.sim.save.path)
        return self._reader

    def action_inspect(self) -> None:
        if self.selected:
            self.push_screen(InspectorScreen(self._save_reader(), self.selected))

    def action_calls(self) -> None:
        self.push_screen(CallsScreen(self._save_reader(), self.selected))

    def action_town(self) -> None:
        self.push_screen(TownScreen(self._save_reader(), None))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The town screen's key only in a world with an economy (elsewhere not in the footer)."""
        return action != "town" or self._world.economy is not None

    def action_models(self) -> None:
        self.push_screen(ModelsScreen(self._save_reader(), self._facts))

    def _show_backend_state(self) -> None:
        """The clock bar's backend, calls and fallbacks, from the save (one query when none is new)."""
        if not self._closed and self._call_count.read(self._save_reader()):
            self.query_one(ClockBar).backend_state(state_line(self._facts, self._call_count.calls,
                                                              self._call_count.fallbacks))

    def action_timeline(self) -> None:
        self.push_screen(TimelineScreen(self._save_reader(), self.selected))

    def action_conversations(self) -> None:
        self.push_screen(ConversationsScreen(self._save_reader(), self.selected))

    def action_day(self) -> None:
        def picked(choice: tuple[str, datetime] | None) -> None:
            if choice:
                self._select(choice[0])
                self._note(replay_hint(self.sim.save.path, *choice))

        read = lambda day: self._save_reader().store.day(day, self._world.gatherings)  # noqa: E731
        events = lambda kinds: self._save_reader().store.events(None, kinds)  # noqa: E731
        self.push_screen(DayScreen(read, self._names, self._colours, self.frame.now, self.selected, "selects", events),
                         picked)

    # --- commands -----------------------------------------------------------------------------

    def action_toggle(self) -> None:
        self._runner.send(Toggle())

    def action_step(self) -> None:
        self._runner.send(Step())

    def action_faster(self) -> None:
        self._runner.send(Faster())

    def action_slower(self) -> None:
        self._runner.send(Slower())

    def action_perceived(self) -> None:
        log = self.query_one(EventLog)
        log.show_perceived = not log.show_perceived
        log.note("Showing perceived and decided events." if log.show_perceived else "Hiding perceived and decided events.")

    def action_follow(self) -> None:
        """Keep the selected agent in the middle of the map as it walks."""
        self.following = not self.following
        if self.following and self.selected:
            self.query_one(MapView).follow(self.selected)
        self.query_one(EventLog).note(f"Following {self.selected}." if self.following else "Not following.")

    # --- stepping and breakpoints -----------------------------------------------------------

    def action_step_agent(self) -> None:
        if not self.selected:
            return
        self._runner.send(StepAgent(self.selected))
        self._note(f"Running at full speed to {self.selected}'s next event (space or esc stops)…", notify=False)

    def action_until(self) -> None:
        now = self.frame.now

        def check(text: str) -> str | None:
            try:
                when = clock_near(text, now, self._world.start)
            except ValueError as e:
                return str(e)
            return None if when > now else f"{when:%a %H:%M} has passed (it is {now:%a %H:%M})"

        def chosen(text: str | None) -> None:
            if text:
                when = clock_near(text, self.frame.now, self._world.start)
                self._runner.send(RunUntil(when))
                self._note(f"Running at full speed until {when:%a %Y-%m-%d %H:%M} (space or esc stops).",
                           notify=False)

        self.push_screen(AskScreen("Run until", "Game time to pause at", placeholder="17:30, +2h or 2023-02-14 08:00",
                                   hint=f"It is {now:%a %Y-%m-%d %H:%M}. A breakpoint can pause it sooner.",
                                   check=check), chosen)

    def action_cancel(self) -> None:
        self._runner.send(Cancel())

    def action_breakpoints(self) -> None:
        self.push_screen(BreakpointsScreen(self._names, self.selected, lambda: self.frame.breakpoints,
                                           self._add_breakpoint, self._remove_breakpoint))

    def _add_breakpoint(self, kind: str, agent: str | None, text: str) -> str | None:
        """Send a new breakpoint to the worker; what is wrong with it, or None."""
        if kind == "call" and text and text not in TASKS:
            return f"no task {text!r}; tasks are: {', '.join(TASKS)}"
        try:
            bp = Breakpoint(self._next_breakpoint, kind, agent, text)
        except ValueError as e:
            return str(e)
        self._next_breakpoint += 1
        self._runner.send(Break(bp))
        self._note(f"Breakpoint set: {bp.describe()}", notify=False)
        return None

    def _remove_breakpoint(self, ident: int | None) -> None:
        self._runner.send(Unbreak(ident))
        self._note("Breakpoints cleared." if ident is None else f"Breakpoint #{ident} removed.", notify=False)

    def _breakpoint_hit(self, frame: Frame) -> None:
        for hit in frame.hits:
            self._note(hit.describe())
        agent = frame.hits[0].agent
        if agent in self._names and agent != self.selected:
            self._select(agent)  # the inspector and the map are ready on who did it

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        """The command palette (ctrl+p): every action of the app."""
        for action, title, what in (c for c in COMMANDS if self.check_action(c[0], ())):
            yield SystemCommand(title, what, lambda action=action: self.run_action(action))
        yield SystemCommand("Theme", "Change the colours: Textual's themes (kept in the config file)",
                            self.action_change_theme)

    def action_help(self) -> None:
        if isinstance(self.screen, HelpScreen):
            self.screen.dismiss()
        else:
            self.push_screen(HelpScreen())

    async def action_interrupt(self) -> None:
        """Ctrl-C: a quit, after which the command exits 130 (q exits 0)."""
        self.interrupted = True
        await self.action_quit()

    async def action_quit(self) -> None:
        """Stop now, cutting off the tick in flight and its model call (the save keeps its last whole
        tick); the app exits when the worker has returned."""
        if self._quitting:
            return
        self._quitting = True
        bar = self.query_one(ClockBar)
        bar.stopping = True
        bar.show(self.frame)
        self._runner.stop()
        if self._worker is None or self._worker.is_finished:
            self._finish()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker is self._worker and event.state == WorkerState.SUCCESS and self._quitting:
            self._finish()

    def _finish(self) -> None:
        log = self.query_one(EventLog)  # (kept for the next app: the widgets go with this one)
        self._log_kept, self._perceived_kept = log.kept, log.show_perceived
        self._close_sim()
        self.exit(self._reopen)

    def _close_sim(self) -> None:
        """Close the save, only once and only after the worker is done with it."""
        if self._reader is not None:  # (first: the writer's close, the last, then removes the log)
            self._reader.close()
            self._reader = None
        if self._closed or not self._runner.done.is_set():
            return
        self._closed = True
        self.sim.close()

    def on_unmount(self) -> None:
        # Any other way out (an error, a test ending): stop the worker, then close.
        self._runner.stop()
        if self._on_sigterm:
            asyncio.get_running_loop().remove_signal_handler(signal.SIGTERM)
            self._on_sigterm = False
        if self._worker is not None and self._worker.state != WorkerState.PENDING:
            self._runner.done.wait(SHUTDOWN_WAIT_SECONDS)
        else:
            self._runner.done.set()  # never started: nothing ticks
        self._close_sim()

