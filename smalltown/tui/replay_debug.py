"""The debugger in replay: the live TUI's screens (inspector, model calls, timeline, conversations,
breakpoints, help) on the recorded run as it was at the scrubbed tick, read-only.

Each screen gets a `SaveReader` bounded to the tick shown when it opens; while one is on top the
replay's own keys (moving through time, playing) are off, so what it shows stays the time the
town behind it shows. Breakpoints are checked against the record (`History.first_hits`): playing
or moving forward stops at the first tick where one fires, as a running town pauses there.
"""

from __future__ import annotations

from datetime import timedelta

from typing import Any

from smalltown.llm.tasks import TASKS
from smalltown.sim.breakpoints import Breakpoint, Hit
from smalltown.sim.history import History
from smalltown.tui.reader import SaveReader, Until
from smalltown.tui.screens.calls import CallsScreen
from smalltown.tui.screens.forms import BreakpointsScreen
from smalltown.tui.screens.help import REPLAY_KEYS, HelpScreen
from smalltown.tui.screens.inspector import InspectorScreen
from smalltown.tui.screens.models import ModelsScreen
from smalltown.tui.screens.timeline import ConversationsScreen, TimelineScreen
from smalltown.tui.screens.town_goods import TownScreen
from smalltown.tui.widgets.panels import EventLog

# what the replay's keys do that a screen on top must not (it shows the tick it opened at)
FREE_ON_SCREENS = frozenset({"quit", "help", "command_palette"})


def game_span(delta: timedelta) -> str:
    """ "6h12m", "3m", "40s": game time passed."""
    seconds = int(delta.total_seconds())
    hours, rest = divmod(seconds, 3600)
    if hours:
        return f"{hours}h{rest // 60:02d}m"
    return f"{rest // 60}m" if rest >= 60 else f"{rest}s"


class ReplayDebugger:
    """The replay app's debugger keys, mixed into `ReplayApp` (an App), which has the history, the
    tick shown, the selected agent and `seek` (True when a breakpoint stopped it short)."""

    history: History
    tick: int
    playing: bool
    selected: str | None
    _names: list[str]
    screen: Any
    screen_stack: list

    def init_debugger(self) -> None:
        self._reader: SaveReader | None = None
        self.breakpoints: dict[int, Breakpoint] = {}
        self._next_breakpoint = 1

    def close_debugger(self) -> None:
        if self._reader is not None:
            self._reader.close()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """With a screen on top only quitting and help: the screen shows the tick it opened at. The
        town screen's key only in a world with an economy."""
        if action == "town" and self.history.world.economy is None:
            return False
        return len(self.screen_stack) == 1 or action in FREE_ON_SCREENS

    # --- the screens, at the tick shown -------------------------------------------------------

    def save_reader(self) -> SaveReader:
        """A reader of the whole recorded run, open until the replay ends (screens share it)."""
        if self._reader is None:
            self._reader = SaveReader(self.history.path)
        return self._reader

    def reader_now(self) -> SaveReader:
        """A reader of the save as it was at the end of the tick shown."""
        until = Until(self.tick, self.history.time_of(self.tick), self.history.world.step_seconds)
        return self.save_reader().bounded(until)

    def _open(self, screen) -> None:
        if self.playing:
            self.action_play()  # the screen shows one time: the town behind it stays there
        self.push_screen(screen)

    def action_inspect(self) -> None:
        if self.selected:
            self._open(InspectorScreen(self.reader_now(), self.selected))

    def action_calls(self) -> None:
        self._open(CallsScreen(self.reader_now(), self.selected))

    def action_timeline(self) -> None:
        self._open(TimelineScreen(self.reader_now(), self.selected))

    def action_conversations(self) -> None:
        self._open(ConversationsScreen(self.reader_now(), self.selected))

    def action_town(self) -> None:
        self._open(TownScreen(self.reader_now(), None))

    def action_models(self) -> None:
        """Who answered the recorded run (its whole call log), and how to get a model."""
        self._open(ModelsScreen(self.save_reader(), None))

    def action_help(self) -> None:
        if isinstance(self.screen, HelpScreen):
            self.screen.dismiss()
        else:
            self.push_screen(HelpScreen(REPLAY_KEYS, "smalltown replay — keys"))

    # --- breakpoints ----------------------------------------------------------------------------

    def action_breakpoints(self) -> None:
        self._open(BreakpointsScreen(self._names, self.selected, lambda: tuple(self.breakpoints.values()),
                                     self._add_breakpoint, self._remove_breakpoint))

    def _add_breakpoint(self, kind: str, agent: str | None, text: str) -> str | None:
        """A new breakpoint; what is wrong with it, or None."""
        tasks = sorted({*TASKS, *self.history.reader.call_tasks()})
        if kind == "call" and text and text not in tasks:
            return f"no task {text!r}; tasks are: {', '.join(tasks)}"
        try:
            bp = Breakpoint(self._next_breakpoint, kind, agent, text)
        except ValueError as e:
            return str(e)
        self._next_breakpoint += 1
        self.breakpoints[bp.id] = bp
        self._log(f"Breakpoint set: {bp.describe()}")
        self._redraw_breakpoints()
        return None

    def _remove_breakpoint(self, ident: int | None) -> None:
        if ident is None:
            self.breakpoints.clear()
        else:
            self.breakpoints.pop(ident, None)
        self._log("Breakpoints cleared." if ident is None else f"Breakpoint #{ident} removed.")
        self._redraw_breakpoints()

    def _redraw_breakpoints(self) -> None:
        if isinstance(self.screen, BreakpointsScreen):
            self.screen.reload()

    def breakpoint_stop(self, tick: int) -> tuple[int, list[Hit]] | None:
        """Where moving forward from the tick shown to `tick` stops: the first tick a breakpoint
        fires at, with its hits; None to go all the way."""
        if not self.breakpoints or tick <= self.tick:
            return None
        return self.history.first_hits(self.breakpoints.values(), self.tick, tick)

    def breakpoint_hit(self, hits: list[Hit]) -> None:
        """Stopped by breakpoints: say why, and put who did it under the lens."""
        for hit in hits:
            self._log(hit.describe())
        agent = hits[0].agent
        if agent in self._names and agent != self.selected:
            self._select(agent)

    def action_step_agent(self) -> None:
        """To the selected agent's next event (a breakpoint that fires first stops it sooner)."""
        agent = self.selected
        if not agent:
            return
        found = self.history.first_hits([Breakpoint(0, "event", agent)], self.tick, self.history.last_tick)
        if found is None:
            self._log(f"{agent} does nothing more in this run.")
            return
        tick, hits = found
        start = self.history.time_of(self.tick)
        if self.seek(tick):
            return  # a breakpoint said why
        when = self.history.time_of(tick)
        self._log(f"{agent}'s next event: {hits[0].detail} at {when:%H:%M:%S}, "
                  f"after {game_span(when - start)} of game time.")

    def _log(self, message: str) -> None:
        self.query_one(EventLog).note(message)
