"""The edit-object form (`e`): its focus and what Tab does, on the tiny town's objects.

Focus starts in the address, a prefilled one selected so that typing replaces it; Tab takes the
completion the field shows, and with none shown moves on to the state like enter does."""

from __future__ import annotations

import pytest
from textual.app import App
from textual.widgets import Input

from helpers import TINY
from smalltown.tui.screens.forms import EditObjectScreen
from smalltown.world.load import load_world

OBJECTS = {address: obj.initial_state for address, obj in load_world(TINY).objects.items()}
CAFE = next(a for a in OBJECTS if a.startswith("Hobbs Cafe:"))
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
