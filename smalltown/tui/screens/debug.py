"""What the debugger screens share (model calls, one call, timeline, conversations): a screen
with a title, a body, a status and its keys (`DebugScreen`), and how they cut a save's names and
times to a column."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Sequence

from rich.text import Text
from textual.binding import Binding
from textual.screen import Screen

from smalltown.shown import shown
from smalltown.store.errors import SaveError
from smalltown.store.schema import TIME_FMT
from smalltown.tui.reader import SaveReader
from smalltown.tui.widgets.fit_table import Col
from smalltown.world.errors import WorldError
from smalltown.world.load import WORLD_MAX_BYTES, parse_toml

# The app's own keys are priority bindings, which win over a screen's: space n + = - p [ ] f ? q
# run, step, select and follow whatever screen is on top. The screens here use none of them.
KEY_STYLE = "bold #ffe066"  # as in the help screen
NOTE_STYLE = "bold #ffa94d"

def fit(text: str, width: int) -> str:
    """`text` cut to `width` cells, with an ellipsis when cut."""
    if len(text) <= width:
        return text
    return text[: max(0, width - 1)] + "…" if width > 0 else ""


def short_name(name: str | None, width: int) -> str:
    """The full name when it fits, else the first name (cut if need be)."""
    if not name:
        return ""
    return name if len(name) <= width else fit(name.split()[0], width)


def stamp(time: str, width: int) -> str:
    """A save's "YYYY-MM-DD HH:MM:SS" as much as fits: all of it, "Mon 06:00:10" or "06:00:10"."""
    if width >= len(time):
        return time
    if width >= 12:
        try:
            return datetime.strptime(time, TIME_FMT).strftime("%a %H:%M:%S")
        except ValueError:
            pass
    return time[11:19]


def long_stamp(time: str) -> str:
    """ "Mon 2023-02-13 06:00:10", like the clock bar."""
    try:
        return datetime.strptime(time, TIME_FMT).strftime("%a %Y-%m-%d %H:%M:%S")
    except ValueError:
        return time


def keys_line(*pairs: tuple[str, str]) -> Text:
    """ "a agent  t task  esc back": the keys of a screen, as the help screen shows keys."""
    out = Text(no_wrap=True, overflow="ellipsis")
    for i, (key, what) in enumerate(pairs):
        out.append("  " if i else "")
        out.append(key, KEY_STYLE)
        out.append(" " + what)
    return out


def title_line(title: str, *filters: tuple[str, str | None]) -> Text:
    """ "Model calls  agent Ann Lee  task all": the screen's name and its filters."""
    out = Text(title, "bold", no_wrap=True, overflow="ellipsis")
    for label, value in filters:
        out.append(f"  {label} ", "dim")
        out.append(shown(value or "all"), "bold #74c0fc" if value else "")
    return out


def bound(reader: SaveReader) -> tuple[tuple[str, str | None], ...]:
    """The title's "up to Mon 07:06:40" when the reader reads a run as it was then (replay)."""
    return (("up to", f"{reader.until.time:%a %H:%M:%S}"),) if reader.until is not None else ()


def cycle(values: Sequence[str], current: str | None, step: int = 1) -> str | None:
    """The next of None (all), values[0], values[1], …, back to None."""
    ring: list[str | None] = [None, *values]
    i = ring.index(current) if current in ring else 0
    return ring[(i + step) % len(ring)]


def agent_names(reader: SaveReader) -> list[str]:
    """The agents in the world file's order, as the app lists them and gives them colours (the
    save's agents table keeps them by name); the table's order when the world is not readable."""
    saved = reader.agent_names()
    try:
        text = reader.world_text()
        world_text = json.loads(text) if isinstance(text, str) and len(text) <= 2 * WORLD_MAX_BYTES else None
        if not isinstance(world_text, str):
            return saved
        # a stranger's save: the world's bounded parsing (2,000 levels deep is no RecursionError)
        names = [a["name"] for a in parse_toml("world_text", world_text).get("agents", [])]
    except (TypeError, ValueError, KeyError, SaveError, WorldError):
        return saved
    return [n for n in names if n in saved] + [n for n in saved if n not in names]


def agent_column(agents: Sequence[str]) -> Col:
    """As wide as the longest first name, and as the longest full name when there is room."""
    first = max((len(n.split()[0]) for n in agents if n.split()), default=5)
    width = min(max(first, 5), 12)
    full = max((len(n) for n in agents), default=width)
    return Col("agent", "agent", width, grow=max(0, min(full, 24) - width))


class DebugScreen(Screen[None]):
    """A debugger screen: a title line with its filters on top, its keys at the bottom, escape
    goes back. Subclasses compose, top to bottom: title, body (1fr), status, keys; and read the
    save in `reload()`."""

    CSS_PATH = "debug.tcss"
    BINDINGS = [Binding("escape", "close", "Back")]

    def action_close(self) -> None:
        self.dismiss()

    def on_screen_resume(self) -> None:
        self.reload()  # what was saved while another screen was on top

    def reload(self) -> None:
        """Re-read the save. The base has nothing to read (a call's detail never changes)."""

    def _newer(self, table: str) -> int | None:
        """The newest id in `table` when rows came since the last read, else None (one query)."""
        if not self.is_mounted:
            return None
        newest = self.reader.newest_id(table)
        return None if newest == self._seen else newest
