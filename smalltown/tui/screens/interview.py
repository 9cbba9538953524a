"""The interview screen: a chat with one agent, asked in a persona of the user's choosing.

Each question goes to the simulation's worker as an `interview` command (between ticks); the
answer comes from the agent's memory through the interview task, and the agent remembers the
exchange (a chat record in its memory stream), as in the paper's interviews.
"""

from __future__ import annotations

from typing import Callable

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Footer, Input, Label, RichLog, Static

from smalltown.shown import shown, shown_text

Ask = Callable[[str, str, Callable[[object], None]], None]  # (question, persona, reply)


class InterviewScreen(Screen[None]):
    CSS_PATH = "interview.tcss"
    BINDINGS = [Binding("escape", "close", "Back")]

    def __init__(self, agent: str, ask: Ask, colour: str = "white") -> None:
        super().__init__()
        self.agent = agent
        self._ask = ask
        self._colour = colour
        self.waiting = False  # a question is with the worker; the next waits for its answer

    def compose(self) -> ComposeResult:
        yield Static(shown_text(f"Interview {self.agent} — the answers come from its memory, and it "
                                "remembers being asked"), id="head")
        with Horizontal():
            yield Label("asking as")
            yield Input("the interviewer", id="persona", placeholder='e.g. "a news reporter"')
        yield RichLog(id="chat", wrap=True, markup=False)
        # below the chat, not in it: a log cannot take a line back once the answer comes
        yield Static(shown_text(f"{self.agent.split()[0]} is thinking…", "dim italic"), id="thinking")
        yield Input(placeholder=shown(f"Ask {self.agent.split()[0]} something, then enter"), id="question")
        yield Footer()

    def on_mount(self) -> None:
        self._wait(False)
        self.query_one("#question", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if event.input.id != "question":
            self.query_one("#question", Input).focus()
            return
        question = event.value.strip()
        chat = self.query_one("#chat", RichLog)
        if not question:
            return
        if self.waiting:
            chat.write(Text("… still waiting for the last answer", "dim italic"))
            return
        persona = self.query_one("#persona", Input).value.strip() or "the interviewer"
        event.input.value = ""
        chat.write(Text.assemble((f"{shown(persona)}: ", "bold #ffe066"), shown(question)))
        self._wait(True)
        self._ask(question, persona, self.answered)

    def _wait(self, waiting: bool) -> None:
        self.waiting = waiting
        self.query_one("#thinking", Static).display = waiting

    def answered(self, result: object) -> None:
        """The worker's reply: (answer, retrieval), or the exception that stopped it."""
        self._wait(False)
        chat = self.query_one("#chat", RichLog)
        if isinstance(result, Exception):
            chat.write(shown_text(f"no answer: {result}", "bold red", lines=True))
            return
        answer, retrieval = result  # type: ignore[misc]
        # the model's answer is shown as text: its markup and escapes are not obeyed
        chat.write(Text.assemble((f"{shown(self.agent)}: ", f"bold {self._colour}"), shown(answer, lines=True)))
        drew = len(getattr(retrieval, "results", ()))
        chat.write(Text(f"(drew on {drew} memories; remembered as a chat record)", "dim"))

    def action_close(self) -> None:
        self.dismiss(None)
