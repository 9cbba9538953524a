"""The model-call screens: every call the minds made, newest first, and one call in full.

Both read the save through a `SaveReader` (its own read-only connection) and never touch the
Simulation. The app calls `reload()` on the screen on top after each tick; a screen also reloads
when it comes back to the top. `reload()` costs one indexed query when nothing new was saved,
and adds only the new rows when something was.

"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import Any, Sequence

from rich.console import RenderableType
from rich.highlighter import JSONHighlighter
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Static

from smalltown.shown import shown, shown_text
from smalltown.tui.palette import agent_colours
from smalltown.tui.screens.debug import (NOTE_STYLE, DebugScreen, agent_column, agent_names, cycle, fit, keys_line,
                                         long_stamp, max_id, short_name, stamp, title_line)
from smalltown.tui.widgets.fit_table import Col
from smalltown.tui.widgets.row_table import Keyed, RowTable
from smalltown.tui.reader import CallRow, SaveReader

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

    CSS_PATH = ["debug.tcss", "calls.tcss"]  # DebugScreen's and its own
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

    CSS_PATH = ["debug.tcss", "calls.tcss"]  # DebugScreen's and its own
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
