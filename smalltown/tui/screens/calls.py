"""The model-call screens: every call the minds made, newest first, and one call in full.

Both read the save through a `SaveReader` (its own read-only connection) and never touch the
Simulation. The app calls `reload()` on the screen on top after each tick; a screen also reloads
when it comes back to the top. `reload()` costs one indexed query when nothing new was saved,
and adds only the new rows when something was.

Also here, shared with the timeline screens: `RowTable`, a newest-first table that fits its
columns to its width, and the header and key lines of a debugger screen.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Callable, Iterable, Sequence

from rich.console import RenderableType
from rich.highlighter import JSONHighlighter
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Static

from smalltown.shown import shown, shown_text
from smalltown.tui.palette import agent_colours
from smalltown.tui.reader import CallRow, SaveReader
from smalltown.store.save import TIME_FMT
from smalltown.world.errors import WorldError
from smalltown.world.load import WORLD_MAX_BYTES, parse_toml

# The app's own keys are priority bindings, which win over a screen's: space n + = - p [ ] f ? q
# run, step, select and follow whatever screen is on top. The screens here use none of them.
KEY_STYLE = "bold #ffe066"  # as in the help screen
NOTE_STYLE = "bold #ffa94d"

# --- shared by the debugger screens ---------------------------------------------------------


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
        (text,) = reader.conn.execute("SELECT value FROM meta WHERE key = 'world_text'").fetchone()
        world_text = json.loads(text) if isinstance(text, str) and len(text) <= 2 * WORLD_MAX_BYTES else None
        if not isinstance(world_text, str):
            return saved
        # a stranger's save: the world's bounded parsing (2,000 levels deep is no RecursionError)
        names = [a["name"] for a in parse_toml("world_text", world_text).get("agents", [])]
    except (TypeError, ValueError, KeyError, sqlite3.Error, WorldError):
        return saved
    return [n for n in names if n in saved] + [n for n in saved if n not in names]


def max_id(conn: sqlite3.Connection, table: str) -> int:
    """The newest row's id: what a reload compares to see whether anything was saved since."""
    assert table in {"events", "llm_calls"}
    return conn.execute(f"SELECT max(id) FROM {table}").fetchone()[0] or 0


@dataclass(frozen=True)
class Col:
    """A table column: `width` cells at least, up to `grow` more when there is room. When even
    the minimum widths do not fit, columns with a `drop` rank are left out, highest first."""
    key: str
    label: str
    width: int
    grow: int = 0
    right: bool = False
    drop: int = 0


def fit_columns(cols: Sequence[Col], width: int, grow_order: Sequence[tuple[str, int | None]],
                padding: int = 1) -> dict[str, int]:
    """Column key -> content width, in `cols` order, for a table `width` cells wide. The room
    left after the minimum widths goes by `grow_order`, step by step: (key, width) widens the
    column to that width if all of it fits, and when it does not, the steps after it are left
    out but for (key, None), which gives the column whatever is left. A column never gains
    more than its `grow`."""
    shown = list(cols)

    def need() -> int:
        return sum(c.width + 2 * padding for c in shown)

    while need() > width and any(c.drop for c in shown):
        shown.remove(max(shown, key=lambda c: c.drop))
    widths = {c.key: c.width for c in shown}
    spare = max(0, width - need())
    by_key = {c.key: c for c in shown}
    full = False
    for key, up_to in grow_order:
        c = by_key.get(key)
        if c is None or (full and up_to is not None):
            continue
        most = c.width + c.grow
        more = min(spare, most - widths[key]) if up_to is None else min(up_to, most) - widths[key]
        if more > spare:
            full = True
        elif more > 0:
            widths[key] += more
            spare -= more
    return widths


def agent_column(agents: Sequence[str]) -> Col:
    """As wide as the longest first name, and as the longest full name when there is room."""
    first = max((len(n.split()[0]) for n in agents if n.split()), default=5)
    width = min(max(first, 5), 12)
    full = max((len(n) for n in agents), default=width)
    return Col("agent", "agent", width, grow=max(0, min(full, 24) - width))


class Keyed:
    """A cell that renders as its text and knows its row's id: the table sorts rows by it."""

    __slots__ = ("id", "text")

    def __init__(self, row_id: int, text: Text) -> None:
        self.id = row_id
        self.text = text

    def __rich__(self) -> Text:
        return self.text


