"""`smalltown replay SAVE`: a recorded run, scrubbed forward and back, without any model.

The town at any tick comes from `sim.history.History` (the nearest hourly snapshot brought
forward by the event log). The same map, agents list and event log as the live TUI draw it, from
frames made here instead of by a worker; the save is opened read-only and never changed.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding

from smalltown.sim.clock import clock_near
from smalltown.sim.history import History, StateAt
from smalltown.tui.replay_debug import ReplayDebugger
from smalltown.tui.screens.day import DayScreen
from smalltown.tui.screens.forms import AskScreen
from smalltown.tui.screens.help import REPLAY_SPEEDS
from smalltown.tui.palette import agent_colours
from smalltown.tui.widgets.panels import EventLog
from smalltown.tui.snapshot import AgentView, Frame, mark_of
from smalltown.tui.town import TownView
from smalltown.world.model import SLEEPING

CHANGED_TICKS = 180  # an object change stays marked this many ticks (half an hour of 10 s ticks)
PLAY_SPEEDS = REPLAY_SPEEDS  # ticks per step of playback (five steps a second)
LOG_LINES = 60  # events shown after a jump


def frame_at(history: History, state: StateAt, events: tuple = (), playing: bool = False,
             speed: int | None = None) -> Frame:
    """A picture of the recorded town, in the form the live TUI's widgets draw."""
    agents = []
    for name in history.names:
        a = state.agents[name]
        agents.append(AgentView(
            name, a.tile, a.action, a.doing, asleep=a.activity == SLEEPING and not a.walking,  # as Agent.asleep
            walking=a.walking, talking=a.talking,
            path=a.path,
            action_address=a.address, belief=mark_of(history.world.doctrines, state.levels.get(name, {}))))
    since = max(-1, state.tick - CHANGED_TICKS)
    changed = frozenset(e.data.get("address") for e in history.events(state.tick, since, kinds=["object"]))
    return Frame(state.tick, state.time, tuple(agents), events, 0, running=playing, speed=speed,
                 until=None, objects=state.objects, changed_objects=changed, save_path=str(history.path))


