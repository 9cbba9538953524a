"""The town map: the world's glyph rows, tinted by sector, with agents drawn over them, the
selected agent's way ahead, objects that changed lately, and a cursor that says what is where.

A Line-API `ScrollView`: each screen line is built from a cached `Strip` of its map row, so a tick
only rebuilds and repaints the rows where something drawn over the map came or went, however big
the map is.
"""

from __future__ import annotations

from collections import Counter

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from smalltown.shown import shown
from smalltown.tui.palette import (BELIEF_STYLES, CHANGED_STYLE, CROWD_STYLE, CURSOR_STYLE, PATH_GLYPH, TINTED,
                                   agent_glyph, on_colour, path_style, sector_hue, tile_background,
                                   tile_style, tint)
from smalltown.tui.snapshot import AgentView
from smalltown.world.model import Tile, World, pretty

Cell = tuple[str, Style]


def _base_cells(world: World) -> list[list[Cell]]:
    """Each tile's glyph and style. Objects take the background of what surrounds them, so a
    bench sits on grass and a bed on a floor; floors and grounds take their sector's tint."""
    tilemap = world.map
    rows, kinds = tilemap.rows, tilemap.kinds
    h, w = tilemap.height, tilemap.width
    sector_index = {name: i for i, name in enumerate(world.sectors)}
    sector_of = [sector_index[a.sector] for a in world.arenas]

    def kind(x: int, y: int) -> str:
        return kinds.get(rows[y][x], "?")

    cells: list[list[Cell]] = []
    for y in range(h):
        line: list[Cell] = []
        for x in range(w):
            k = kind(x, y)
            bg = None
            if k == "object":
                around = Counter(kind(nx, ny) for nx, ny in ((x - 1, y), (x + 1, y), (x, y - 1), (x, y + 1))
                                 if 0 <= nx < w and 0 <= ny < h and kind(nx, ny) not in ("object", "wall"))
                if around:
                    bg = tile_background(around.most_common(1)[0][0])
            arena = int(tilemap.arena_at[y, x])
            if arena >= 0 and k in TINTED:
                bg = tint(bg or tile_background(k), sector_hue(sector_of[arena]))
            line.append((shown(rows[y][x])[:1], tile_style(k, bg)))  # one visible cell, whatever the map says
        cells.append(line)
    return cells


def _strip(cells: list[Cell]) -> Strip:
    """Merge runs of equal style into one segment each: fewer segments, cheaper compositing."""
    segments: list[Segment] = []
    text, style = "", None
    for ch, st in cells:
        if st is style:  # styles are interned (palette), so identity is equality, and far cheaper
            text += ch
            continue
        if text:
            segments.append(Segment(text, style))
        text, style = ch, st
    if text:
        segments.append(Segment(text, style))
    return Strip(segments, len(cells))


SELECTED_STYLE = Style(reverse=True, bold=True, underline=True)


