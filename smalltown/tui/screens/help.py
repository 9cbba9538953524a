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

REPLAY_SPEEDS = (1, 6, 60, 360)  # replay's ticks per step of playback (five steps a second)

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
          "makes a model call (of a task), enters a place, or gets a memory matching a text; "
          "and, with the PIANO modules on, makes, keeps or breaks a promise, feels anew toward "
          "someone, takes up a goal, finds a place closed"),
    ("[ / ]", "select the previous / next agent (or click it in the list or on the map)"),
    ("f", "follow the selected agent on the map"),
    ("click, shift+arrows", "the map cursor: the place, object and state under it; esc hides it"),
    ("i", "inspect the selected agent: summary, plan at 3 levels, memories (enter: the evidence "
          "tree), retrievals with their scores, social (feelings, goal, role, decision, promises), goods "
          "(what it holds, with an economy), a tab per module panel on; 1, 2, … the tabs, "
          "a/o/e/l/c filter memories, y opens the model calls that decided its action"),
    ("T", "the town's goods (a world with an economy): the chest's and everyone's holdings, the ledger "
          "newest first (a agent, k kind), the constitution in force and the latest tally"),
    ("c", "model calls: every call with its tokens (~: estimated, the scripted backend has no tokenizer); "
          "enter opens its prompt and answers"),
    ("m", "models: which backend answers, its calls so far, what a model would change, how to add one"),
    ("t", "timeline of events, filterable by agent and kind"),
    ("d", "conversations, speaker by speaker"),
    ("D", "the day at a glance: every agent across the day, by what it did, where and with whom; "
          "enter selects that agent and notes the replay command for that moment; < > change the day"),
    ("w", "whisper to the selected agent: a thought it takes as its own, and re-plans around"),
    ("a", "interview the selected agent in a persona (it remembers being asked)"),
    ("e", "edit an object's state (the one under the cursor, or any)"),
    ("ctrl+s", "save: fold the committed ticks into the save file"),
    ("S / F", "save as (go on in a copy) / fork (a copy; go on here)"),
    ("O", "open another save or world (one that will not open leaves you in this run, paused)"),
    ("r", "rewind: a new save as this run was at an earlier time (9:00: its latest occurrence, -2h); "
          "this one is kept"),
    ("p", "show / hide \"perceived\" events in the log"),
    ("L", "the belief layer: agents on the map coloured by belief level (grey none, yellow a lower level, "
          "red a doctrine's top)"),
    ("arrows, PgUp/PgDn", "scroll the map (or the mouse wheel)"),
    ("tab", "move the focus between map, agents and log"),
    ("ctrl+p", "the command palette: every action, searchable"),
    ("?", "this help"),
    ("q / ctrl+c", "quit: drop the tick in flight and close the save; the terminal is told where it is"),
)

# `smalltown replay`: a recorded run, moved through in time; the debugger shows it as it was then
REPLAY_KEYS: tuple[tuple[str, str], ...] = (
    (". / ,", "one tick forward / back"),
    ("> / <", "10 minutes forward / back"),
    ("} / {", "an hour forward / back"),
    ("home / end", "the start / the end of the run"),
    ("space", "play / pause (playing stops where a breakpoint fires)"),
    ("+ / -", "play faster / slower: " + ", ".join(str(s * 5) for s in REPLAY_SPEEDS) + " ticks a second"),
    ("g", "go to a game time: 9:00 (its next occurrence; the last one when the run ends first), "
          "day 2 9:00 (from the world's first day), +2h, 2023-02-13 12:00"),
    ("s", "to the selected agent's next event"),
    ("b", "breakpoints: moving forward (playing, stepping, going to a time) stops at the first tick "
          "where one fires: an agent starts a conversation, reflects, re-plans, makes a model call "
          "(of a task), enters a place, or gets a memory matching a text; "
          "and, with the PIANO modules on, makes, keeps or breaks a promise, feels anew toward "
          "someone, takes up a goal, finds a place closed"),
    ("[ / ]", "select the previous / next agent (or click it in the list or on the map)"),
    ("L", "the belief layer: agents on the map coloured by the belief level they held then (grey none, "
          "yellow a lower level, red a doctrine's top)"),
    ("i", "inspect the selected agent as it was then: summary and plan (as kept hourly), memories "
          "made by then, retrievals, social, goods (held then); 1, 2, … the tabs, a/o/e/l/c filter memories, "
          "y the model calls that decided its action"),
    ("T", "the town's goods as they were then (a world with an economy): holdings, the ledger, "
          "the constitution and the latest tally"),
    ("c", "model calls up to this time; enter opens its prompt and answers"),
    ("t", "timeline of events up to this time, filterable by agent and kind"),
    ("d", "conversations held by this time, filterable by agent"),
    ("D", "the day at a glance: every agent across the day; enter on a cell goes there"),
    ("m", "the backend and model that answered this run, and how to get a model"),
    ("click, shift+arrows", "the map cursor: the place, object and state under it; esc hides it"),
    ("arrows, PgUp/PgDn", "scroll the map (or the mouse wheel)"),
    ("?", "this help"),
    ("q", "quit (the save is only read)"),
)


class HelpScreen(ModalScreen[None]):
    CSS_PATH = "help.tcss"
    BINDINGS = [
        Binding("escape", "close", "Close"),
        Binding("question_mark", "close", "Close", show=False),
    ]

    def __init__(self, keys: tuple[tuple[str, str], ...] = KEYS, title: str = "smalltown — keys") -> None:
        super().__init__()
        self._keys, self._title = keys, title  # the live TUI's, or replay's

    def compose(self) -> ComposeResult:
        table = Table.grid(padding=(0, 2))
        table.add_column(style="bold #ffe066", no_wrap=True)
        table.add_column()
        for key, what in self._keys:
            table.add_row(key, what)
        legend = Text.assemble(
            "\nOn the map, an agent is its first name's initial on its own colour; a number is "
            "several agents on one tile. Floors are tinted by sector. The selected agent's way ahead "
            "is dotted to an X; objects whose state changed in the last half hour are highlighted. "
            "In the agents list, the symbol after the initial is what the agent is doing "
            "(z sleep, \" talk, * reflect, % eat, # work, = study, ^ exercise, ~ leisure). ",
            "Every tick that changes something is committed as it runs.\n" if self._keys is KEYS else "\n",
            ("escape or ? closes this help", "dim"))
        with VerticalScroll() as box:
            box.border_title = self._title
            yield Static(table)
            yield Static(legend)

    def action_close(self) -> None:
        self.dismiss()