class RowTable(DataTable):
    """Rows of the save, newest (highest id) first, one per item, at most `limit`.

    Columns are fitted to the table's width (`fit_columns`) and laid out again when it changes.
    `cells(item, widths)` gives an item's cells in column order, the first a `Keyed`.
    `replace` shows a new list; `add_newer` puts newer items on top without redrawing the rest.
    The cursor stays on its item, or on the newest one when it was there."""

    BINDINGS = [  # a row cursor: home and end go to the newest and the oldest row
        Binding("home", "scroll_top", "Newest", show=False),
        Binding("end", "scroll_bottom", "Oldest", show=False),
    ]
    DEFAULT_CSS = """
    RowTable { height: 1fr; scrollbar-size-vertical: 1; scrollbar-gutter: stable;
               background: $background; }
    """

    def __init__(self, cols: Sequence[Col], grow_order: Sequence[tuple[str, int | None]],
                 cells: Callable[[Any, dict[str, int]], list], item_id: Callable[[Any], int],
                 limit: int, wrap: bool = False, *, id: str | None = None) -> None:
        super().__init__(cursor_type="row", id=id)
        self._cols = tuple(cols)
        self._grow_order = tuple(grow_order)
        self._cells = cells
        self._item_id = item_id
        self.limit = limit
        self._wrap = wrap  # rows as tall as their wrapped text, else one line
        self.items: list[Any] = []  # newest first, as shown
        self._widths: dict[str, int] = {}

    @property
    def current(self) -> Any | None:
        """The item under the cursor."""
        if not self.items or not self.row_count:
            return None
        row = min(self.cursor_row, len(self.items) - 1)
        return self.items[row]

    def replace(self, items: Iterable[Any]) -> None:
        keep, newest = self._cursor()
        self.items = list(items)[: self.limit]
        self._fill()
        self._restore(keep, newest)

    def add_newer(self, items: Sequence[Any]) -> None:
        """`items`, newest first, are all newer than what is shown."""
        known = {self._item_id(i) for i in self.items[:len(items)]} if self.items else set()
        items = [i for i in items if self._item_id(i) not in known]
        if not items:
            return
        keep, newest = self._cursor()
        if self._widths:
            for item in reversed(items):
                self._add(item)
        self.items = [*items, *self.items]
        for old in self.items[self.limit:]:
            if self._widths:
                self.remove_row(str(self._item_id(old)))
        del self.items[self.limit:]
        if self._widths:
            self.sort(self.ordered_columns[0].key, key=lambda cell: cell.id, reverse=True)
        self._restore(keep, newest)

    def _cursor(self) -> tuple[int | None, bool]:
        item = self.current
        return (self._item_id(item) if item is not None else None), self.cursor_row <= 0

    def _restore(self, keep: int | None, newest: bool) -> None:
        if not self.items or not self._widths:
            return
        ids = [self._item_id(i) for i in self.items]
        row = 0 if newest or keep not in ids else ids.index(keep)
        self.move_cursor(row=row, animate=False)

    def _fill(self) -> None:
        self.clear(columns=not self._widths)
        if not self._widths:
            return
        if not self.columns:
            for c in self._cols:
                if c.key in self._widths:
                    self.add_column(Text(c.label, justify="right" if c.right else "left"),
                                    width=self._widths[c.key], key=c.key)
        for item in self.items:
            self._add(item)

    def _add(self, item: Any) -> None:
        cells = self._cells(item, self._widths)
        height = 1
        if self._wrap:  # as tall as the longest wrapped cell: cheaper than DataTable's auto height
            console = self.app.console
            for cell, width in zip(cells, self._widths.values()):
                if isinstance(cell, Text) and cell.cell_len > width:
                    height = max(height, len(cell.wrap(console, width)))
        self.add_row(*cells, height=height, key=str(self._item_id(item)))

    def on_resize(self) -> None:
        width = self.scrollable_content_region.width
        if width <= 0:
            return
        widths = fit_columns(self._cols, width, self._grow_order, self.cell_padding)
        if widths != self._widths:
            keep, newest = self._cursor()
            self._widths = widths
            self.clear(columns=True)
            self._fill()
            self._restore(keep, newest)


class DebugScreen(Screen[None]):
    """A debugger screen: a title line with its filters on top, its keys at the bottom, escape
    goes back. Subclasses compose, top to bottom: title, body (1fr), status, keys; and read the
    save in `reload()`."""

    CSS_PATH = "calls.tcss"
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
        newest = max_id(self.reader.conn, table)
        return None if newest == self._seen else newest


