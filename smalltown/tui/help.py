"""The help screen: every key, and what the map shows."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from smalltown.tui.snapshot import SPEEDS

KEYS: tuple[tuple[str, str], ...] = (
    ("space", "pause / resume the town"),
    ("n", "one tick (pauses a running town)"),
    ("+ / -", "faster / slower: " + ", ".join(str(s or "as fast as it goes") for s in SPEEDS)
     + " (ticks a second)"),
    ("p", "show / hide \"perceived\" events in the log"),
    ("[ / ]", "select the previous / next agent (marked on the map and in the list)"),
    ("f", "follow the selected agent on the map"),
    ("i", "inspect the selected agent: summary, plan at 3 levels, memories (enter: the evidence "
          "tree), retrievals with their scores; 1-4 tabs, a/o/e/l/c filter memories"),
    ("c", "model calls: every call with its tokens; enter opens its prompt and answers"),
    ("t", "timeline of events, filterable by agent and kind"),
    ("d", "conversations, speaker by speaker"),
    ("arrows, PgUp/PgDn", "scroll the map (or the mouse wheel)"),
    ("tab", "move the focus between map, agents and log"),
    ("?", "this help"),
    ("q", "quit: finish the tick in flight and close the save"),
)


class HelpScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 74; max-width: 100%; height: auto; max-height: 100%;
                                  border: round $accent; background: $surface; padding: 0 1; }
    HelpScreen Static { width: 1fr; height: auto; }
    """
    BINDINGS = [
        Binding("escape", "close", "Close"),
        Binding("question_mark", "close", "Close", show=False),
    ]

    def compose(self) -> ComposeResult:
        table = Table.grid(padding=(0, 2))
        table.add_column(style="bold #ffe066", no_wrap=True)
        table.add_column()
        for key, what in KEYS:
            table.add_row(key, what)
        legend = Text.assemble(
            "\nOn the map, an agent is its first name's initial on its own colour; a number is "
            "several agents on one tile. The save is committed every tick.\n",
            ("escape or ? closes this help", "dim"))
        with VerticalScroll() as box:
            box.border_title = "smalltown — keys"
            yield Static(table)
            yield Static(legend)

    def action_close(self) -> None:
        self.dismiss()
