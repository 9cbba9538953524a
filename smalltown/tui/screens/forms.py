"""Small dialogs for the user's hand in the town: a line of text (whisper, run until, a file to
save as or open), an object's new state, and the breakpoints list.

Each returns what the user typed (or None when dismissed) to the app, which turns it into a
command for the simulation's worker; none of them touches the simulation. What they show of the
save (an agent's name, an object's state) or of what was typed goes in as Text, never as markup.
"""

from __future__ import annotations

from typing import Callable, Iterable

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.suggester import SuggestFromList
from textual.widgets import Button, DataTable, Input, Label, Select, Static

from smalltown.shown import shown, shown_text
from smalltown.sim.breakpoints import BREAK_KINDS, Breakpoint
from smalltown.world.schema import object_state_problem

class CompletingInput(Input):
    """An input whose Tab accepts the completion it shows (as right does at the end of the text);
    with none shown, Tab moves the focus on as everywhere else."""

    BINDINGS = [Binding("tab", "complete", "Complete", show=False)]

    def action_complete(self) -> None:
        if len(self._suggestion) > len(self.value):
            self.value = self._suggestion
            self.cursor_position = len(self.value)
        else:
            self.screen.focus_next()


class AskScreen(ModalScreen[str | None]):
    """One line of text, checked before it is accepted: `check` returns what is wrong, or None."""

    CSS_PATH = "forms.tcss"
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, title: str, label: str, *, value: str = "", placeholder: str = "",
                 hint: str = "", suggestions: Iterable[str] = (),
                 check: Callable[[str], str | None] | None = None) -> None:
        super().__init__()
        self._title, self._label, self._value, self._placeholder = title, label, value, placeholder
        self._hint = hint
        self._suggestions = list(suggestions)
        self._check = check

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = shown_text(self._title)
            yield Label(shown_text(self._label))
            yield Input(self._value, placeholder=shown(self._placeholder), id="answer",
                        suggester=SuggestFromList(self._suggestions, case_sensitive=False)
                        if self._suggestions else None)
            yield Static(shown_text(self._hint), classes="hint")
            yield Static("", classes="error", id="error")
            yield Static(Text("enter accepts, escape cancels", "dim"))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        value = event.value.strip()
        problem = "type something first" if not value else (self._check(value) if self._check else None)
        if problem:
            self.query_one("#error", Static).update(shown_text(problem))
            return
        self.dismiss(value)

    def action_cancel(self) -> None:
        self.dismiss(None)


class EditObjectScreen(ModalScreen[tuple[str, str] | None]):
    """An object's address (completed from the world's objects) and the state to give it."""

    CSS_PATH = "forms.tcss"
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, objects: dict[str, str], address: str = "") -> None:
        super().__init__()
        self._objects = objects  # address -> state now
        self._address = address

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = "Edit an object's state"
            yield Label("Object (sector:arena:object; tab takes the grey completion, enter moves on)")
            yield CompletingInput(self._address, id="address", placeholder="sector:arena:object",
                                  suggester=SuggestFromList(sorted(self._objects), case_sensitive=False))
            yield Static(self._now(self._address), classes="hint", id="now")
            yield Label("New state")
            yield Input(id="state", placeholder="e.g. burning, being repaired, out of order")
            yield Static("", classes="error", id="error")
            yield Static(Text("enter in the state field applies it, escape cancels; agents who see "
                              "the object notice the change", "dim"))

    def on_mount(self) -> None:
        # the address first, a prefilled one selected: typing replaces it, enter or tab keeps it
        self.query_one("#address", Input).focus()

    def _now(self, address: str) -> Text:
        state = self._objects.get(address.strip())
        return shown_text(f"now: {state}" if state is not None else "")

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "address":
            self.query_one("#now", Static).update(self._now(event.value))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        address = self.query_one("#address", Input).value.strip()
        state = self.query_one("#state", Input).value.strip()
        error = self.query_one("#error", Static)
        if address not in self._objects:
            error.update(shown_text(f"no object {address!r}: addresses look like 'sector:arena:object'"))
            self.query_one("#address", Input).focus()
        elif event.input.id == "address":
            self.query_one("#state", Input).focus()
        elif not state:
            error.update("type the object's new state")
        elif problem := object_state_problem(state):  # a world file's rule for a state
            error.update(shown_text(f"the new state: {problem}"))
        else:
            self.dismiss((address, state))

    def action_cancel(self) -> None:
        self.dismiss(None)


class BreakpointsScreen(ModalScreen[None]):
    """The breakpoints set, and a form to add one. Adding and removing are commands to the
    worker (through `add` and `remove`); the list shows what the last frame says is set."""

    CSS_PATH = "forms.tcss"
    BINDINGS = [
        Binding("escape", "close", "Close"),
        Binding("delete,x", "remove", "Remove", show=False),
        Binding("C", "clear", "Clear all", show=False),
    ]

    def __init__(self, agents: list[str], selected: str | None, current: Callable[[], tuple[Breakpoint, ...]],
                 add: Callable[[str, str | None, str], str | None], remove: Callable[[int | None], None]) -> None:
        super().__init__()
        self._agents, self._selected = agents, selected
        self._current, self._add, self._remove = current, add, remove
        self._shown: tuple[Breakpoint, ...] | None = None

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = "Breakpoints: the town pauses at the end of the tick where one fires"
            yield DataTable(cursor_type="row", id="list")
            yield Static(Text("x or delete removes the highlighted one, C clears all, escape closes", "dim"))
            yield Label("Add: pause when …")
            with Horizontal():
                yield Select([(shown_text(a), a) for a in self._agents], prompt="any agent", id="agent",
                             value=self._selected if self._selected in self._agents else Select.BLANK)
                yield Select([(what, kind) for kind, what in BREAK_KINDS.items() if kind != "event"],
                             prompt="what", id="kind", allow_blank=False, value="talk")
            # (one line: a placeholder cannot wrap, and must fit 80 columns)
            yield Input(placeholder="optional: a task, part of a place or memory, whom a feeling is for",
                        id="text")
            yield Static("", classes="error", id="error")
            with Horizontal():
                yield Button("Add", variant="primary", id="add")

    def on_mount(self) -> None:
        table = self.query_one("#list", DataTable)
        table.add_columns("#", "pause when")
        self.reload()

    def reload(self) -> None:
        """Called by the app with each frame: redraw the list if what is set changed."""
        current = self._current()
        if current == self._shown:
            return
        self._shown = current
        table = self.query_one("#list", DataTable)
        table.clear()
        for bp in current:
            table.add_row(str(bp.id), shown_text(bp.describe().split(" ", 1)[1]), key=str(bp.id))
        if not current:
            table.add_row("", Text("none set", "dim"), key="none")

    def _submit(self) -> None:
        agent = self.query_one("#agent", Select).value
        kind = self.query_one("#kind", Select).value
        text = self.query_one("#text", Input).value.strip()
        problem = self._add(str(kind), None if agent is Select.BLANK else str(agent), text)
        self.query_one("#error", Static).update(shown_text(problem or ""))
        if not problem:
            self.query_one("#text", Input).value = ""

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "add":
            self._submit()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._submit()

    def action_remove(self) -> None:
        table = self.query_one("#list", DataTable)
        if table.row_count and table.cursor_row >= 0:
            key = table.coordinate_to_cell_key((table.cursor_row, 0)).row_key.value
            if key and key != "none":
                self._remove(int(key))

    def action_clear(self) -> None:
        self._remove(None)

    def action_close(self) -> None:
        self.dismiss(None)
