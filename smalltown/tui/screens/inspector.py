"""The inspector: one agent's day, to step through. Who it is and what it is doing now, its plan at
three levels, its memory stream with the evidence behind each record (the reflection tree), the
retrievals behind its decisions, with their scores, and its social side (feelings, goal,
decision, promises: the PIANO modules).

It reads the save only, through a `SaveReader` (a read-only connection of its own), so it shows
whole ticks while the simulation's worker goes on writing, and works as well on an old save. The
app calls `reload()` after each tick while the screen is open; `r` re-reads at once.
"""

from __future__ import annotations

import time
from datetime import date, datetime

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import ActiveBinding, Binding
from textual.containers import Container, Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import DataTable, Footer, Static, TabbedContent, TabPane, Tree
from textual.widgets.tree import TreeNode

from smalltown.lang import hhmm
from smalltown.world.model import SLEEPING
from smalltown.state.agent import AgentState
from smalltown.shown import shown, shown_text
from smalltown.tui.palette import agent_colours
from smalltown.tui.reader import Memory, SaveReader
from smalltown.tui.screens.calls import open_why
from smalltown.tui.screens.inspector_retrievals import Retrievals
from smalltown.tui.screens.inspector_social import Social
from smalltown.tui.screens.inspector_goods import Goods
from smalltown.tui.screens.inspector_modules import ModuleTabs, bind_tab_keys
from smalltown.tui.screens.inspector_text import (ACTION_COLUMNS, BLOCK_COLUMNS, MEMORY_COLUMNS, action_cell, clock_line, current_action, current_block, importance_text, kind_text,
                                                  memory_counts, memory_detail, memory_label, plan_item, read_state,
                                                  save_clock, span, stamp, summary)
from smalltown.tui.widgets.fit_table import FitTable
from smalltown.world.model import pretty

# The memory filter's keys: a letter of the kind's name, underlined in the filter bar. "r" is
# taken by refresh and "p" by the app (show perceived events), hence r-e-flection and p-l-an.
FILTER_KEYS: tuple[tuple[str, str | None, str], ...] = (
    ("a", None, "[u]a[/u]ll"), ("o", "observation", "[u]o[/u]bservation"), ("e", "reflection", "r[u]e[/u]flection"),
    ("l", "plan", "p[u]l[/u]an"), ("c", "chat", "[u]c[/u]hat"))
TABS = ("summary", "plan", "memory", "retrievals", "social", "goods")  # goods: in a world with an economy

APP_KEYS_SHOWN = frozenset({"help", "quit", "command_palette"})  # in the footer, of the app's keys
CURRENT = "▶"
CURRENT_STYLE = "bold #ffe066"
MEMORY_LIMIT = 200  # records in the memory list, newest first
RELOAD_SECONDS = 0.25  # `reload()` re-reads the save at most this often


# --- the screen --------------------------------------------------------------------------------