class ReplayApp(ReplayDebugger, TownView[None]):
    TITLE = "smalltown replay"
    BINDINGS = [
        # the footer fits 80 columns: a pair of keys is one hint, the other screens' keys are in help (?)
        Binding("full_stop", "seek(1)", "±1 tick", key_display=". ,"),
        Binding("comma", "seek(-1)", "-1 tick", key_display=",", show=False),
        Binding("greater_than_sign", "seek(60)", "±10 min", key_display="> <"),
        Binding("less_than_sign", "seek(-60)", "-10 min", key_display="<", show=False),
        Binding("right_curly_bracket", "seek(360)", "+1 h", key_display="}", show=False),
        Binding("left_curly_bracket", "seek(-360)", "-1 h", key_display="{", show=False),
        Binding("space", "play", "Play"),
        Binding("plus,equals_sign", "faster", "Faster", key_display="+", show=False),
        Binding("minus", "slower", "Slower", key_display="-", show=False),
        Binding("g", "goto", "Go to"),
        Binding("home", "seek_to(0)", "Start", show=False),
        Binding("end", "seek_end", "End", show=False),
        Binding("right_square_bracket", "select(1)", "Next agent", key_display="]", show=False),
        Binding("left_square_bracket", "select(-1)", "Prev agent", key_display="[", show=False),
        Binding("L", "belief_layer", "Belief", show=False),
        Binding("s", "step_agent", "Next event", show=False),
        Binding("b", "breakpoints", "Breaks", show=False),
        Binding("i", "inspect", "Inspect"),
        Binding("T", "town", "Town", show=False),  # only in a world with an economy (ReplayDebugger.check_action)…
        Binding("T", "nothing_to_show('town')", show=False),  # …elsewhere this one says why nothing opens
        Binding("c", "calls", "Calls", show=False),
        Binding("t", "timeline", "Timeline", show=False),
        Binding("d", "conversations", "Conversations", show=False),
        Binding("D", "day", "Day", show=False),
        Binding("m", "models", "Models", show=False),
        Binding("question_mark", "help", "Help", key_display="?"),
        Binding("q", "quit", "Quit"),
    ]

    def __init__(self, path: str | Path, at: int | None = None) -> None:
        super().__init__()
        self.history = History(path)
        self._colours = agent_colours(self.history.names)
        self.tick = self.history.last_tick if at is None else max(0, min(at, self.history.last_tick))
        self._names = self.history.names
        self.set_reactive(ReplayApp.selected, self._names[0] if self._names else None)
        self.playing = False
        self._speed = 0
        self.init_debugger()
        self.set_reactive(ReplayApp.frame, frame_at(self.history, self.history.state_at(self.tick),
                                                    speed=PLAY_SPEEDS[0] * 5))

    def compose(self) -> ComposeResult:
        yield from self.compose_town(self.history.world, self._colours, "replay", self.history.path.name)

    def on_mount(self) -> None:
        self.use_saved_theme()
        last = self.history.last_tick
        self.query_one(EventLog).note(
            f"Replay of {self.history.path.name}: {self.history.world.name}, ticks 0–{last} "
            f"({self.history.time_of(0):%a %H:%M} to {self.history.time_of(last):%a %H:%M}). "
            ", and . step, < and > 10 minutes, space plays, g goes to a time; i, c, t, d and b debug the "
            "run as it was at the time shown; ? lists every key. No model is used.")
        self._show(self.history.events(self.tick, limit=LOG_LINES))
        self.set_interval(0.2, self._play_step)

    def on_unmount(self) -> None:
        self.close_debugger()
        self.history.close()

    # --- moving through the run ---------------------------------------------------------------

    def seek(self, tick: int) -> bool:
        """Show the town at `tick`, or at the first tick before it where a breakpoint fires (True:
        it stopped there, playing stops, and the log says why); the log gets the events passed over
        (or the latest of a jump)."""
        tick = max(0, min(tick, self.history.last_tick))
        if tick == self.tick:
            return False
        stop = self.breakpoint_stop(tick)
        if stop is not None:
            tick = stop[0]
            self.playing = False
        if tick > self.tick and tick - self.tick <= 360:
            events = self.history.events(tick, self.tick)
        else:
            events = self.history.events(tick, limit=LOG_LINES)
            self.query_one(EventLog).note(f"— jumped to {self.history.time_of(tick):%a %H:%M:%S} (tick {tick}) —")
        self.tick = tick
        self._show(events)
        if stop is not None:
            self.breakpoint_hit(stop[1])
        return stop is not None

    def _show(self, events: list) -> None:
        speed = PLAY_SPEEDS[self._speed] * 5  # ticks a second when playing
        self.frame = frame_at(self.history, self.history.state_at(self.tick), tuple(events), self.playing, speed)

    def action_seek(self, ticks: int) -> None:
        self.seek(self.tick + ticks)

    def action_seek_to(self, tick: int) -> None:
        self.seek(tick)

    def action_seek_end(self) -> None:
        self.seek(self.history.last_tick)

    def action_play(self) -> None:
        self.playing = not self.playing
        if self.playing and self.tick >= self.history.last_tick:
            self.playing = False
            self.query_one(EventLog).note("At the end of the run.")
        self._show([])

    def action_faster(self) -> None:
        self._speed = min(self._speed + 1, len(PLAY_SPEEDS) - 1)
        self._show([])

    def action_slower(self) -> None:
        self._speed = max(self._speed - 1, 0)
        self._show([])

    def _play_step(self) -> None:
        if not self.playing:
            return
        if self.tick >= self.history.last_tick:
            self.playing = False
            self._show([])
            return
        self.seek(self.tick + PLAY_SPEEDS[self._speed])

    def action_goto(self) -> None:
        start, end = self.history.time_of(0), self.history.time_of(self.history.last_tick)

        def parse(text: str) -> datetime:
            """As the live TUI reads it ("day 2 9:00" from the world's first day, `start`); a bare
            "9:00" past the run's end is the last one that happened."""
            now = self.history.time_of(self.tick)
            when = clock_near(text, now, start)
            return when if when <= end else clock_near(text, now, start, last=True)

        def check(text: str) -> str | None:
            try:
                when = parse(text)
            except ValueError as e:
                return str(e)
            if not start <= when <= end:
                return f"the run goes from {start:%a %H:%M} to {end:%a %H:%M}"
            return None

        def chosen(text: str | None) -> None:
            if text:
                self.seek(self.history.tick_of(parse(text)))

        self.push_screen(AskScreen("Go to", "Game time", placeholder="9:00, +2h, 2023-02-13 12:00",
                                   hint=f"The run goes from {start:%a %Y-%m-%d %H:%M} to {end:%a %Y-%m-%d %H:%M}.",
                                   check=check), chosen)

    def action_day(self) -> None:
        """The day at a glance; a cell picked goes there, its agent selected."""
        def picked(choice: tuple[str, datetime] | None) -> None:
            if choice:
                self._select(choice[0])
                self.seek(self.history.tick_of(choice[1]))

        read = lambda day: self.history.reader.day(day, self.history.world.gatherings)  # noqa: E731
        events = lambda kinds: self.history.reader.events(None, kinds)  # noqa: E731
        self.push_screen(DayScreen(read, self._names, self._colours, self.history.time_of(self.tick),
                                   self.selected, "goes there", events), picked)


def run_replay(path: str | Path, at: int | None = None) -> None:
    ReplayApp(path, at).run()
