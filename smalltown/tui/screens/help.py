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
    ("space", "run / pause the town (it opens paused)"),
    ("n", "one tick (pauses a running town)"),
    ("s", "run at full speed until the selected agent does something (its next event), then "
          "pause and say what it did"),
    ("g", "run at full speed until a game time: 17:30 (its next occurrence), +2h, 2023-02-14 08:00; "
          "the top bar shows how far"),
    ("space / esc", "during s or g: give it up and pause (after a breakpoint, space goes on to its goal)"),
    ("+ / -", "faster / slower: " + ", ".join(str(s or "as fast as it goes") for s in SPEEDS)
     + " (ticks a second)"),
    ("b", "breakpoints: pause when an agent (or any) starts a conversation, reflects, re-plans, "
          "makes a model call (of a task), enters a place, or gets a memory matching a text"),
    ("[ / ]", "select the previous / next agent (or click it in the list or on the map)"),
    ("f", "follow the selected agent on the map"),
    ("click, shift+arrows", "the map cursor: the place, object and state under it; esc hides it"),
    ("i", "inspect the selected agent: summary, plan at 3 levels, memories (enter: the evidence "
          "tree), retrievals with their scores; 1-4 tabs, a/o/e/l/c filter memories"),
    ("c", "model calls: every call with its tokens; enter opens its prompt and answers"),
    ("t", "timeline of events, filterable by agent and kind"),
    ("d", "conversations, speaker by speaker"),
    ("w", "whisper to the selected agent: a thought it takes as its own, and re-plans around"),
    ("a", "interview the selected agent in a persona (it remembers being asked)"),
    ("e", "edit an object's state (the one under the cursor, or any)"),
    ("ctrl+s", "save: fold the committed ticks into the save file"),
    ("S / F", "save as (go on in a copy) / fork (a copy; go on here)"),
    ("O", "open another save or world"),
    ("r", "rewind: a new save as this run was at an earlier time (9:00, -2h); this one is kept"),
    ("p", "show / hide \"perceived\" events in the log"),
    ("arrows, PgUp/PgDn", "scroll the map (or the mouse wheel)"),
    ("tab", "move the focus between map, agents and log"),
    ("ctrl+p", "the command palette: every action, searchable"),
    ("?", "this help"),
    ("q", "quit: finish the tick in flight and close the save"),
)


class HelpScreen(ModalScreen[None]):
    CSS_PATH = "help.tcss"
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
            "several agents on one tile. Floors are tinted by sector. The selected agent's way ahead "
            "is dotted to an X; objects whose state changed in the last half hour are highlighted. "
            "In the agents list, the symbol after the initial is what the agent is doing "
            "(z sleep, \" talk, * reflect, % eat, # work, = study, ^ exercise, ~ leisure). "
            "The save is committed every tick.\n",
            ("escape or ? closes this help", "dim"))
        with VerticalScroll() as box:
            box.border_title = "smalltown — keys"
            yield Static(table)
            yield Static(legend)

    def action_close(self) -> None:
        self.dismiss()