class MapView(ScrollView, can_focus=True):
    """Scrolls with the arrow keys, page keys and the mouse when the map is bigger than the view;
    centred when it is smaller. A click (or shift+arrows) puts the cursor on a tile; the app shows
    what is there."""

    DEFAULT_CSS = """
    MapView { scrollbar-size: 1 1; }
    """
    BINDINGS = [
        Binding("shift+left", "cursor(-1, 0)", "Cursor", show=False),
        Binding("shift+right", "cursor(1, 0)", "Cursor", show=False),
        Binding("shift+up", "cursor(0, -1)", "Cursor", show=False),
        Binding("shift+down", "cursor(0, 1)", "Cursor", show=False),
        Binding("escape", "hide_cursor", "Hide cursor", show=False),
    ]

    class CursorMoved(Message):
        """The cursor is on a new tile (None: hidden); `agents` are the names standing there."""

        def __init__(self, tile: Tile | None, agents: tuple[str, ...]) -> None:
            super().__init__()
            self.tile = tile
            self.agents = agents

    def __init__(self, world: World, colours: dict[str, str], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._world = world
        self._cells = _base_cells(world)
        self._base = [_strip(cells) for cells in self._cells]  # each row with nothing over it
        self._width, self._height = world.map.width, world.map.height
        self._colours = colours
        self._marker = {name: on_colour(c) for name, c in colours.items()}
        self._object_at: dict[Tile, str] = {t: o.address for o in world.objects.values() for t in o.tiles}
        self._overlay: dict[Tile, Cell] = {}
        self._marks: dict[int, list[tuple[int, Cell]]] = {}
        self._cache: dict[int, Strip] = {}  # map row -> strip with what is drawn over it
        self._agents: tuple[AgentView, ...] = ()
        self._changed: frozenset[str] = frozenset()
        self.objects: dict[str, str] = {o.address: o.initial_state for o in world.objects.values()}
        self.cursor: Tile | None = None
        self.virtual_size = Size(self._width, self._height)
        self._opened = False  # the first view placed (on a big map the top-left corner may show no one)

    # --- updates from frames ----------------------------------------------------------------

    selected: str | None = None  # the agent drawn in reverse, its path drawn ahead of it
    belief_layer = False  # agents coloured by belief level (BELIEF_STYLES) instead of their own colours

    def show_belief(self, on: bool) -> None:
        self.belief_layer = on
        self._redraw()

    def show(self, agents: tuple[AgentView, ...], objects: dict[str, str] | None = None,
             changed: frozenset[str] = frozenset()) -> None:
        """Draw a frame's agents and objects; repaint only the rows whose overlay changed."""
        self._agents = agents
        if objects:
            self.objects = objects
        self._changed = changed
        self._redraw()
        self._open()

    def _redraw(self) -> None:
        overlay: dict[Tile, Cell] = {}
        for address in self._changed:
            obj = self._world.objects.get(address)
            for x, y in obj.tiles if obj else ():
                overlay[(x, y)] = (self._cells[y][x][0], CHANGED_STYLE)
        at: dict[Tile, list[str]] = {}
        marker = {a.name: BELIEF_STYLES[a.belief] for a in self._agents} if self.belief_layer else self._marker
        for a in self._agents:
            at.setdefault(a.tile, []).append(a.name)
            if a.name == self.selected:
                colour = self._colours.get(a.name, "white")
                for x, y in a.path[:-1]:
                    overlay[(x, y)] = (PATH_GLYPH, path_style(colour, self._cells[y][x][1].bgcolor))
                if a.path:
                    x, y = a.path[-1]
                    overlay[(x, y)] = ("X", path_style(colour, self._cells[y][x][1].bgcolor))
        for tile, names in at.items():
            if len(names) == 1:
                overlay[tile] = (agent_glyph(names[0]), marker.get(names[0], CROWD_STYLE))
            else:
                overlay[tile] = (str(len(names)) if len(names) < 10 else "+", CROWD_STYLE)
            if self.selected in names:
                glyph, style = overlay[tile]
                overlay[tile] = (glyph, style + SELECTED_STYLE)
        if self.cursor is not None:
            x, y = self.cursor
            glyph = overlay.get(self.cursor, self._cells[y][x])[0]
            overlay[self.cursor] = (glyph, CURSOR_STYLE)
        changed = {t[1] for t in overlay.keys() ^ self._overlay.keys()}
        changed |= {t[1] for t in overlay.keys() & self._overlay.keys() if overlay[t] != self._overlay[t]}
        self._overlay = overlay
        self._marks = {}  # the overlay by row, for _row
        for (x, y), cell in overlay.items():
            self._marks.setdefault(y, []).append((x, cell))
        _, off_y = self._offset()
        for row in changed:
            self._cache.pop(row, None)
            self.refresh_line(row + off_y)  # virtual coordinates: ScrollView subtracts the scroll

    def select(self, name: str | None) -> None:
        self.selected = name
        self._redraw()

    def follow(self, name: str) -> None:
        """Scroll so the agent is in the middle of the view (follow mode)."""
        for a in self._agents:
            if a.name == name:
                x, y = a.tile
                self.scroll_to(x - self.size.width // 2, y - self.size.height // 2, animate=False)
                return

    # --- the cursor -------------------------------------------------------------------------

    def set_cursor(self, tile: Tile | None) -> None:
        if tile is not None:
            tile = (min(max(tile[0], 0), self._width - 1), min(max(tile[1], 0), self._height - 1))
        self.cursor = tile
        self._redraw()
        if tile is not None:
            self.scroll_to_region_of(tile)
        self.post_message(self.CursorMoved(tile, tuple(a.name for a in self._agents if a.tile == tile)))

    def scroll_to_region_of(self, tile: Tile) -> None:
        x, y = tile
        sx, sy = self.scroll_offset
        w, h = self.size
        if not (sx <= x < sx + w and sy <= y < sy + h):
            self.scroll_to(x - w // 2, y - h // 2, animate=False)

    def action_cursor(self, dx: int, dy: int) -> None:
        if self.cursor is None:
            here = next((a.tile for a in self._agents if a.name == self.selected), None)
            sx, sy = self.scroll_offset
            self.set_cursor(here or (sx + self.size.width // 2, sy + self.size.height // 2))
        else:
            self.set_cursor((self.cursor[0] + dx, self.cursor[1] + dy))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # esc hides a shown cursor; with none shown it goes on to the app (which stops a run until)
        return self.cursor is not None if action == "hide_cursor" else True

    def action_hide_cursor(self) -> None:
        if self.cursor is not None:
            self.set_cursor(None)

    def tile_at(self, x: int, y: int) -> Tile | None:
        """The map tile under a point of the widget (None: outside the map)."""
        off_x, off_y = self._offset()
        sx, sy = self.scroll_offset
        tile = (x + sx - off_x, y + sy - off_y)
        return tile if 0 <= tile[0] < self._width and 0 <= tile[1] < self._height else None

    def on_click(self, event: events.Click) -> None:
        tile = self.tile_at(event.x, event.y)
        if tile is not None:
            self.set_cursor(tile)

    def object_at(self, tile: Tile) -> str | None:
        """The address of the object on a tile, if any."""
        return self._object_at.get(tile)

    def describe(self, tile: Tile) -> Text:
        """What is at a tile: its place (sector: arena), the object and its state, who stands there."""
        x, y = tile
        text = Text(f"({x},{y}) ", "dim")
        arena = self._world.arena_at(tile)
        address = self.object_at(tile)
        if address:
            text.append(shown(pretty(address)), "bold")
            state = self.objects.get(address, "")
            text.append(f" is {shown(state)}", "bold #ffd43b" if address in self._changed else "")
        elif arena:
            text.append(shown(pretty(arena.address)), "bold")
        else:
            kind = self._world.map.kinds.get(self._world.map.rows[y][x], "?")
            text.append(f"{shown(kind)} (no place)", "dim")
        names = [a.name for a in self._agents if a.tile == tile]
        if names:
            text.append("  " + shown(", ".join(names)))
        return text

    # --- drawing ----------------------------------------------------------------------------
    def _offset(self) -> tuple[int, int]:
        """Where the map's top-left corner sits when it is smaller than the view (centred)."""
        return max(0, (self.size.width - self._width) // 2), max(0, (self.size.height - self._height) // 2)

    def _row(self, row: int) -> Strip:
        strip = self._cache.get(row)
        if strip is None:
            marks = self._marks.get(row)
            if not marks:
                strip = self._base[row]
            else:
                cells = list(self._cells[row])
                for x, cell in marks:
                    if 0 <= x < self._width:
                        cells[x] = cell
                strip = _strip(cells)
            self._cache[row] = strip
        return strip

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.size.width
        off_x, off_y = self._offset()
        row = y + scroll_y - off_y
        if not 0 <= row < self._height:
            return Strip.blank(width, self.rich_style)
        strip = self._row(row).crop(scroll_x, scroll_x + width - off_x)
        if off_x:
            strip = Strip.join([Strip.blank(off_x, self.rich_style), strip])
        if strip.cell_length < width:  # rich_style is computed on each call: only when needed
            strip = strip.extend_cell_length(width, self.rich_style)
        return strip

    def on_resize(self) -> None:
        self.refresh()  # the centring offset depends on the size
        self._open()

    def _open(self) -> None:
        """Place the first view, once it has a size and agents to show: on the selected agent, else
        the first town's square, else the first agent (left where it is if that is in sight)."""
        if self._opened or not self._agents or not self.size.width or not self.size.height:
            return
        self._opened = True
        tile = self.start_tile()
        if tile is not None:
            self.scroll_to_region_of(tile)

    def start_tile(self) -> Tile | None:
        """What the first view shows: the selected agent, else the first town's square (the middle
        of its tiles), else the first agent."""
        here = next((a.tile for a in self._agents if a.name == self.selected), None)
        if here is not None:
            return here
        square = self._world.sectors.get(self._world.towns[0].square) if self._world.towns else None
        tiles = [t for arena in square.arenas.values() for t in arena.tiles] if square else []
        if tiles:
            return (sum(x for x, _ in tiles) // len(tiles), sum(y for _, y in tiles) // len(tiles))
        return self._agents[0].tile if self._agents else None
