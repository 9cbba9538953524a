"""The town map: the world's glyph rows with agents drawn over them.

A Line-API `ScrollView`: each screen line is built from a cached `Strip` of its map row, so a tick
only rebuilds and repaints the rows where an agent came or went, however big the map is.
"""

from __future__ import annotations

from collections import Counter

from rich.segment import Segment
from rich.style import Style
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from smalltown.tui.palette import CROWD_STYLE, agent_glyph, on_colour, tile_background, tile_style
from smalltown.tui.snapshot import AgentView
from smalltown.world.model import Tile, TileMap

Cell = tuple[str, Style]


def _base_cells(tilemap: TileMap) -> list[list[Cell]]:
    """Each tile's glyph and style. Objects take the background of what surrounds them, so a
    bench sits on grass and a bed on a floor."""
    rows, kinds = tilemap.rows, tilemap.kinds
    h, w = tilemap.height, tilemap.width

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
            line.append((rows[y][x], tile_style(k, bg)))
        cells.append(line)
    return cells


def _strip(cells: list[Cell]) -> Strip:
    """Merge runs of equal style into one segment each: fewer segments, cheaper compositing."""
    segments: list[Segment] = []
    text, style = "", None
    for ch, st in cells:
        if st is style or st == style:
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
    centred when it is smaller."""

    DEFAULT_CSS = """
    MapView { scrollbar-size: 1 1; }
    """

    def __init__(self, tilemap: TileMap, colours: dict[str, str], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._cells = _base_cells(tilemap)
        self._width, self._height = tilemap.width, tilemap.height
        self._marker = {name: on_colour(c) for name, c in colours.items()}
        self._overlay: dict[Tile, Cell] = {}
        self._cache: dict[int, Strip] = {}  # map row -> strip with its agents
        self.virtual_size = Size(self._width, self._height)

    # --- updates from frames ----------------------------------------------------------------

    selected: str | None = None  # the agent drawn in reverse, so the eye finds it

    def show_agents(self, agents: tuple[AgentView, ...]) -> None:
        """Put the agents on the map; repaint only the rows whose markers changed."""
        self._agents = agents
        at: dict[Tile, list[str]] = {}
        for a in agents:
            at.setdefault(a.tile, []).append(a.name)
        overlay: dict[Tile, Cell] = {}
        for tile, names in at.items():
            if len(names) == 1:
                overlay[tile] = (agent_glyph(names[0]), self._marker.get(names[0], CROWD_STYLE))
            else:
                overlay[tile] = (str(len(names)) if len(names) < 10 else "+", CROWD_STYLE)
            if self.selected in names:
                glyph, style = overlay[tile]
                overlay[tile] = (glyph, style + SELECTED_STYLE)
        changed = {t[1] for t in overlay.keys() ^ self._overlay.keys()}
        changed |= {t[1] for t in overlay.keys() & self._overlay.keys() if overlay[t] != self._overlay[t]}
        self._overlay = overlay
        _, off_y = self._offset()
        for row in changed:
            self._cache.pop(row, None)
            self.refresh_line(row + off_y)

    def select(self, name: str | None) -> None:
        self.selected = name
        self.show_agents(getattr(self, "_agents", ()))

    def follow(self, name: str) -> None:
        """Scroll so the agent is in the middle of the view (follow mode)."""
        for a in getattr(self, "_agents", ()):
            if a.name == name:
                x, y = a.tile
                self.scroll_to(x - self.size.width // 2, y - self.size.height // 2, animate=False)
                return

    # --- drawing ----------------------------------------------------------------------------

    def _offset(self) -> tuple[int, int]:
        """Where the map's top-left corner sits when it is smaller than the view (centred)."""
        return max(0, (self.size.width - self._width) // 2), max(0, (self.size.height - self._height) // 2)

    def _row(self, row: int) -> Strip:
        strip = self._cache.get(row)
        if strip is None:
            cells = self._cells[row]
            marks = [(t[0], cell) for t, cell in self._overlay.items() if t[1] == row]
            if marks:
                cells = list(cells)
                for x, cell in marks:
                    if 0 <= x < self._width:
                        cells[x] = cell
            strip = self._cache[row] = _strip(cells)
        return strip

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.size.width
        off_x, off_y = self._offset()
        row = y + scroll_y - off_y
        blank = self.rich_style
        if not 0 <= row < self._height:
            return Strip.blank(width, blank)
        strip = self._row(row).crop(scroll_x, scroll_x + width - off_x)
        if off_x:
            strip = Strip.join([Strip.blank(off_x, blank), strip])
        return strip.extend_cell_length(width, blank)

    def on_resize(self) -> None:
        self.refresh()  # the centring offset depends on the size