# --- model calls ----------------------------------------------------------------------------

CALL_COLUMNS = (
    Col("time", "time", 8, grow=11),
    Col("note", "!", 1),
    Col("agent", "agent", 8, grow=10),  # fitted to the agents' names: agent_column
    Col("task", "task", 14, grow=8),
    Col("prompt", "prompt", 6, right=True),
    Col("cached", "cached", 6, right=True),
    Col("completion", "compl", 6, right=True),
    Col("ms", "ms", 6, right=True),
    Col("backend", "backend", 8, grow=12, drop=1),
)
CALL_GROW = (("task", 22), ("agent", 24), ("time", 12), ("backend", 20), ("time", 19), ("task", None))

CALL_SQL = ("SELECT id, tick, time, agent, task, prompt_tokens, cached_tokens, completion_tokens, ms, "
            "backend, note FROM llm_calls")


@dataclass(frozen=True)
class CallFilter:
    agent: str | None = None
    task: str | None = None
    notes_only: bool = False  # only calls with a note: fallbacks, rejected answers

    def where(self, after: int = 0, upto: int | None = None) -> tuple[str, list]:
        sql, args = " WHERE id > ?", [after]
        if upto is not None:
            sql += " AND id <= ?"
            args.append(upto)
        if self.agent:
            sql += " AND agent = ?"
            args.append(self.agent)
        if self.task:
            sql += " AND task = ?"
            args.append(self.task)
        if self.notes_only:
            sql += " AND coalesce(note, '') != ''"
        return sql, args


def query_calls(conn: sqlite3.Connection, f: CallFilter, after: int = 0, upto: int | None = None,
                limit: int = 500) -> list[CallRow]:
    """Newest first; only those with an id above `after` (and up to `upto`)."""
    where, args = f.where(after, upto)
    rows = conn.execute(f"{CALL_SQL}{where} ORDER BY id DESC LIMIT ?", [*args, limit])
    return [CallRow(*(r[:-1]), note=r[-1] or "") for r in rows]


def call_totals(conn: sqlite3.Connection, f: CallFilter, after: int = 0,
                upto: int | None = None) -> tuple[int, int, int, int]:
    """(calls, prompt, cached, completion tokens) of the calls the filter lets through, of those
    with an id above `after` (and up to `upto`)."""
    where, args = f.where(after, upto)
    r = conn.execute("SELECT count(*), coalesce(sum(prompt_tokens), 0), coalesce(sum(cached_tokens), 0), "
                     f"coalesce(sum(completion_tokens), 0) FROM llm_calls{where}", args).fetchone()
    return r[0], r[1], r[2], r[3]


def ms_text(ms: float | None) -> str:
    if ms is None:
        return ""
    return f"{ms:.1f}" if ms < 10 else f"{ms:,.0f}"


def totals_line(calls: int, prompt: int, cached: int, completion: int, shown: int) -> Text:
    share = f"{cached / prompt:.0%}" if prompt else "—"
    out = Text(no_wrap=True, overflow="ellipsis")
    out.append(f"{calls:,}", "bold")
    out.append(" calls" if calls != 1 else " call")
    if shown < calls:
        out.append(f" (newest {shown:,} listed)", "dim")
    out.append("  prompt ", "dim")
    out.append(f"{prompt:,}")
    out.append("  cached ", "dim")
    out.append(f"{cached:,} ({share})")
    out.append("  completion ", "dim")
    out.append(f"{completion:,}")
    return out


def task_names(conn: sqlite3.Connection) -> list[str]:
    return [t for (t,) in conn.execute("SELECT DISTINCT task FROM llm_calls ORDER BY task")]


