"""A modal list of lines: an agent's memory stream, or the conversations, as a replay shows them
at a tick."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from smalltown.shown import shown_text


class MemoriesScreen(ModalScreen[None]):
    """An agent's memory stream as it was at a tick, newest first."""

    CSS_PATH = "memories.tcss"
    BINDINGS = [Binding("escape,m", "close", "Close")]

    def __init__(self, title: str, lines: list[Text]) -> None:
        super().__init__()
        self._title, self._lines = title, lines

    def compose(self) -> ComposeResult:
        with VerticalScroll() as box:
            box.border_title = shown_text(self._title)  # an agent's name: not markup
            for line in self._lines or [Text("nothing yet", "dim")]:
                yield Static(line)

    def action_close(self) -> None:
        self.dismiss(None)