class InspectorScreen(Screen[None]):
    """One agent, read from the save: summary, plan, memory stream (with the evidence tree),
    retrievals and its social side, one tab each. `reload()` re-reads the save (the app calls it after each tick)."""

    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (120, "-wide")]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (40, "-tall")]
    CSS_PATH = "inspector.tcss"
    BINDINGS = [
        Binding("escape", "close", "Close"),
        Binding("r", "refresh", "Refresh"),
        Binding("y", "why", "Why"),  # the calls that decided the action (calls.open_why)
        *(Binding(key, f"filter({kind!r})", f"Show {kind or 'all'}", show=False)
          for key, kind, _ in FILTER_KEYS),
    ]

    @property
    def active_bindings(self) -> dict[str, ActiveBinding]:
        """The footer's keys: this screen's, help, quit, the palette (the town's work, unlisted: 80 columns)."""
        return {key: active for key, active in super().active_bindings.items()
                if active.node is not self.app or active.binding.action in APP_KEYS_SHOWN}

    def __init__(self, reader: SaveReader, agent: str) -> None:
        super().__init__()
        self.reader = reader
        self.agent = agent
        self.kind: str | None = None  # the memory filter; None shows every kind
        self._tick: int | None = None  # the save's tick last read
        self._today: date | None = None  # the save's game date
        self._now: datetime | None = None  # the save's game time
        self._last_read = 0.0
        self._timer: Timer | None = None
        self._state: AgentState | None = None
        self._state_note = ""  # why there is no state to show
        self._memories: dict[str, Memory] | None = None  # as listed, by row key; None: not yet
        self._current_block: int | None = None
        self._loaded: set[int] = set()  # evidence-tree nodes whose children have been added
        self._stale: set[str] = set()  # tabs not drawn since the last read
        self._goods = Goods(reader, agent, id="goods-scroll")  # its tab only in a world with an economy
        self._modules = ModuleTabs(reader)  # the registered modules' panels the run has on
        names = reader.agent_names()
        self._colour = agent_colours(names).get(agent, "white")
        # 1, 2, … for the tabs this world shows (Goods with an economy, then the modules'): per screen
        bind_tab_keys(self._bindings, [t for t in TABS if t != "goods" or self._goods.view.on] + list(self._modules.ids()))

    # --- layout -----------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        with Horizontal(id="ins-bar"):
            yield Static(Text.assemble((shown(self.agent), f"bold {self._colour}"), ("  inspector", "dim")),
                         id="ins-name")
            yield Static(id="ins-clock")
        with TabbedContent(id="ins-tabs", initial="summary"):
            with TabPane("Summary", id="summary"):
                with VerticalScroll(id="summary-scroll"):
                    yield Static(id="summary-text")
            with TabPane("Plan", id="plan"):
                with Container(id="plan-grid"):
                    with VerticalScroll(id="plan-day", classes="part"):
                        yield Static(id="plan-items")
                    yield FitTable(BLOCK_COLUMNS, id="plan-blocks", classes="part")
                    yield FitTable(ACTION_COLUMNS, id="plan-actions", classes="part", show_header=False)
            with TabPane("Memory", id="memory"):
                with Vertical():
                    yield Static(id="mem-filter")
                    with Container(id="mem-body"):
                        yield FitTable(MEMORY_COLUMNS, id="mem-table")
                        yield Tree[Memory | None](Text("evidence"), id="evidence", classes="part")
                    yield Static(id="mem-detail", classes="part")
            with TabPane("Retrievals", id="retrievals"):
                yield Retrievals(id="ret-body")
            with TabPane("Social", id="social"):
                yield Social(id="social-scroll")
            if self._goods.view.on:
                with TabPane("Goods", id="goods"):
                    yield self._goods
            yield from self._modules.tabs()
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#plan-blocks", FitTable).border_title = "Hour blocks"
        self.query_one("#evidence", Tree).border_title = "Evidence"
        self._read(force=True)

    # --- reading the save ---------------------------------------------------------------------

    def reload(self) -> None:
        """Re-read the save if it has moved on since the last read; cheap, and safe to call after
        every tick from the UI thread: one small query when nothing changed, a re-read at most
        every RELOAD_SECONDS (a call inside that window schedules one at its end, so the last
        tick is always shown). The tab, the memory filter, the evidence tree and the cursors
        are kept; a cursor on the newest row stays on the newest."""
        wait = self._last_read + RELOAD_SECONDS - time.monotonic()
        if wait > 0:
            if self._timer is None:
                self._timer = self.set_timer(wait, self._deferred_read)
            return
        self._read()

    def _deferred_read(self) -> None:
        self._timer = None
        self._read()

    def action_refresh(self) -> None:
        self._read(force=True)

    def _read(self, force: bool = False) -> None:
        tick, game_time = save_clock(self.reader)
        self._last_read = time.monotonic()
        if tick == self._tick and not force:
            return
        self._tick, self._today, self._now = tick, game_time.date() if game_time else None, game_time
        self.on_resize()  # (the clock)
        self._state, self._state_note = read_state(self.reader, self.agent)
        # Only the tab in view is drawn now; the others when they are shown.
        self._stale = set(TABS) | self._modules.ids()
        self._show_tab(self.query_one(TabbedContent).active or TABS[0])

    def on_resize(self) -> None:
        """The save's clock in the top bar: short in a narrow screen (wrapped if even that is too long)."""
        if self._tick is not None:
            room = self.size.width - self.query_one("#ins-name").outer_size.width - 2  # (its padding)
            self.query_one("#ins-clock", Static).update(clock_line(self.reader, self._tick, self._now, room))

    def _show_tab(self, tab: str) -> None:
        if tab in self._stale:
            self._stale.discard(tab)
            if tab in self._modules:
                return self._modules.show(self.query_one, tab, self._state.modules if self._state else None)
            {"summary": self._show_summary, "plan": self._show_plan, "memory": self._show_memories,
             "retrievals": self._show_retrievals, "social": self._show_social,
             "goods": lambda: self._goods.show(self._state, self._now)}[tab]()

    # --- summary ------------------------------------------------------------------------------

    def _show_summary(self) -> None:
        self.query_one("#summary-text", Static).update(
            summary(self.agent, self._colour, self._state, self._state_note, memory_counts(self.reader, self.agent)))

    # --- plan ---------------------------------------------------------------------------------

    def _show_plan(self) -> None:
        plan = self._state.plan if self._state else None
        day = self.query_one("#plan-day")
        blocks_table = self.query_one("#plan-blocks", FitTable)
        if plan is None:
            day.border_title = "Day"
            self.query_one("#plan-items", Static).update(Text("— (no plan yet: the agent plans on waking)", "dim"))
            self._current_block = None
            blocks_table.set_rows([])
            self._show_actions(None)
            return
        day.border_title = shown_text(f"Day · {plan.date:%a %d %b} · wakes at {plan.wake_up_hour}")  # not markup
        items = Text("\n").join(Text.assemble((f"{n}. ", "dim"), plan_item(item))
                                for n, item in enumerate(plan.items, 1)) or Text("—", "dim")
        self.query_one("#plan-items", Static).update(items)
        was_current = self._current_block
        following = was_current is None or blocks_table.cursor_key in (None, str(was_current))
        block = current_block(self._state)
        self._current_block = current = plan.index(block) if block is not None else None
        rows = []
        for i, b in enumerate(plan.blocks):
            style = CURRENT_STYLE if i == current else ""
            where = b.address or b.place
            rows.append((str(i), [Text(CURRENT if i == current else "", style),
                                  Text(hhmm(b.start), style), Text(str(b.minutes), style, justify="right"),
                                  shown_text(b.activity, style),
                                  shown_text(pretty(where), style) if where else Text("—", "dim")]))
        # The cursor follows the current block unless it was moved off it.
        blocks_table.set_rows(rows, cursor=str(current) if following and current is not None else None)
        self._show_actions(blocks_table.cursor_key)

    def _show_actions(self, key: str | None) -> None:
        """The actions of the block at `key` (a row of the blocks table): the current one's when
        the cursor is on it, with the current action marked."""
        table = self.query_one("#plan-actions", FitTable)
        state = self._state
        blocks = state.plan.blocks if state and state.plan else []
        if key is None or not key.isdigit() or int(key) >= len(blocks):
            table.border_title = "Actions"
            table.set_rows([])
            return
        i = int(key)
        b = blocks[i]
        where = f"{span(b)} {shown(b.activity)}"
        if b.actions is None:  # border titles are Text: an activity is not markup
            why = "none (sleep is not broken down)" if b.activity == SLEEPING else "not broken down yet"
            table.border_title = Text(f"Actions of {where}: {why}")
            table.set_rows([])
            return
        table.border_title = Text(f"Actions of {where}" + (" (current block)" if i == self._current_block else ""))
        marked = current_action(self._state, b, self._now) if i == self._current_block else None
        rows = []
        for j, a in enumerate(b.actions):
            style = CURRENT_STYLE if j == marked else ""
            rows.append((str(j), [Text(CURRENT if j == marked else "", style), Text(hhmm(a.start), style),
                                  Text(str(a.minutes), style, justify="right"),
                                  shown_text(action_cell(a), style)]))
        table.set_rows(rows, cursor=str(marked) if marked is not None else "0")

    @on(DataTable.RowHighlighted, "#plan-blocks")
    def _block_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_actions(event.row_key.value)

    # --- memory, the other tabs, keys ------------------------------------------------

    def action_filter(self, kind: str | None) -> None:
        self.query_one(TabbedContent).active = "memory"
        self._show_tab("memory")
        if kind != self.kind:
            self.kind = kind
            self._show_memories(top=True)
        self.query_one("#mem-table").focus()

    def _show_filter(self, shown: int) -> None:
        """The filter bar: the kinds, the one shown in reverse, each letter to press underlined
        (and each a link); then how many records are listed."""
        parts = []
        for _, kind, label in FILTER_KEYS:
            link = f"[@click=screen.filter({kind!r})]{label}[/]"
            parts.append(f"[reverse b]{link}[/]" if kind == self.kind else link)
        count = f"{shown} {'newest ' if shown == MEMORY_LIMIT else ''}record{'' if shown == 1 else 's'}"
        self.query_one("#mem-filter", Static).update(f"[dim]kind[/] {'  '.join(parts)}  [dim]· {count}[/]")

    def _show_memories(self, top: bool = False) -> None:
        table = self.query_one("#mem-table", FitTable)
        following = top or table.cursor_key in (None, *table.row_keys[:1])
        rows = self.reader.memories(self.agent, (self.kind,) if self.kind else None, MEMORY_LIMIT)
        if self._memories is not None and [str(m.id) for m in rows] == list(self._memories) and not top:
            return  # records never change: the same ones, the same rows
        self._memories = {str(m.id): m for m in rows}
        table.set_rows([(str(m.id), [Text(stamp(m.created, self._today), "dim"), kind_text(m.kind, short=True),
                                     importance_text(m.importance), shown_text(m.description),
                                     shown_text(" ".join(map(str, m.evidence)), "dim")]) for m in rows],
                       cursor=str(rows[0].id) if following and rows else None)
        self._show_filter(len(rows))
        self._show_memory((self._memories or {}).get(table.cursor_key or ""))
        if not rows:
            self.query_one("#mem-detail", Static).update(Text(f"No {self.kind or ''} records yet.", "dim"))

    def _show_memory(self, m: Memory | None) -> None:
        self.query_one("#mem-detail", Static).update(memory_detail(m) if m else "")

    @on(DataTable.RowHighlighted, "#mem-table")
    def _memory_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_memory((self._memories or {}).get(event.row_key.value or ""))

    @on(DataTable.RowSelected, "#mem-table")
    def _memory_selected(self, event: DataTable.RowSelected) -> None:
        self.open_evidence(int(event.row_key.value))

    def open_evidence(self, memory_id: int) -> bool:
        """Show the records `memory_id` cites, as a tree that opens further, in the Memory tab.
        False (and a notice) when the record cites none."""
        m = self.reader.memory(memory_id)
        if m is None or not m.evidence:
            self.notify(f"#{memory_id} cites no records.", timeout=3)
            return False
        tree = self.query_one("#evidence", Tree)
        tree.reset(memory_label(m, self._today), m)
        self._loaded.clear()
        self._load_evidence(tree.root)
        tree.root.expand()
        tree.border_title = f"Evidence of #{m.id}"
        self.query_one("#mem-body").add_class("-open")
        self.query_one(TabbedContent).active = "memory"
        tree.move_cursor(tree.root)
        tree.focus()
        return True

    def close_evidence(self) -> None:
        self.query_one("#mem-body").remove_class("-open")
        table = self.query_one("#mem-table", FitTable)
        table.focus()
        self._show_memory((self._memories or {}).get(table.cursor_key or ""))

    @property
    def evidence_open(self) -> bool:
        return self.query_one("#mem-body").has_class("-open")

    def _load_evidence(self, node: TreeNode[Memory | None]) -> None:
        """Add a node's cited records as its children, once. A record already above it in the
        tree is marked and not opened again, so a loop in the evidence cannot recurse."""
        m = node.data
        if node.id in self._loaded or m is None:
            return
        self._loaded.add(node.id)
        above, parent = {m.id}, node.parent
        while parent is not None:
            if parent.data is not None:
                above.add(parent.data.id)
            parent = parent.parent
        for eid in m.evidence:
            e = self.reader.memory(eid)
            if e is None:
                node.add_leaf(shown_text(f"#{eid} (not in the save)", "dim italic"), None)
            elif e.id in above:
                node.add_leaf(memory_label(e, self._today, "↺ already above: not opened again"), e)
            elif e.evidence:
                node.add(memory_label(e, self._today, f"cites {len(e.evidence)}"), e)
            else:
                node.add_leaf(memory_label(e, self._today), e)

    @on(Tree.NodeExpanded, "#evidence")
    def _evidence_expanded(self, event: Tree.NodeExpanded) -> None:
        self._load_evidence(event.node)

    @on(Tree.NodeHighlighted, "#evidence")
    def _evidence_highlighted(self, event: Tree.NodeHighlighted) -> None:
        self._show_memory(event.node.data)

    def _show_retrievals(self) -> None:
        self.query_one(Retrievals).show(self.reader, self.agent, self._today)

    def _show_social(self) -> None:
        self.query_one(Social).show(self.reader, self.agent, self._state, self._state_note, self._now)

    @on(DataTable.RowSelected, "#ret-results")
    def _result_selected(self, event: DataTable.RowSelected) -> None:
        self.open_evidence(int(event.row_key.value.split(":")[1]))

    def action_tab(self, tab: str) -> None:
        self.query_one(TabbedContent).active = tab

    @on(TabbedContent.TabActivated)
    def _tab_activated(self, event: TabbedContent.TabActivated) -> None:
        self._show_tab(event.pane.id or "")
        focus = {"plan": "#plan-blocks", "memory": "#evidence" if self.evidence_open else "#mem-table",
                 "retrievals": "#ret-list", "social": "#social-scroll", "goods": "#goods-scroll"}.get(event.pane.id or "")
        if focus:
            self.query_one(focus).focus()

    def action_why(self) -> None:
        open_why(self, self.reader, self.agent, self._state)

    def action_close(self) -> None:
        """Escape: closes the evidence tree when it is open in view, else the screen."""
        if self.evidence_open and self.query_one(TabbedContent).active == "memory":
            self.close_evidence()
        else:
            self.dismiss()