class CallsScreen(DebugScreen):
    """Every model call, newest first: time, note mark, agent, task, prompt / cached / completion
    tokens, milliseconds and backend. Filters by agent and task; enter opens a call."""

    CSS_PATH = "calls.tcss"
    BINDINGS = [
        Binding("a", "agent(1)", "Agent", show=False),
        Binding("A", "agent(-1)", "Agent back", show=False),
        Binding("t", "task(1)", "Task", show=False),
        Binding("T", "task(-1)", "Task back", show=False),
        Binding("e", "notes", "Notes only", show=False),
    ]
    LIMIT = 500

    def __init__(self, reader: SaveReader, agent: str | None = None) -> None:
        super().__init__()
        self.reader = reader
        self.filter = CallFilter(agent=agent)
        self._agents = agent_names(reader)
        self._colours = agent_colours(self._agents)
        self._seen = 0  # the newest call id read
        self._totals = (0, 0, 0, 0)  # of the calls the filter lets through, up to _seen

    def compose(self) -> ComposeResult:
        yield Static(classes="title", id="title")
        cols = [agent_column(self._agents) if c.key == "agent" else c for c in CALL_COLUMNS]
        yield RowTable(cols, CALL_GROW, self._row_cells, lambda c: c.id, self.LIMIT, id="calls")
        yield Static(classes="status", id="totals")
        yield Static(keys_line(("a", "agent"), ("t", "task"), ("e", "notes only"), ("⏎", "open"),
                               ("esc", "back")), classes="keys")

    def on_mount(self) -> None:
        self._load()

    @property
    def table(self) -> RowTable:
        return self.query_one("#calls", RowTable)

    # --- reading ------------------------------------------------------------------------------

    def reload(self) -> None:
        """Show calls saved since the last read; one query when there are none."""
        newest = self._newer("llm_calls")
        if newest is None:
            return
        conn = self.reader.conn
        # bounded by `newest`: a tick committed meanwhile is read next time, and once
        new = query_calls(conn, self.filter, after=self._seen, upto=newest, limit=self.LIMIT)
        if new:
            more = call_totals(conn, self.filter, after=self._seen, upto=newest)
            self._totals = tuple(a + b for a, b in zip(self._totals, more))  # type: ignore[assignment]
            self.table.add_newer(new)
            self._show_totals()
        self._seen = newest

    def _load(self) -> None:
        """Read everything again: a filter changed."""
        conn = self.reader.conn
        self._seen = max_id(conn, "llm_calls")
        self._totals = call_totals(conn, self.filter, upto=self._seen)
        self.table.replace(query_calls(conn, self.filter, upto=self._seen, limit=self.LIMIT))
        f = self.filter
        self.query_one("#title", Static).update(title_line(
            "Model calls", ("agent", f.agent), ("task", f.task),
            *((("notes", "only"),) if f.notes_only else ())))
        self._show_totals()

    def _show_totals(self) -> None:
        self.query_one("#totals", Static).update(totals_line(*self._totals, shown=len(self.table.items)))

    def _row_cells(self, c: CallRow, w: dict[str, int]) -> list:
        # each cell as Text, its control characters made visible before it is cut to fit
        cells: list = [Keyed(c.id, Text(stamp(shown(c.time), w["time"]), "dim"))]
        cells.append(Text("!", NOTE_STYLE) if c.note else Text(""))
        cells.append(Text(short_name(shown(c.agent or ""), w["agent"]), self._colours.get(c.agent, "")))
        cells.append(Text(fit(shown(c.task), w["task"])))
        for n in (c.prompt_tokens, c.cached_tokens, c.completion_tokens):
            cells.append(Text(f"{n or 0:,}", "dim" if not n else "", justify="right"))
        cells.append(Text(ms_text(c.ms), justify="right"))
        if "backend" in w:
            cells.append(Text(fit(shown(c.backend or ""), w["backend"]), "italic"))
        return cells

    # --- keys ---------------------------------------------------------------------------------

    def action_agent(self, step: int) -> None:
        self._set(agent=cycle(self._agents, self.filter.agent, step))

    def action_task(self, step: int) -> None:
        self._set(task=cycle(task_names(self.reader.conn), self.filter.task, step))

    def action_notes(self) -> None:
        self._set(notes_only=not self.filter.notes_only)

    def _set(self, **changes: Any) -> None:
        f = self.filter
        self.filter = CallFilter(**{"agent": f.agent, "task": f.task, "notes_only": f.notes_only, **changes})
        self._load()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        call = self.table.current
        if call is not None:
            self.app.push_screen(CallDetailScreen(self.reader, call.id, [c.id for c in self.table.items]))


# --- one call -------------------------------------------------------------------------------


def pretty_json(text: str | None) -> RenderableType:
    """JSON indented and highlighted (a string's control characters visible); anything else as
    text."""
    if not text:
        return Text("(none)", "dim italic")
    try:
        out = Text(shown(json.dumps(json.loads(text), indent=2, ensure_ascii=False), lines=True))
    except (ValueError, RecursionError):
        return shown_text(text, lines=True)
    JSONHighlighter().highlight(out)
    out.no_wrap, out.overflow = True, None
    return Drawn(out)


