"""The model-call screens: every call the minds made, newest first, and one call in full.

Both read the save through a `SaveReader` (its own read-only connection) and never touch the
Simulation. The app calls `reload()` on the screen on top after each tick; a screen also reloads
when it comes back to the top. `reload()` costs one indexed query when nothing new was saved,
and adds only the new rows when something was.

"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Sequence

from rich.console import RenderableType
from rich.highlighter import JSONHighlighter
from rich.text import Text
from textual.app import ComposeResult
from textual.screen import Screen
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Static

from smalltown.llm.backend import estimate_sent
from smalltown.llm.fit import estimate_chars
from smalltown.shown import shown, shown_text
from smalltown.tui.palette import agent_colours
from smalltown.store.records import CallRow, CallSums
from smalltown.tui.screens.call_links import decided_text, retrieval_text
from smalltown.tui.screens.debug import (NOTE_STYLE, DebugScreen, agent_column, agent_names, bound, cycle, fit, keys_line,
                                         long_stamp, short_name, stamp, title_line)
from smalltown.tui.widgets.fit_table import Col
from smalltown.tui.widgets.row_table import Keyed, RowTable
from smalltown.tui.reader import ACTIONS_SHOWN, SaveReader

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
ESTIMATED = "~ estimated: the scripted backend has no tokenizer"  # the title's note when a row shows "~312"
CALL_GROW = (("task", 22), ("agent", 24), ("time", 12), ("backend", 20), ("time", 19), ("task", None))


@dataclass(frozen=True)
class CallFilter:
    agent: str | None = None
    task: str | None = None
    notes_only: bool = False  # only calls with a note: fallbacks, rejected answers


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
    if calls and not prompt and not completion:  # (the scripted backend counts no tokens)
        out.append("  tokens not counted by this backend: the rows' ~ are estimates", "dim italic")
        return out
    out.append("  prompt ", "dim")
    out.append(f"{prompt:,}")
    out.append("  cached ", "dim")
    out.append(f"{cached:,} ({share})")
    out.append("  completion ", "dim")
    out.append(f"{completion:,}")
    return out


def guesses(size: tuple[int, int] | None) -> tuple[int, int, int]:
    """Estimated (prompt, cached, completion) tokens of a call without counts (the scripted
    backend), from its prompt's and its answer's length; zeros when there is nothing to go on."""
    return (estimate_sent(size[0]), 0, estimate_chars(size[1])) if size else (0, 0, 0)


def token_text(n: int | None, guess: int, justify: str = "left") -> Text:
    """A token count, or its estimate marked "~" when the call has none."""
    if not n and guess:
        return Text(f"~{guess:,}", "dim italic", justify=justify)  # type: ignore[arg-type]
    return Text(f"{n or 0:,}", "dim" if not n else "", justify=justify)  # type: ignore[arg-type]


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
        self._sizes: dict[int, tuple[int, int]] = {}  # calls without token counts: their prompt's and answer's length

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
        # bounded by `newest`: a tick committed meanwhile is read next time, and once
        new = self._calls(after=self._seen, upto=newest)
        if new:
            more = self._sums(after=self._seen, upto=newest)
            self._totals = tuple(a + b for a, b in zip(self._totals, more))  # type: ignore[assignment]
            self.table.add_newer(new)
            self._show_totals()
            self._show_title()
        self._seen = newest

    def _load(self) -> None:
        """Read everything again: a filter changed."""
        self._seen = self.reader.newest_id("llm_calls")
        self._sizes = {}  # (only the rows listed)
        self._totals = self._sums(upto=self._seen)
        self.table.replace(self._calls(upto=self._seen))
        self._show_title()
        self._show_totals()

    def _show_title(self) -> None:
        f = self.filter
        title = title_line("Model calls", ("agent", f.agent), ("task", f.task),
                           *((("notes", "only"),) if f.notes_only else ()), *bound(self.reader))
        if self._sizes:
            title.append(f"  {ESTIMATED}", "dim italic")
        self.query_one("#title", Static).update(title)

    def _calls(self, after: int = 0, upto: int | None = None) -> list[CallRow]:
        """The newest LIMIT calls the filter lets through with ids in (after, upto], newest first."""
        f = self.filter
        calls = self.reader.calls(f.agent, f.task, f.notes_only, after, upto, self.LIMIT)
        self._sizes.update(self.reader.call_sizes([c.id for c in calls if not c.prompt_tokens]))
        return calls

    def _sums(self, after: int = 0, upto: int | None = None) -> CallSums:
        """(calls, prompt, cached, completion tokens) of all the calls the filter lets through."""
        f = self.filter
        return self.reader.call_sums(f.agent, f.task, f.notes_only, after, upto)

    def _show_totals(self) -> None:
        self.query_one("#totals", Static).update(totals_line(*self._totals, shown=len(self.table.items)))

    def _row_cells(self, c: CallRow, w: dict[str, int]) -> list:
        # each cell as Text, its control characters made visible before it is cut to fit
        cells: list = [Keyed(c.id, Text(stamp(shown(c.time), w["time"]), "dim"))]
        cells.append(Text("!", NOTE_STYLE) if c.note else Text(""))
        cells.append(Text(short_name(shown(c.agent or ""), w["agent"]), self._colours.get(c.agent, "")))
        cells.append(Text(fit(shown(c.task), w["task"])))
        for n, guess in zip((c.prompt_tokens, c.cached_tokens, c.completion_tokens), guesses(self._sizes.get(c.id))):
            cells.append(token_text(n, guess, justify="right"))
        cells.append(Text(ms_text(c.ms), justify="right"))
        if "backend" in w:
            cells.append(Text(fit(shown(c.backend or ""), w["backend"]), "italic"))
        return cells

    # --- keys ---------------------------------------------------------------------------------

    def action_agent(self, step: int) -> None:
        self._set(agent=cycle(self._agents, self.filter.agent, step))

    def action_task(self, step: int) -> None:
        self._set(task=cycle(self.reader.call_tasks(), self.filter.task, step))

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


def attempts_text(attempts: list[dict]) -> Text:
    """A retried call's attempts, one a line: number, outcome, tokens, ms; then why it failed and
    what the model said (text, never markup)."""
    out = Text()
    for a in attempts:
        kind = a.get("kind") or ""
        out.append(f"{a.get('attempt', '?')}  ", "bold")
        out.append(shown(kind) if kind else "answered", NOTE_STYLE if kind else "green")
        out.append(shown(f"  prompt {a.get('prompt_tokens', 0)}  completion {a.get('completion_tokens', 0)}"
                         f"  cached {a.get('cached_tokens', 0)}  "), "dim")
        ms = a.get("ms")
        out.append(ms_text(ms if isinstance(ms, (int, float)) and not isinstance(ms, bool) else None))
        out.append(" ms\n", "dim")
        if a.get("reason"):
            out.append("   ")
            out.append(shown(a["reason"]))
            out.append("\n")
        if a.get("raw"):
            out.append("   raw: ", "dim")
            out.append(shown(a["raw"]))
            out.append("\n")
    out.rstrip()
    return out


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
        Binding("v", "jump('retrieval-head')", "Retrieval", show=False),
        Binding("o", "jump('decided-head')", "Actions", show=False),
    ]

    def __init__(self, reader: SaveReader, call_id: int, ids: Sequence[int] = (), title: str = "") -> None:
        super().__init__()
        self.reader = reader
        self.call_id = call_id
        self._ids = list(ids) or [call_id]
        self._why = title  # what the list of `ids` is, when not the calls screen's ("decided the action")
        self._colours = agent_colours(agent_names(reader))

    def compose(self) -> ComposeResult:
        yield Static(classes="title", id="title")
        with VerticalScroll(id="detail"):
            yield Static(id="meta")
            yield Static("Note", classes="head", id="note-head")
            yield Static(classes="body", id="note")
            yield Static("Attempts", classes="head", id="attempts-head")
            yield Static(classes="body", id="attempts")
            yield Static("Prompt", classes="head")
            yield Static(classes="body", id="prompt")
            yield Static("Raw answer", classes="head")
            yield Static(classes="body", id="raw")
            yield Static("Parsed answer", classes="head")
            yield Static(classes="body", id="parsed")
            yield Static("Retrieval logged with it: the records it was given", classes="head", id="retrieval-head")
            yield Static(classes="body", id="retrieval")
            yield Static("Actions it decided", classes="head", id="decided-head")
            yield Static(classes="body", id="decided")
        yield Static(keys_line(("↑↓ PgUp PgDn", "scroll"), (", .", "newer / older"), ("v", "retrieval"),
                               ("o", "actions"), ("esc", "back")), classes="keys")

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

    def action_jump(self, head: str) -> None:
        """Scroll to a part: its retrieval, the actions it decided."""
        self.query_one("#detail", VerticalScroll).scroll_to_widget(self.query_one(f"#{head}"), animate=False, top=True)

    def _show(self) -> None:
        c = self.reader.call(self.call_id)
        detail = self.reader.call_detail(self.call_id)
        title = self.query_one("#title", Static)
        if c is None:
            title.update(Text(f"Call {self.call_id}: not in the save", "bold"))
            return
        position = ""
        if self.call_id in self._ids and len(self._ids) > 1:
            position = f"  ({self._ids.index(self.call_id) + 1} of {len(self._ids)}{' that ' + self._why if self._why else ''})"
        elif self._why:
            position = f"  (it {self._why})"
        title.update(Text.assemble(
            (f"Call {c.id}  ", "bold"), (shown(c.agent or ""), f"bold {self._colours.get(c.agent, '')}"),
            ("  ", ""), (shown(c.task), "bold"), (position, "dim"), no_wrap=True, overflow="ellipsis"))
        share = f" ({c.cached_tokens / c.prompt_tokens:.0%})" if c.prompt_tokens else ""
        # no counts (the scripted backend): estimated from the lengths, marked ~ as in the list
        guess = guesses(self.reader.call_sizes([c.id]).get(c.id) if not c.prompt_tokens else None)
        meta = Text.assemble(
            shown(long_stamp(c.time)), ("  tick ", "dim"), shown(c.tick), "\n",
            ("prompt ", "dim"), token_text(c.prompt_tokens, guess[0]),
            ("  cached ", "dim"), token_text(c.cached_tokens, guess[1]), share,
            ("  completion ", "dim"), token_text(c.completion_tokens, guess[2]),
            "  ", ms_text(c.ms), (" ms", "dim"), "\n",
            ("backend ", "dim"), (shown(c.backend or ""), "italic"),
            ("  model ", "dim"), (shown(detail.get("model") or ""), "italic"),
            (f"\n{ESTIMATED}" if any(guess) else "", "dim italic"))
        self.query_one("#meta", Static).update(meta)
        has_note = bool(c.note)
        self.query_one("#note-head").display = has_note
        note = self.query_one("#note", Static)
        note.display = has_note
        note.update(shown_text(c.note, NOTE_STYLE, lines=True))  # what the model said is shown, never obeyed
        attempts = detail.get("attempts") or []
        self.query_one("#attempts-head").display = bool(attempts)
        shown_attempts = self.query_one("#attempts", Static)
        shown_attempts.display = bool(attempts)
        shown_attempts.update(attempts_text(attempts))
        self.query_one("#prompt", Static).update(shown_text(detail.get("prompt") or "", lines=True))
        self.query_one("#raw", Static).update(shown_text(detail.get("raw_answer") or "(none)", lines=True))
        self.query_one("#parsed", Static).update(pretty_json(detail.get("parsed_answer")))
        self.query_one("#retrieval", Static).update(retrieval_text(self.reader.call_retrievals(c.id)))
        self.query_one("#decided", Static).update(decided_text(self.reader.actions_decided_by(c.id), ACTIONS_SHOWN))


def open_why(screen: Screen, reader: SaveReader, agent: str, state) -> None:
    """Open the calls that decided the agent's action (the first; , . step through the others),
    or say why there are none."""
    action = state.action if state is not None else None
    if action is None:
        screen.notify("No action yet: nothing was decided.", severity="warning")
        return
    ids = reader.deciding_calls(agent, action.calls)
    if not ids:
        screen.notify("No model call decided this action (the engine's rules did, or the save predates "
                      "the link from an action to its calls: `smalltown why` shows the calls of its tick).",
                      severity="warning")
        return
    screen.app.push_screen(CallDetailScreen(reader, ids[0], ids, title="decided the action"))
