"""The small forms' frictions (issue 14): the edit-object form (`e`) and the interview (`a`).

The edit form, on the tiny town's objects: focus starts in the address, a prefilled one selected
so that typing replaces it; Tab takes the completion the field shows, and with none shown moves on
to the state like enter does. The interview shows "thinking…" only while an answer is awaited."""

from __future__ import annotations

import pytest
from textual.app import App
from textual.widgets import Input, RichLog

from helpers import TINY, screen_text
from smalltown.tui.screens.forms import EditObjectScreen
from smalltown.tui.screens.interview import InterviewScreen
from smalltown.world.load import load_world

OBJECTS = {address: obj.initial_state for address, obj in load_world(TINY).objects.items()}
CAFE = next(a for a in OBJECTS if a.startswith("Hobbs Cafe:"))
ISABELLA = "Isabella Rodriguez"
BED = next(a for a in OBJECTS if a.startswith("Willow Cottage:") and a.endswith("bed"))


class Host(App[None]):
    """An app that opens the form and keeps what it returns."""

    def __init__(self, address: str = "") -> None:
        super().__init__()
        self.address = address
        self.result: tuple[str, str] | None | str = "open"

    def on_mount(self) -> None:
        self.push_screen(EditObjectScreen(OBJECTS, self.address), self.done)

    def done(self, result: tuple[str, str] | None) -> None:
        self.result = result


def field(app: App, name: str) -> Input:
    return app.screen.query_one(f"#{name}", Input)


@pytest.mark.asyncio
async def test_focus_starts_in_the_address_and_typing_replaces_a_prefilled_one() -> None:
    app = Host(BED)
    async with app.run_test() as pilot:
        await pilot.pause()
        assert app.focused is field(app, "address")
        assert field(app, "address").selected_text == BED
        await pilot.press(*CAFE, "enter")  # typed over the prefilled address; enter moves on
        assert field(app, "address").value == CAFE
        assert app.focused is field(app, "state")
        await pilot.press(*"closed", "enter")
    assert app.result == (CAFE, "closed")


@pytest.mark.asyncio
async def test_tab_accepts_the_shown_completion_then_moves_on() -> None:
    app = Host()
    async with app.run_test() as pilot:
        await pilot.pause()
        assert app.focused is field(app, "address")
        await pilot.press(*CAFE[:6])
        await pilot.pause()
        await pilot.press("tab")  # the completion shown: taken, the focus stays
        completed = field(app, "address").value
        assert completed.lower().startswith(CAFE[:6].lower()) and completed in OBJECTS
        assert app.focused is field(app, "address")
        await pilot.press("tab")  # nothing more to complete: on to the state
        assert app.focused is field(app, "state")
        await pilot.press(*"closed", "enter")
    assert app.result == (completed, "closed")


@pytest.mark.asyncio
async def test_tab_on_a_kept_prefilled_address_moves_on_to_the_state() -> None:
    app = Host(BED)
    async with app.run_test() as pilot:
        await pilot.pause()
        await pilot.press("tab")
        assert app.focused is field(app, "state")
        assert field(app, "address").value == BED
        await pilot.press(*"made", "enter")
    assert app.result == (BED, "made")


# --- the interview's "thinking…" line --------------------------------------------------------------


class Interviewer(App[None]):
    """An app that opens the interview and holds each question's reply until the test gives it."""

    def __init__(self) -> None:
        super().__init__()
        self.replies: list = []

    def on_mount(self) -> None:
        self.push_screen(InterviewScreen(ISABELLA, lambda q, persona, reply: self.replies.append(reply)))


def chat(app: App) -> str:
    return "\n".join(line.text for line in app.screen.query_one("#chat", RichLog).lines)


@pytest.mark.asyncio
@pytest.mark.parametrize("reply", [("I run the cafe.", None), RuntimeError("the model is gone")],
                         ids=["answer", "error"])
async def test_the_thinking_line_goes_when_the_reply_comes(reply) -> None:
    app = Interviewer()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await pilot.press(*"Who are you?", "enter")
        await pilot.pause()
        assert len(app.replies) == 1
        assert "Isabella is thinking…" in screen_text(app)
        app.replies[0](reply)
        await pilot.pause()
        assert "thinking" not in screen_text(app) and "thinking" not in chat(app)
        said = "I run the cafe." if isinstance(reply, tuple) else "no answer: the model is gone"
        assert said in chat(app)
        await pilot.press(*"And?", "enter")  # the next question waits again
        await pilot.pause()
        assert len(app.replies) == 2 and "Isabella is thinking…" in screen_text(app)
