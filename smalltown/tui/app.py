"""The smalltown TUI: the town's map, its agents and its events, live; a debugger of its days.

Threads: a Textual thread worker runs `SimRunner.run`, the only code that calls `sim.step()`.
The interface sends it commands (`SimRunner.send`) and draws the `Frame`s it posts back as
`FrameReady` messages; it never reads or changes the simulation itself. Interventions (whisper,
interview, edit an object, save) are commands too, run by the worker between ticks, and their
results come back as `Replied` messages. `sim.close()` is called once the worker has returned.

Opening another save or world, or continuing in a copy ("save as"), ends this app with the file
to open as its result; `run_tui` then opens it and starts a new app.
"""

from __future__ import annotations

import asyncio
import re
import signal
import threading
import time
from datetime import datetime
from pathlib import Path
from typing import Any, Callable, Iterable

from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding
from textual.css.query import NoMatches
from textual.message import Message
from textual.screen import Screen
from textual.worker import Worker, WorkerState

from smalltown.cli.when import clock_near
from smalltown.llm.tasks import TASKS
from smalltown.shown import shown
from smalltown.sim.breakpoints import Breakpoint
from smalltown.sim.simulation import Simulation
from smalltown.store.save import is_save
from smalltown.tui.calls import CallsScreen
from smalltown.tui.forms import AskScreen, BreakpointsScreen, EditObjectScreen
from smalltown.tui.help import HelpScreen
from smalltown.tui.inspector import InspectorScreen
from smalltown.tui.interview import InterviewScreen
from smalltown.tui.map_view import MapView
from smalltown.tui.palette import agent_colours
from smalltown.tui.panels import ClockBar, EventLog
from smalltown.tui.reader import SaveReader
from smalltown.tui.runner import SimRunner
from smalltown.tui.snapshot import Frame
from smalltown.tui.timeline import DialogueScreen, TimelineScreen
from smalltown.tui.town import TownView

SHUTDOWN_WAIT_SECONDS = 10  # how long an exit waits for the worker (a stop cuts off its model call at once)
SCREEN_RELOAD_SECONDS = 0.5  # an open debugger screen re-reads the save at most this often
BUSY_SHOWN_AFTER = 0.25  # seconds a tick runs before the "thinking" indicator shows
class FrameReady(Message):
    """Posted from the worker thread: a new picture of the town."""

    def __init__(self, frame: Frame) -> None:
        super().__init__()
        self.frame = frame


class Replied(Message):
    """Posted from the worker thread: an intervention's result, for the callback that asked."""

    def __init__(self, callback: Callable[[Any], None], result: Any) -> None:
        super().__init__()
        self.callback = callback
        self.result = result


# (action, title, what it does): the command palette lists every one of them
COMMANDS: tuple[tuple[str, str, str], ...] = (
    ("toggle", "Run / pause", "Start or stop the town's clock (space)"),
    ("step", "Step one tick", "Advance one tick and pause (n)"),
    ("step_agent", "Step to the selected agent's next event", "Run until it does something (s)"),
    ("until", "Run until a game time…", "e.g. 17:30, +2h, 2023-02-14 08:00 (g)"),
    ("faster", "Faster", "More ticks a second (+)"),
    ("slower", "Slower", "Fewer ticks a second (-)"),
    ("breakpoints", "Breakpoints…", "Pause when an agent talks, reflects, re-plans, calls the model, "
                                    "enters a place, or remembers a text (b)"),
    ("inspect", "Inspect the selected agent", "Summary, plan, memories, retrievals (i)"),
    ("calls", "Model calls", "Every call with its prompt and answers (c)"),
    ("timeline", "Timeline", "Events, filterable by agent and kind (t)"),
    ("dialogue", "Conversations", "Speaker by speaker (d)"),
    ("whisper", "Whisper to the selected agent…", "An inner voice it takes as its own thought (w)"),
    ("interview", "Interview the selected agent…", "Ask in a persona; it remembers (a)"),
    ("edit_object", "Edit an object's state…", "The object under the cursor, or any (e)"),
    ("save", "Save", "Take a snapshot and fold the committed ticks into the save file (ctrl+s)"),
    ("rewind", "Rewind to an earlier time…", "A new save as this one was then; the run so far is kept (r)"),
    ("save_as", "Save as…", "Copy the save to a new file and go on in the copy (S)"),
    ("fork", "Fork to a new file…", "Copy the save as it is now; this run goes on here (F)"),
    ("open", "Open a save or world…", "Close this run and open another (O)"),
    ("perceived", "Show / hide perceived events", "In the event log (p)"),
    ("follow", "Follow the selected agent", "Keep it in the middle of the map (f)"),
    ("select(1)", "Select the next agent", "(])"),
    ("select(-1)", "Select the previous agent", "([)"),
    ("help", "Help", "Every key (?)"),
    ("quit", "Quit", "Stop now (the tick in flight is dropped) and close the save (q)"),
)


