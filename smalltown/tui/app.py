"""The smalltown TUI: the town's map, its agents and its events, live.

Threads: a Textual thread worker runs `SimRunner.run`, the only code that calls `sim.step()`.
The interface sends it commands (`SimRunner.send`) and draws the `Frame`s it posts back as
`FrameReady` messages; it never reads or changes the simulation itself. `sim.close()` is called
once the worker has returned.
"""

from __future__ import annotations

import time
from datetime import datetime

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Container
from textual.message import Message
from textual.widgets import Footer
from textual.worker import Worker, WorkerState

from smalltown.sim.simulation import Simulation
from smalltown.tui.calls import CallsScreen
from smalltown.tui.help import HelpScreen
from smalltown.tui.inspector import InspectorScreen
from smalltown.tui.map_view import MapView
from smalltown.tui.palette import agent_colours
from smalltown.tui.panels import AgentsPanel, ClockBar, EventLog
from smalltown.tui.reader import SaveReader
from smalltown.tui.runner import SimRunner
from smalltown.tui.snapshot import Frame
from smalltown.tui.timeline import DialogueScreen, TimelineScreen

SHUTDOWN_WAIT_SECONDS = 120
SCREEN_RELOAD_SECONDS = 0.5  # an open debugger screen re-reads the save at most this often  # how long an exit waits for a slow tick (a model call) to finish


class FrameReady(Message):
    """Posted from the worker thread: a new picture of the town."""

    def __init__(self, frame: Frame) -> None:
        super().__init__()
        self.frame = frame


