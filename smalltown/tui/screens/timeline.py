"""The event screens: the timeline (every event, newest first) and the town's conversations.

Like the call screens they read the save through a `SaveReader` and never touch the Simulation;
`reload()` (called by the app after ticks, and on coming back to the top) costs one query when
nothing was saved, and the timeline adds only the new rows when something was.
"""

from __future__ import annotations

from typing import Iterable

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import SelectionList, Static

from smalltown.shown import shown, shown_text
from smalltown.sim.events import KINDS
from smalltown.store.conversations import ConversationRow
from smalltown.store.records import EventRow
from smalltown.tui.palette import agent_colours
from smalltown.tui.reader import SaveReader
from smalltown.tui.screens.debug import (DebugScreen, agent_column, agent_names, bound, cycle, fit, keys_line, long_stamp,
                                         short_name, stamp, title_line)
from smalltown.tui.widgets.fit_table import Col
from smalltown.tui.widgets.row_table import Keyed, RowTable

# Every agent perceives every tick, and decides at every action it starts (a "decided" before
# nearly each "started"): they drown the rest.
HIDDEN_BY_DEFAULT = frozenset({"perceived", "decided"})
KIND_STYLES = {
    "perceived": "dim", "said": "#74c0fc", "reflected": "#e599f7", "reacted": "#ffa94d",
    "whispered": "#ffe066", "interviewed": "#66d9e8", "object": "#c0eb75",
    "decided": "dim", "goal": "#ffd43b", "sentiment": "#f783ac", "committed": "#4dabf7", "kept": "#69db7c",
    "broken": "bold #ff6b6b", "unexpected": "#ff922b", "blocked": "#ffa94d",
    "role": "#94d82d",
    # the economy's ops and the civics' events (kinds a save may have before KINDS names them)
    "gather": "#c0eb75", "craft": "#c0eb75", "give": "#63e6be", "trade": "#63e6be", "deposit": "#c0eb75",
    "refused": "#ff8787", "constitution": "bold #ffd43b", "season": "#ffa94d", "proposal": "#74c0fc",
    "vote": "#74c0fc", "tally": "#e599f7", "feedback": "#adb5bd", "stance": "#66d9e8",
}


def event_text(e: EventRow) -> str:
    """The event's text without its leading agent name, which the agent column shows; a line said
    gets whom it was said to. As the save has it: show it through `shown`."""
    text = e.text
    if e.agent:
        if text.startswith(e.agent + ": "):
            text = text[len(e.agent) + 2:]
        elif text.startswith(e.agent + " "):
            text = text[len(e.agent) + 1:]
    if e.kind == "said" and e.data.get("to"):
        text = f"to {e.data['to']}: {text}"
    return text


# --- the timeline ---------------------------------------------------------------------------


def kinds_shown(kinds: Iterable[str]) -> str:
    """What the timeline shows, in the words its header and its kinds picker both use: "all",
    "all but perceived", "said, reflected" or "none"."""
    kinds = set(kinds)
    hidden = [k for k in KINDS if k not in kinds]
    if not hidden:
        return "all"
    if len(hidden) <= len(KINDS) // 2:
        return "all but " + ", ".join(hidden)
    return ", ".join(k for k in KINDS if k in kinds) or "none"


EVENT_COLUMNS = (
    Col("time", "time", 8, grow=11),
    Col("agent", "agent", 8, grow=10),  # fitted to the agents' names: agent_column
    Col("kind", "kind", 11),
    Col("text", "", 16, grow=10_000),
)
EVENT_GROW = (("text", 40), ("agent", 24), ("time", 12), ("text", 80), ("time", 19), ("text", None))