class SmalltownApp(TownView[Path | None]):  # its result: a file to open next, or None
    TITLE = "smalltown"
    BINDINGS = [
        # not priority: a text field or an open screen gets its keys first
        Binding("space", "toggle", "Run/Pause"),
        Binding("n", "step", "Step"),
        Binding("s", "step_agent", "Agent step"),
        Binding("g", "until", "Until", show=False),
        Binding("plus,equals_sign", "faster", "Faster", key_display="+", show=False),
        Binding("minus", "slower", "Slower", key_display="-", show=False),
        Binding("b", "breakpoints", "Breaks"),
        Binding("p", "perceived", "Percepts", show=False),
        Binding("right_square_bracket", "select(1)", "Next agent", key_display="]", show=False),
        Binding("left_square_bracket", "select(-1)", "Prev agent", key_display="[", show=False),
        Binding("f", "follow", "Follow", show=False),
        Binding("i", "inspect", "Inspect"),
        Binding("c", "calls", "Calls", show=False),
        Binding("t", "timeline", "Timeline", show=False),
        Binding("d", "dialogue", "Dialogue", show=False),
        Binding("w", "whisper", "Whisper", show=False),
        Binding("a", "interview", "Interview", show=False),
        Binding("e", "edit_object", "Edit object", show=False),
        Binding("ctrl+s", "save", "Save", show=False),
        Binding("S", "save_as", "Save as", show=False),
        Binding("F", "fork", "Fork", show=False),
        Binding("O", "open", "Open", show=False),
        Binding("r", "rewind", "Rewind", show=False),
        Binding("question_mark", "help", "Help", key_display="?"),
        Binding("q", "quit", "Quit"),
    ]

    def __init__(self, sim: Simulation, until: datetime | None = None,
                 start_paused: bool = False, notice: str | None = None, can_open: bool = True) -> None:
        super().__init__()
        self.sim = sim
        self._can_open = can_open  # run_tui can open another file when this app ends
        self._notice = notice  # e.g. that no model is configured, and how to add one
        self._colours = agent_colours([a.name for a in sim.agents])
        self._runner = SimRunner(sim, self._publish, until=until, paused=start_paused)
        # The worker has not started: reading the sim here is safe, and gives a full first picture.
        self._frame = self._runner.frame()
        self._worker: Worker[None] | None = None
        self._quitting = False
        self._closed = False
        # Static world data, read once here; everything that changes comes in frames.
        self._world_name = sim.world.name
        self._world = sim.world
        self._backend = sim.backend.name
        self._save_name = sim.save.path.name
        self._names = [a.name for a in self._frame.agents]
        self._reader: SaveReader | None = None
        self._reloaded = 0.0
        self.selected: str | None = self._names[0] if self._names else None  # the agent under the lens
        self.following = False
        self._next_breakpoint = 1
        self._reopen: Path | None = None  # what to open when this app ends
        self._busy_shown = ""
        self.terminated = False  # ended by SIGTERM
        self._on_sigterm = False  # our SIGTERM handler is in place (removed on unmount)

    @property
    def frame(self) -> Frame:
        """The latest frame drawn."""
        return self._frame

    def compose(self) -> ComposeResult:
        yield from self.compose_town(self._world, self._colours, self._backend, self._save_name)

    def on_mount(self) -> None:
        log = self.query_one(EventLog)
        log.note(f"{self._world_name}: {len(self._frame.agents)} agents. "
                 "space runs/pauses, n steps, ? lists the keys.")
        if self._notice:
            log.note(self._notice)
        self._draw(self._frame)
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
        self._frame = message.frame
        self._draw(message.frame)
        if message.frame.hits:
            self._breakpoint_hit(message.frame)
        reload = getattr(self.screen, "reload", None)
        now = time.monotonic()
        if reload is not None and now - self._reloaded >= SCREEN_RELOAD_SECONDS:
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

    def action_timeline(self) -> None:
        self.push_screen(TimelineScreen(self._save_reader(), self.selected))

    def action_dialogue(self) -> None:
        self.push_screen(DialogueScreen(self._save_reader(), self.selected))

    # --- commands -----------------------------------------------------------------------------

    def action_toggle(self) -> None:
        self._runner.send("toggle")

    def action_step(self) -> None:
        self._runner.send("step")

    def action_faster(self) -> None:
        self._runner.send("faster")

    def action_slower(self) -> None:
        self._runner.send("slower")

    def action_perceived(self) -> None:
        log = self.query_one(EventLog)
        log.show_perceived = not log.show_perceived
        log.note("Showing perceived events." if log.show_perceived else "Hiding perceived events.")

    def action_follow(self) -> None:
        """Keep the selected agent in the middle of the map as it walks."""
        self.following = not self.following
        if self.following and self.selected:
            self.query_one(MapView).follow(self.selected)
        self.query_one(EventLog).note(f"Following {self.selected}." if self.following else "Not following.")

    # --- stepping and breakpoints -----------------------------------------------------------

    def _note(self, message: str, notify: bool = True) -> None:
        """A confirmation: in the log, and for a moment in the corner (on whatever screen). It
        may quote the save (names, states, errors): shown as text, never as markup."""
        self.query_one(EventLog).note(message)
        if notify:
            self.notify(shown(message), timeout=4, markup=False)

    def action_step_agent(self) -> None:
        if not self.selected:
            return
        self._runner.send("step_agent", self.selected)
        self._note(f"Running until {self.selected} does something…", notify=False)

    def action_until(self) -> None:
        now = self._frame.now

        def check(text: str) -> str | None:
            try:
                when = clock_near(text, now)
            except ValueError as e:
                return str(e)
            return None if when > now else f"{when:%a %H:%M} has passed (it is {now:%a %H:%M})"

        def chosen(text: str | None) -> None:
            if text:
                when = clock_near(text, self._frame.now)
                self._runner.send("until", when)
                self._note(f"Running until {when:%a %Y-%m-%d %H:%M}.", notify=False)

        self.push_screen(AskScreen("Run until", "Game time to pause at", placeholder="17:30, +2h or 2023-02-14 08:00",
                                   hint=f"It is {now:%a %Y-%m-%d %H:%M}. A breakpoint can pause it sooner.",
                                   check=check), chosen)

    def action_breakpoints(self) -> None:
        self.push_screen(BreakpointsScreen(self._names, self.selected, lambda: self._frame.breakpoints,
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
        self._runner.send("break", bp)
        self._note(f"Breakpoint set: {bp.describe()}", notify=False)
        return None

    def _remove_breakpoint(self, ident: int | None) -> None:
        self._runner.send("unbreak", ident)
        self._note("Breakpoints cleared." if ident is None else f"Breakpoint #{ident} removed.", notify=False)

    def _breakpoint_hit(self, frame: Frame) -> None:
        for hit in frame.hits:
            self._note(hit.describe())
        agent = frame.hits[0].agent
        if agent in self._names and agent != self.selected:
            self._select(agent)  # the inspector and the map are ready on who did it

    # --- interventions: commands to the worker, confirmed when it replies -----------------

    def _replier(self, callback: Callable[[Any], None]) -> Callable[[Any], None]:
        """A reply the worker calls on its own thread; the callback runs on the interface's."""
        def reply(result: Any) -> None:
            try:
                self.post_message(Replied(callback, result))
            except RuntimeError:
                pass  # the app is gone
        return reply

    def on_replied(self, message: Replied) -> None:
        message.callback(message.result)

    def _failed(self, what: str, result: Any) -> bool:
        if isinstance(result, Exception):
            self._note(f"{what} failed: {result}")
            self.bell()
            return True
        return False

    def action_whisper(self) -> None:
        name = self.selected
        if not name:
            return

        def done(memory: Any) -> None:
            if not self._failed("Whisper", memory):
                self._note(f"Whispered to {name}: memory #{memory.id} “{memory.description}”; "
                           f"{name.split()[0]} re-plans around it.")

        def chosen(text: str | None) -> None:
            if text:
                self._runner.send("whisper", name, text, self._replier(done))

        self.push_screen(AskScreen(f"Whisper to {name}", "The thought (it becomes the agent's own)",
                                   placeholder="You should throw a party tonight.",
                                   hint="Stored as a reflection; the rest of the day is planned again."), chosen)

    def action_interview(self) -> None:
        name = self.selected
        if not name:
            return

        def ask(question: str, persona: str, callback: Callable[[Any], None]) -> None:
            self._runner.send("interview", name, question, persona, self._replier(callback))

        self.push_screen(InterviewScreen(name, ask, self._colours.get(name, "white")))

    def action_edit_object(self) -> None:
        view = self.query_one(MapView)
        address = (view.object_at(view.cursor) if view.cursor is not None else None) or ""
        if not address and self.selected:  # what the selected agent is using or heading for
            address = next((a.action_address for a in self._frame.agents if a.name == self.selected), "") or ""

        def done(result: Any) -> None:
            if not self._failed("Edit", result):
                obj, state = result
                self._note(f"{obj.replace(':', ': ')} is now {state!r} (was {before.get(obj, '?')!r}); "
                           "agents who see it will notice.")

        before: dict[str, str] = {}

        def chosen(result: tuple[str, str] | None) -> None:
            if result:
                before.update(self._frame.objects)
                self._runner.send("edit_object", *result, self._replier(done))

        self.push_screen(EditObjectScreen(self._frame.objects, address), chosen)

    def action_save(self) -> None:
        def done(result: Any) -> None:
            if not self._failed("Save", result):
                tick, path = result
                self._note(f"Saved {path} at tick {tick}, with a snapshot to fork or rewind to "
                           "(every tick is committed as it runs).")

        self._runner.send("save", self._replier(done))

    def _ask_path(self, title: str, label: str, suggestion: Path, then: Callable[[Path], None],
                  must_exist: bool = False) -> None:
        def check(text: str) -> str | None:
            path = Path(text).expanduser()
            if must_exist:
                if not path.exists():
                    return f"{path}: no such file"
                if not (is_save(path) or path.suffix == ".toml"):
                    return f"{path}: neither a save (SQLite) nor a world (.toml)"
            elif path.exists():
                return f"{path} already exists: choose a new name"
            return None

        def chosen(text: str | None) -> None:
            if text:
                then(Path(text).expanduser())

        self.push_screen(AskScreen(title, label, value=str(suggestion), check=check), chosen)

    def _copy_name(self, word: str) -> Path:
        path = Path(self._frame.save_path or self._save_name)
        stem = re.sub(r"-(copy|fork|at-\d{4})\d*$", "", path.stem)
        for i in range(1, 1000):
            candidate = path.with_name(f"{stem}-{word}{i if i > 1 else ''}{path.suffix}")
            if not candidate.exists():
                return candidate
        return path.with_name(f"{stem}-{word}-{int(time.time())}{path.suffix}")

    def action_fork(self) -> None:
        def done(result: Any) -> None:
            if not self._failed("Fork", result):
                self._note(f"Forked at tick {self._frame.tick} to {result}; this run goes on in "
                           f"{Path(self._frame.save_path).name}. Open the fork with O.")

        self._ask_path("Fork to a new file", "The copy's file (the run goes on here)", self._copy_name("fork"),
                       lambda path: self._runner.send("copy", str(path), self._replier(done)))

    def action_save_as(self) -> None:
        if not self._can_open:
            self._note("Save as is not available here: use fork (F).")
            return

        def done(result: Any) -> None:
            if not self._failed("Save as", result):
                self._note(f"Saved as {result}; going on there.")
                self._open_after(Path(result))

        self._ask_path("Save as", "The new file (the run goes on there)", self._copy_name("copy"),
                       lambda path: self._runner.send("copy", str(path), self._replier(done)))

    def action_rewind(self) -> None:
        if not self._can_open:
            self._note("Rewinding is not available here: use smalltown fork.")
            return
        now = self._frame.now
        start = self._world.start

        def check(text: str) -> str | None:
            try:
                when = clock_near(text, now, start, last=True)
            except ValueError as e:
                return str(e)
            if not start <= when <= now:
                return f"the run goes from {start:%a %H:%M} to {now:%a %H:%M}"
            return None

        def done(result: Any) -> None:
            if not self._failed("Rewind", result):
                self._note(f"Rewound to {result.time:%a %H:%M} (tick {result.tick}, the latest snapshot "
                           f"by then) in {result.path.name}; the run until now stays in {result.source.name}.")
                self._open_after(Path(result.path))

        def chosen(text: str | None) -> None:
            if text:
                when = clock_near(text, now, start, last=True)
                to = self._copy_name(f"at-{when:%H%M}")
                self._runner.send("rewind", when, str(to), self._replier(done))

        self.push_screen(AskScreen("Rewind", "Back to game time", placeholder="9:00, -2h, 2023-02-13 09:00",
                                   hint="Opens a new save as the town was then (from the hourly snapshot at "
                                        "or before it); this run stays as it is.", check=check), chosen)

    def action_open(self) -> None:
        if not self._can_open:
            self._note("Opening another file is not available here.")
            return
        self._ask_path("Open a save or a world", "File (a save, or a world's .toml)",
                       Path("worlds/smallville.toml"), self._open_after, must_exist=True)

    def _open_after(self, path: Path) -> None:
        """End this app (saving as it does); run_tui opens `path`."""
        self._reopen = path
        self.run_worker(self.action_quit(), exclusive=False)

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        """The command palette (ctrl+p): every action of the app."""
        for action, title, what in COMMANDS:
            yield SystemCommand(title, what, lambda action=action: self.run_action(action))

    def action_help(self) -> None:
        if isinstance(self.screen, HelpScreen):
            self.screen.dismiss()
        else:
            self.push_screen(HelpScreen())

    async def action_quit(self) -> None:
        """Stop now, cutting off the tick in flight and its model call (the save stays at the last
        whole tick); the app exits when the worker has returned, within moments."""
        if self._quitting:
            return
        self._quitting = True
        bar = self.query_one(ClockBar)
        bar.stopping = True
        bar.show(self._frame)
        self._runner.stop()
        if self._worker is None or self._worker.is_finished:
            self._finish()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker is self._worker and event.state == WorkerState.SUCCESS and self._quitting:
            self._finish()

    def _finish(self) -> None:
        self._close_sim()
        self.exit(self._reopen)

    def _close_sim(self) -> None:
        """Close the save, only once and only after the worker is done with it."""
        if self._closed or not self._runner.done.is_set():
            return
        self._closed = True
        self.sim.close()

    def on_unmount(self) -> None:
        if self._reader is not None:
            self._reader.close()
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


def run_tui(sim: Simulation, until: datetime | None = None, notice: str | None = None,
            reopen: Callable[[Path], Simulation] | None = None) -> int:
    """Open the TUI on a simulation, running; returns when the user quits (the sim is closed),
    with the exit code: 0, or 143 when SIGTERM ended it. When the user opens another file (or
    goes on in a copy), `reopen` opens it and the TUI starts again on it."""
    while True:
        app = SmalltownApp(sim, until=until, notice=notice, can_open=reopen is not None)
        target = app.run()
        if app.terminated:
            return 143
        if target is None or reopen is None:
            return 0
        sim, until, notice = reopen(target), None, None