class SmalltownApp(App[None]):
    TITLE = "smalltown"
    ENABLE_COMMAND_PALETTE = False  # no commands registered there yet; keeps the footer clean
    # Narrow terminals stack the log under map and agents; wide ones give the side panels a column.
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (140, "-wide")]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (40, "-tall")]  # a taller log when there is room
    CSS = """
    #body { layout: grid; grid-size: 2 2; grid-columns: 1fr 30; grid-rows: 1fr 8; height: 1fr; }
    #map { background: #101010; }
    #agents { border-left: vkey $panel-lighten-2; border-top: hkey $panel-lighten-2;
              border-title-color: $text-muted; padding: 0 0 0 1; }
    #log { column-span: 2; border-top: hkey $panel-lighten-2; border-title-color: $text-muted;
           padding: 0 1; overflow-x: hidden; scrollbar-gutter: stable; }
    Screen.-narrow.-tall #body { grid-rows: 1fr 14; }
    Screen.-wide #body { grid-columns: 1fr 64; grid-rows: auto 1fr; }
    Screen.-wide #agents { height: auto; max-height: 50vh; }
    Screen.-wide #map { row-span: 2; }
    Screen.-wide #log { column-span: 1; border-left: vkey $panel-lighten-2; }
    #agents, #log { background: $background; scrollbar-background: $background; }
    """
    BINDINGS = [
        Binding("space", "toggle", "Run/Pause", priority=True),
        Binding("n", "step", "Step", priority=True),
        Binding("plus,equals_sign", "faster", "Faster", key_display="+", priority=True),
        Binding("minus", "slower", "Slower", key_display="-", priority=True),
        Binding("p", "perceived", "Percepts", show=False, priority=True),
        Binding("right_square_bracket", "select(1)", "Next agent", key_display="]", show=False, priority=True),
        Binding("left_square_bracket", "select(-1)", "Prev agent", key_display="[", show=False, priority=True),
        Binding("f", "follow", "Follow", show=False, priority=True),
        # not priority: an open screen's own keys come first
        Binding("i", "inspect", "Inspect"),
        Binding("c", "calls", "Calls", show=False),
        Binding("t", "timeline", "Timeline", show=False),
        Binding("d", "dialogue", "Dialogue", show=False),
        Binding("question_mark", "help", "Help", key_display="?", priority=True),
        Binding("q", "quit", "Quit", priority=True),
    ]

    def __init__(self, sim: Simulation, until: datetime | None = None,
                 start_paused: bool = False, notice: str | None = None) -> None:
        super().__init__()
        self.sim = sim
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
        self._tilemap = sim.world.map
        self._backend = sim.backend.name
        self._save_name = sim.save.path.name
        self._names = [a.name for a in self._frame.agents]
        self._reader: SaveReader | None = None
        self._reloaded = 0.0
        self.selected: str | None = self._names[0] if self._names else None  # the agent under the lens
        self.following = False

    @property
    def frame(self) -> Frame:
        """The latest frame drawn."""
        return self._frame

    def compose(self) -> ComposeResult:
        yield ClockBar(self._backend, self._save_name)
        with Container(id="body"):
            yield MapView(self._tilemap, self._colours, id="map")
            yield AgentsPanel(self._colours, id="agents")
            yield EventLog(self._colours, id="log")
        yield Footer()

    def on_mount(self) -> None:
        log = self.query_one(EventLog)
        log.note(f"{self._world_name}: {len(self._frame.agents)} agents. "
                 "space runs/pauses, n steps, ? lists the keys.")
        if self._notice:
            log.note(self._notice)
        self._draw(self._frame)
        self._worker = self.run_worker(self._runner.run, name="simulation", group="simulation",
                                       thread=True, exit_on_error=True)

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

    def _draw(self, frame: Frame) -> None:
        self.query_one(ClockBar).show(frame)
        view = self.query_one(MapView)
        view.selected = self.selected
        view.show_agents(frame.agents)
        if self.following and self.selected:
            view.follow(self.selected)
        panel = self.query_one(AgentsPanel)
        panel.selected = self.selected
        panel.show(frame.agents)
        self.query_one(EventLog).add_frame(frame)

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

    def action_select(self, step: int) -> None:
        """Put the next (or previous) agent under the lens: marked on the map and in the list."""
        if not self._names:
            return
        i = self._names.index(self.selected) if self.selected in self._names else -1
        self.selected = self._names[(i + step) % len(self._names)]
        self.query_one(MapView).select(self.selected)
        self.query_one(AgentsPanel).select(self.selected)
        if self.following:
            self.query_one(MapView).follow(self.selected)
        self.query_one(EventLog).note(f"Selected {self.selected}.")

    def action_follow(self) -> None:
        """Keep the selected agent in the middle of the map as it walks."""
        self.following = not self.following
        if self.following and self.selected:
            self.query_one(MapView).follow(self.selected)
        self.query_one(EventLog).note(f"Following {self.selected}." if self.following else "Not following.")

    def action_help(self) -> None:
        if isinstance(self.screen, HelpScreen):
            self.screen.dismiss()
        else:
            self.push_screen(HelpScreen())

    async def action_quit(self) -> None:
        """Stop after the tick in flight; the app exits when the worker has returned."""
        if self._quitting:
            return
        self._quitting = True
        bar = self.query_one(ClockBar)
        bar.stopping = True
        bar.show(self._frame)
        self._runner.send("quit")
        if self._worker is None or self._worker.is_finished:
            self._finish()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker is self._worker and event.state == WorkerState.SUCCESS and self._quitting:
            self._finish()

    def _finish(self) -> None:
        self._close_sim()
        self.exit()

    def _close_sim(self) -> None:
        """Close the save, only once and only after the worker is done with it."""
        if self._closed or not self._runner.done.is_set():
            return
        self._closed = True
        self.sim.close()

    def on_unmount(self) -> None:
        if self._reader is not None:
            self._reader.close()
        # Any other way out (ctrl+c, an error, a test ending): stop the worker, then close.
        self._runner.send("quit")
        if self._worker is not None and self._worker.state != WorkerState.PENDING:
            self._runner.done.wait(SHUTDOWN_WAIT_SECONDS)
        else:
            self._runner.done.set()  # never started: nothing ticks
        self._close_sim()


def run_tui(sim: Simulation, until: datetime | None = None, notice: str | None = None) -> None:
    """Open the TUI on a simulation, running; returns when the user quits (the sim is closed)."""
    SmalltownApp(sim, until=until, notice=notice).run()