class TimelineScreen(DebugScreen):
    """The event log, newest first: time, agent, kind and text, wrapped. Filters by agent (a) and
    by kind (k opens the list of kinds); "perceived" is hidden until asked for."""

    BINDINGS = [
        Binding("a", "agent(1)", "Agent", show=False),
        Binding("A", "agent(-1)", "Agent back", show=False),
        Binding("k", "kinds", "Kinds", show=False),
    ]
    LIMIT = 500

    def __init__(self, reader: SaveReader, agent: str | None = None) -> None:
        super().__init__()
        self.reader = reader
        self.agent = agent
        self.kinds: frozenset[str] = frozenset(KINDS) - HIDDEN_BY_DEFAULT  # the kinds shown
        self._agents = agent_names(reader)
        self._colours = agent_colours(self._agents)
        self._seen = 0  # the newest event id read

    def compose(self) -> ComposeResult:
        yield Static(classes="title", id="title")
        cols = [agent_column(self._agents) if c.key == "agent" else c for c in EVENT_COLUMNS]
        yield RowTable(cols, EVENT_GROW, self._row_cells, lambda e: e.id, self.LIMIT, wrap=True, id="events")
        yield Static(classes="status", id="status")
        yield Static(keys_line(("a", "agent"), ("k", "kinds"), ("esc", "back")), classes="keys")

    def on_mount(self) -> None:
        self._load()

    @property
    def table(self) -> RowTable:
        return self.query_one("#events", RowTable)

    def _kind_filter(self) -> tuple[str, ...] | None:
        return None if self.kinds >= set(KINDS) else tuple(k for k in KINDS if k in self.kinds)

    def reload(self) -> None:
        """Show events saved since the last read; one query when there are none."""
        newest = self._newer("events")
        if newest is None:
            return
        # bounded by `newest`: a tick committed meanwhile is read next time, and once
        new = self.reader.events(self.agent, self._kind_filter(), self._seen, newest, self.LIMIT)
        self._seen = newest
        if new:
            self.table.add_newer(new)
            self._show_status()

    def _load(self) -> None:
        self._seen = self.reader.newest_id("events")
        self.table.replace(self.reader.events(self.agent, self._kind_filter(), upto=self._seen, limit=self.LIMIT))
        kinds = kinds_shown(self.kinds)
        self.query_one("#title", Static).update(title_line("Timeline", ("agent", self.agent),
                                                           ("kinds", None if kinds == "all" else kinds),
                                                           *bound(self.reader)))
        self._show_status()

    def _show_status(self) -> None:
        n = len(self.table.items)
        text = "No events." if not n else f"{n:,} events" + (f" (the newest {self.LIMIT})" if n >= self.LIMIT else "")
        self.query_one("#status", Static).update(Text(text, no_wrap=True, overflow="ellipsis"))

    def _row_cells(self, e: EventRow, w: dict[str, int]) -> list:
        dim = e.kind in HIDDEN_BY_DEFAULT
        return [
            Keyed(e.id, Text(stamp(shown(e.time), w["time"]), "dim")),
            Text(short_name(shown(e.agent or ""), w["agent"]), "dim" if dim else self._colours.get(e.agent or "", "")),
            Text(fit(shown(e.kind), w["kind"]), KIND_STYLES.get(e.kind, "")),
            Text(shown(event_text(e)), "dim" if dim else ""),
        ]

    def action_agent(self, step: int) -> None:
        self.agent = cycle(self._agents, self.agent, step)
        self._load()

    def action_kinds(self) -> None:
        def chosen(kinds: frozenset[str] | None) -> None:
            if kinds is not None and kinds != self.kinds:
                self.kinds = kinds
                self._load()
        self.app.push_screen(KindPicker(self.kinds), chosen)

    def show_kinds(self, kinds: Iterable[str]) -> None:
        """Show only these kinds (what the picker does)."""
        self.kinds = frozenset(kinds)
        self._load()


class KindPicker(ModalScreen[frozenset[str]]):
    """The kinds of event the timeline shows: enter (or a click) toggles one, a all / none,
    escape or k closes."""

    CSS_PATH = "timeline.tcss"
    BINDINGS = [
        Binding("escape,k", "close", "Close"),
        Binding("a", "all", "All / none"),
    ]

    def __init__(self, shown: frozenset[str]) -> None:
        super().__init__()
        self._shown = shown

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = "Kinds shown"
            yield SelectionList[str](*((self._prompt(k, k in self._shown), k, k in self._shown) for k in KINDS))
            yield Static(id="shown")
            yield Static(keys_line(("⏎", "toggle"), ("a", "all"), ("esc", "done")))

    def on_mount(self) -> None:
        self.query_one(SelectionList).focus()
        self._show(self._shown)

    @staticmethod
    def _prompt(kind: str, on: bool) -> Text:
        """A kind, and "hidden" after it when it is: the box alone is an X either way in some
        terminals."""
        return Text(kind) if on else Text.assemble(kind, ("  hidden", "dim italic"))

    def _show(self, kinds: Iterable[str]) -> None:
        self.query_one("#shown", Static).update(Text(f"shown: {kinds_shown(kinds)}", no_wrap=True,
                                                     overflow="ellipsis"))

    def on_selection_list_selected_changed(self, event: SelectionList.SelectedChanged) -> None:
        sel = event.selection_list
        for i, kind in enumerate(KINDS):
            sel.replace_option_prompt_at_index(i, self._prompt(kind, kind in sel.selected))
        self._show(sel.selected)

    def action_all(self) -> None:
        sel = self.query_one(SelectionList)
        if len(sel.selected) == len(KINDS):
            sel.deselect_all()
        else:
            sel.select_all()

    def action_close(self) -> None:
        self.dismiss(frozenset(self.query_one(SelectionList).selected))


