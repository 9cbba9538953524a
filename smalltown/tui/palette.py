"""Colours: how each tile kind looks, and one stable colour per agent."""

from __future__ import annotations

from functools import lru_cache

from rich.color import Color
from rich.style import Style

from smalltown.lang import ACTIVITY_KINDS, activity_kind
from smalltown.shown import shown

# (foreground, background) per tile kind (docs/world-format.md). Backgrounds carry the shape of the
# town (rooms, streets, park) so it reads at a glance; glyphs stay as the map author wrote them.
TILE_COLOURS: dict[str, tuple[str, str]] = {
    "wall": ("#c8c8c8", "#5a5a5a"),
    "floor": ("#6e6052", "#2b2520"),
    "door": ("#f0b050", "#4a3520"),
    "ground": ("#8c7b5e", "#221f19"),
    "street": ("#8a8a95", "#34343c"),
    "grass": ("#4f9a3a", "#17280f"),
    "water": ("#74a9e0", "#123058"),
    "tree": ("#3fbf55", "#17280f"),
    "object": ("#ffd43b", "#2b2520"),  # background replaced by the surroundings' (see widgets/map_view)
}
UNKNOWN_TILE = ("#ff00ff", "#000000")

# Open Color shades: distinct from each other and from the tile backgrounds. Agents beyond the
# palette reuse it in order (a world with more than 24 agents gets repeats).
AGENT_COLOURS: tuple[str, ...] = (
    "#ff6b6b", "#74c0fc", "#ffe066", "#69db7c", "#e599f7", "#ffa94d", "#66d9e8", "#faa2c1",
    "#c0eb75", "#b197fc", "#38d9a9", "#ff8787", "#4dabf7", "#fcc419", "#a9e34b", "#da77f2",
    "#ff922b", "#3bc9db", "#f783ac", "#94d82d", "#9775fa", "#20c997", "#ced4da", "#ffc9c9",
)


# Sectors: each gets a hue its floors and grounds are tinted with, so buildings and lots read apart.
SECTOR_HUES: tuple[str, ...] = (
    "#e8590c", "#1c7ed6", "#2f9e44", "#ae3ec9", "#f08c00", "#0c8599", "#d6336c", "#5c940d",
    "#7048e8", "#c92a2a", "#1098ad", "#e67700",
)
TINTED = frozenset({"floor", "ground", "door", "object"})  # kinds whose background shows the sector
SECTOR_TINT = 0.22  # share of the sector's hue in a tinted background


@lru_cache(maxsize=None)
def tint(bg: str, hue: str, share: float = SECTOR_TINT) -> str:
    a, b = Color.parse(bg).get_truecolor(), Color.parse(hue).get_truecolor()
    return "#" + "".join(f"{round(x + (y - x) * share):02x}" for x, y in zip(a, b))


def sector_hue(index: int) -> str:
    return SECTOR_HUES[index % len(SECTOR_HUES)]


# The selected agent's way ahead, objects that changed lately, and the map cursor.
PATH_GLYPH = "·"
CHANGED_STYLE = Style(color="#000000", bgcolor="#ffd43b", bold=True, underline=True)
CURSOR_STYLE = Style(color="#000000", bgcolor="#f8f9fa", bold=True, underline=True)  # underlined: seen without colour too


@lru_cache(maxsize=None)
def path_style(colour: str, bg) -> Style:
    """A step of the selected agent's way: its colour on the tile's own background."""
    return Style(color=colour, bgcolor=bg, bold=True)


@lru_cache(maxsize=None)  # interned: the map merges runs of cells by style identity
def tile_style(kind: str, bg: str | None = None) -> Style:
    fg, default_bg = TILE_COLOURS.get(kind, UNKNOWN_TILE)
    return Style(color=fg, bgcolor=bg or default_bg, bold=kind in ("wall", "object", "tree", "door"))


def tile_background(kind: str) -> str:
    return TILE_COLOURS.get(kind, UNKNOWN_TILE)[1]


def agent_colours(names: list[str]) -> dict[str, str]:
    """By position in the world file: the same world always gives the same colours."""
    return {name: AGENT_COLOURS[i % len(AGENT_COLOURS)] for i, name in enumerate(names)}


def agent_glyph(name: str) -> str:
    """One map cell per tile, so one letter: the first name's initial."""
    return (shown(name.strip())[:1] or "?").upper()  # ␛, not ESC, when a name starts with one


def on_colour(colour: str) -> Style:
    """The map marker of an agent: its letter on its colour, in black or white for contrast."""
    r, g, b = Color.parse(colour).get_truecolor()
    luma = 0.299 * r + 0.587 * g + 0.114 * b
    return Style(color="#000000" if luma > 140 else "#ffffff", bgcolor=colour, bold=True)


# Several agents on one tile: their count, in a colour no agent has.
CROWD_STYLE = Style(color="#ffffff", bgcolor="#c2255c", bold=True)
# the map's belief layer (the L key): no level, a lower level, a doctrine's top level
BELIEF_COLOURS = ("#5c5f66", "#fab005", "#e03131")
BELIEF_STYLES = tuple(on_colour(c) for c in BELIEF_COLOURS)


# A short symbol for what an agent is doing, beside its sentence in the agents list (plain
# single-width characters: they survive any terminal and font).
STATE_STYLES = {"asleep": "bold #74c0fc", "talking": "bold #69db7c", "reflecting": "bold #e599f7",
                "walking": "bold"}
ACTIVITY_SYMBOLS = {kind: symbol for kind, symbol, _ in ACTIVITY_KINDS}  # by lang.activity_kind


def state_symbol(state: str, action: str | None) -> str:
    """`state` first (the agents list's word), else a keyword of the action's activity, not of
    its place ("get dressed @ a home: bedroom: someone's bed" is not sleep); "·" for
    anything else."""
    if state == "asleep":
        return "z"
    if state == "talking":
        return '"'
    if state == "reflecting":
        return "*"
    return ACTIVITY_SYMBOLS.get(activity_kind((action or "").split(" @ ", 1)[0]) or "", "·")
