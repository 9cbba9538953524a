"""The town's main layout, shared by the live TUI and the replay: the clock bar, the map with a
line saying what is under its cursor, the agents list and the event log; how a `Frame` is drawn
on them, and picking an agent (keys, a click in the list, a click on the map).

What is shown is two reactive attributes, as Textual's own apps do: `frame` (the town at one
tick) and `selected` (the agent under the lens). Setting one draws it; nothing else draws."""

from __future__ import annotations

from typing import Sequence, cast

from rich.segment import Segment
from rich.text import Text
from textual.app import App, ComposeResult, ReturnType
from textual.color import Color
from textual.containers import Container, Vertical
from textual.filter import LineFilter
from textual.reactive import var
from textual.theme import Theme
from textual.widgets import Footer, Static

from smalltown.shown import drop_unshown
from smalltown.tui.themes import remember_theme, saved_theme
from smalltown.tui.widgets.map_view import MapView
from smalltown.tui.widgets.panels import AgentsPanel, ClockBar, EventLog
from smalltown.tui.snapshot import Frame
from smalltown.world.model import World

# What a key says when its screen has nothing to show in this world (its own binding is off: a
# second binding of the key, after it, comes here)
NOTHING_TO_SHOW = {
    "town": "T: this world has no economy (no [economy] in its file), so no town's goods to show.",
}

WHERE_HINT = Text("click a tile or shift+arrows: what is there", "dim")  # (fits an 80-column map)


class NoEscapes(LineFilter):
    """The last guard between the save and the terminal: a control character that reached a
    drawn line (text put in a widget without `shown`) is dropped, so no escape sequence in a
    save or an answer is ever written to the terminal. Such characters take no cell: the line's
    width is unchanged."""

    def apply(self, segments: list[Segment], background: Color) -> list[Segment]:
        line = "".join(s.text for s in segments)
        if drop_unshown(line) == line:
            return segments  # nearly always: one scan of the line
        return [Segment(drop_unshown(s.text), s.style, s.control) for s in segments]


NO_ESCAPES = NoEscapes()  # one instance: strips cache what a filter made of them


class TownView(App[ReturnType]):
    """An app showing the town. Subclasses set `frame` and `selected` (before mounting, with
    `set_reactive`: the widgets are not there yet) and `following`."""

    CSS_PATH = "town.tcss"  # beside this module, and beside its subclasses' (app.py, replay.py)
    # Narrow terminals stack the log under map and agents; wide ones give the side panels a column.
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (140, "-wide")]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (40, "-tall")]  # a taller log when there is room

    # Each setting draws, also of an equal value: a frame says what is new since the last (its
    # events), and selecting the selected agent again says so in the log, as it always did.
    frame: var[Frame] = var(cast(Frame, None), init=False, always_update=True)  # the town shown
    selected: var[str | None] = var(None, init=False, always_update=True)  # the agent under the lens
    following = False  # the map keeps the selected agent in its middle
    _names: list[str] = []  # the agents, in the world file's order

    def get_line_filters(self) -> Sequence[LineFilter]:
        return [*super().get_line_filters(), NO_ESCAPES]

    def compose_town(self, world: World, colours: dict[str, str], backend: str, save_name: str) -> ComposeResult:
        yield ClockBar(backend, save_name)
        with Container(id="body"):
            with Vertical(id="mapbox"):
                yield MapView(world, colours, id="map")
                yield Static(WHERE_HINT, id="where")
            yield AgentsPanel(colours, id="agents")
            yield EventLog(colours, id="log")
        yield Footer(compact=True)

    def watch_frame(self, frame: Frame) -> None:
        """Draw a frame on the clock bar, the map, the agents list and the event log."""
        self.query_one(ClockBar).show(frame)
        view = self.query_one(MapView)
        view.selected = self.selected
        view.show(frame.agents, frame.objects, frame.changed_objects)
        if self.following and self.selected:
            view.follow(self.selected)
        if view.cursor is not None:
            self.query_one("#where", Static).update(view.describe(view.cursor))
        panel = self.query_one(AgentsPanel)
        panel.selected = self.selected
        panel.show(frame.agents)
        self.query_one(EventLog).add_frame(frame)

    def use_saved_theme(self) -> None:
        """Open in the theme the config file names (Textual's own, else a note why not), and keep
        the one the user picks in the palette there."""
        name, problem = saved_theme()
        if name and name in self.available_themes:
            self.theme = name
        elif name:
            problem = f"theme {name!r} in the config file is not one of Textual's: {', '.join(self.available_themes)}"
        if problem:
            self.notify(problem, severity="warning", timeout=10, markup=False)
        self._theme_kept = self.theme
        self.theme_changed_signal.subscribe(self, self._theme_chosen)

    def _theme_chosen(self, theme: Theme) -> None:
        if theme.name != self._theme_kept:
            self._theme_kept = theme.name
            try:
                remember_theme(theme.name)
            except OSError as e:  # a read-only home: the theme is used, not kept
                self.notify(f"The theme could not be kept in the config file: {e}", severity="warning",
                            markup=False)

    def action_nothing_to_show(self, what: str) -> None:
        self.notify(NOTHING_TO_SHOW[what], timeout=5, markup=False)

    def action_belief_layer(self) -> None:
        """Colour the agents on the map by belief level (mind/belief.py; in replay, as held at the tick shown), or by their own colours again."""
        view = self.query_one(MapView)
        view.show_belief(not view.belief_layer)
        self.query_one(EventLog).note("Colouring agents by belief level: grey none, yellow a lower level, red the top."
                                      if view.belief_layer else "Colouring agents by their own colours.")

    def action_select(self, step: int) -> None:
        """Put the next (or previous) agent under the lens."""
        if not self._names:
            return
        i = self._names.index(self.selected) if self.selected in self._names else -1
        self._select(self._names[(i + step) % len(self._names)])

    def _select(self, name: str) -> None:
        """Put an agent under the lens (the keys, the list, the map and a breakpoint's hit all
        come here)."""
        self.selected = name

    def watch_selected(self, name: str | None) -> None:
        """Mark the agent on the map and in the list."""
        self.query_one(MapView).select(name)
        self.query_one(AgentsPanel).select(name)
        if self.following and name:
            self.query_one(MapView).follow(name)
        self.query_one(EventLog).note(f"Selected {name}.")

    def on_agents_panel_picked(self, message: AgentsPanel.Picked) -> None:
        self._select(message.name)

    def on_map_view_cursor_moved(self, message: MapView.CursorMoved) -> None:
        where = self.query_one("#where", Static)
        if message.tile is None:
            where.update(WHERE_HINT)
            return
        where.update(self.query_one(MapView).describe(message.tile))
        if message.agents and self.selected not in message.agents:
            self._select(message.agents[0])