# --- conversations --------------------------------------------------------------------------


class ConversationsScreen(DebugScreen):
    """The town's conversations, newest first: when, where and who, what started it, then speaker
    by speaker, then each side's view of the other. a cycles through the agents (only the
    conversations they took part in) and back to all."""

    CSS_PATH = ["debug.tcss", "timeline.tcss"]  # DebugScreen's and its own
    BINDINGS = [
        Binding("a", "agent(1)", "Agent", show=False),
        Binding("A", "agent(-1)", "Agent back", show=False),
    ]
    LIMIT = 300  # the newest conversations shown

    def __init__(self, reader: SaveReader, agent: str | None = None) -> None:
        super().__init__()
        self.reader = reader
        self.agent = agent
        self._agents = agent_names(reader)
        self._colours = agent_colours(self._agents)
        self._seen = 0
        self._narrow = True  # speakers by first name
        self.conversations: list[ConversationRow] = []  # newest first, as shown

    def compose(self) -> ComposeResult:
        yield Static(classes="title", id="title")
        yield VerticalScroll(id="talks")
        yield Static(classes="status", id="status")
        yield Static(keys_line(("a", "agent"), ("↑↓ PgUp PgDn", "scroll"), ("esc", "back")), classes="keys")

    def on_mount(self) -> None:
        self._narrow = self.app.size.width < 100
        self._load()
        self.query_one("#talks").focus()

    def on_resize(self) -> None:
        if (self.size.width < 100) != self._narrow:
            self._narrow = not self._narrow
            self._load()

    def reload(self) -> None:
        """Read again when a conversation was saved since the last read; one query when none was."""
        if self.is_mounted and self.reader.conversation_mark() != self._seen:
            self._load()

    def _load(self) -> None:
        self._seen = self.reader.conversation_mark()
        talks = self.reader.conversations(self.agent, limit=self.LIMIT)
        cut = len(talks) >= self.LIMIT
        self.conversations = talks[::-1]
        self.query_one("#title", Static).update(title_line("Conversations", ("agent", self.agent), *bound(self.reader)))
        n = len(self.conversations)
        status = f"{n} conversation{'s' if n != 1 else ''}" + (" (the newest)" if cut else "")
        self.query_one("#status", Static).update(status)
        box = self.query_one("#talks", VerticalScroll)
        at_top = box.scroll_y == 0
        with self.app.batch_update():
            box.remove_children()
            if not self.conversations:
                box.mount(Static(shown_text("Nobody has talked yet." if not self.agent
                                            else f"{self.agent} has not talked with anyone yet."), id="empty"))
            else:
                box.mount_all([Static(self._talk(c), classes="talk") for c in self.conversations])
        if at_top:
            box.scroll_home(animate=False)

    def _talk(self, c: ConversationRow) -> Group:
        # every name, place and line is the save's: Text, with control characters made visible
        head = Text.assemble((shown(long_stamp(c.time)), "bold"), ("  ", ""), (shown(c.place), "italic"),
                             ("  tick ", "dim"), (shown(c.tick), "dim"))
        who = Text()
        for i, name in enumerate(c.participants):
            who.append(" & " if i else "", "dim")
            who.append(shown(name), f"bold {self._colours.get(name, '')}")
        firsts = {n.split()[0] for n in c.participants}
        short = len(firsts) == len(c.participants) and self._narrow

        def called(n: str) -> str:
            return shown(n.split()[0] if short else n)

        parts: list = [head, who]
        if c.reason:
            parts.append(Text.assemble((f"{called(c.initiator)} saw: ", "dim"), (shown(c.reason), "dim italic")))
        lines = Table.grid(padding=(0, 2), expand=False)
        lines.add_column(no_wrap=True)
        lines.add_column(ratio=1)
        for line in c.lines:
            lines.add_row(Text(called(line.speaker), self._colours.get(line.speaker, "")), shown_text(line.text))
        parts.append(lines)
        for n, view in c.relationships.items():
            if view:
                parts.append(Text.assemble((f"{called(n)} on {called(c.other_side(n))}: ", "dim"),
                                           (shown(view), "dim italic")))
        return Group(*parts)

    def action_agent(self, step: int) -> None:
        self.agent = cycle(self._agents, self.agent, step)
        self._load()