class Drawn:
    """A Text drawn by Rich (as rich.json.JSON is: lines not wrapped), not made a Textual
    Content."""

    def __init__(self, text: Text) -> None:
        self.text = text

    def __rich__(self) -> Text:
        return self.text


class CallDetailScreen(DebugScreen):
    """One call in full: who asked what, the numbers, the note, the prompt, the raw answer and the
    parsed answer. `ids`, newest first (the list it was opened from), lets , and . step to the
    newer and older call."""

    CSS_PATH = "calls.tcss"
    BINDINGS = [
        Binding("comma", "step(-1)", "Newer", show=False),
        Binding("full_stop", "step(1)", "Older", show=False),
    ]

    def __init__(self, reader: SaveReader, call_id: int, ids: Sequence[int] = ()) -> None:
        super().__init__()
        self.reader = reader
        self.call_id = call_id
        self._ids = list(ids) or [call_id]
        self._colours = agent_colours(agent_names(reader))

    def compose(self) -> ComposeResult:
        yield Static(classes="title", id="title")
        with VerticalScroll(id="detail"):
            yield Static(id="meta")
            yield Static("Note", classes="head", id="note-head")
            yield Static(classes="body", id="note")
            yield Static("Prompt", classes="head")
            yield Static(classes="body", id="prompt")
            yield Static("Raw answer", classes="head")
            yield Static(classes="body", id="raw")
            yield Static("Parsed answer", classes="head")
            yield Static(classes="body", id="parsed")
        yield Static(keys_line(("↑↓ PgUp PgDn", "scroll"), (", .", "newer / older"), ("esc", "back")),
                     classes="keys")

    def on_mount(self) -> None:
        self._show()
        self.query_one("#detail").focus()

    def reload(self) -> None:
        """A saved call does not change: nothing to do."""

    def action_step(self, step: int) -> None:
        i = self._ids.index(self.call_id) if self.call_id in self._ids else 0
        j = i + step
        if 0 <= j < len(self._ids):
            self.call_id = self._ids[j]
            self._show()
            self.query_one("#detail", VerticalScroll).scroll_home(animate=False)

    def _show(self) -> None:
        conn = self.reader.conn
        row = conn.execute(f"{CALL_SQL} WHERE id = ?", (self.call_id,)).fetchone()
        model = conn.execute("SELECT model FROM llm_calls WHERE id = ?", (self.call_id,)).fetchone()
        detail = self.reader.call_detail(self.call_id)
        title = self.query_one("#title", Static)
        if row is None:
            title.update(Text(f"Call {self.call_id}: not in the save", "bold"))
            return
        c = CallRow(*(row[:-1]), note=row[-1] or "")
        position = ""
        if self.call_id in self._ids and len(self._ids) > 1:
            position = f"  ({self._ids.index(self.call_id) + 1} of {len(self._ids)})"
        title.update(Text.assemble(
            (f"Call {c.id}  ", "bold"), (shown(c.agent or ""), f"bold {self._colours.get(c.agent, '')}"),
            ("  ", ""), (shown(c.task), "bold"), (position, "dim"), no_wrap=True, overflow="ellipsis"))
        share = f" ({c.cached_tokens / c.prompt_tokens:.0%})" if c.prompt_tokens else ""
        meta = Text.assemble(
            shown(long_stamp(c.time)), ("  tick ", "dim"), shown(c.tick), "\n",
            ("prompt ", "dim"), f"{c.prompt_tokens or 0:,}",
            ("  cached ", "dim"), f"{c.cached_tokens or 0:,}{share}",
            ("  completion ", "dim"), f"{c.completion_tokens or 0:,}",
            "  ", ms_text(c.ms), (" ms", "dim"), "\n",
            ("backend ", "dim"), (shown(c.backend or ""), "italic"),
            ("  model ", "dim"), (shown((model[0] if model else "") or ""), "italic"))
        self.query_one("#meta", Static).update(meta)
        has_note = bool(c.note)
        self.query_one("#note-head").display = has_note
        note = self.query_one("#note", Static)
        note.display = has_note
        note.update(shown_text(c.note, NOTE_STYLE, lines=True))  # what the model said is shown, never obeyed
        self.query_one("#prompt", Static).update(shown_text(detail.get("prompt") or "", lines=True))
        self.query_one("#raw", Static).update(shown_text(detail.get("raw_answer") or "(none)", lines=True))
        self.query_one("#parsed", Static).update(pretty_json(detail.get("parsed_answer")))
