"""The timeline's header and its kinds picker tell one truth about what is shown (issue 14):
"perceived", hidden at first, reads as hidden in both, in the same words, and the rows agree;
shown from the picker, both say so."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.app import App
from textual.widgets import SelectionList, Static

from helpers import tiny_sim
from smalltown.tui.reader import SaveReader
from smalltown.tui.screens.timeline import KINDS, KindPicker, TimelineScreen, kinds_shown


class Host(App[None]):
    def __init__(self, path: Path) -> None:
        super().__init__()
        self.reader = SaveReader(path)

    def on_mount(self) -> None:
        self.push_screen(TimelineScreen(self.reader))

    def on_unmount(self) -> None:
        self.reader.close()


@pytest.fixture(scope="module")
def save(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny town's first waking hour: Isabella up and about, so she perceives things."""
    sim = tiny_sim(tmp_path_factory.mktemp("timeline"), until="07:00")
    path = sim.save.path
    sim.close()
    return path


def text(screen, selector: str) -> str:
    shown = screen.query_one(selector, Static).content
    return getattr(shown, "plain", str(shown))


def prompts(picker: KindPicker) -> dict[str, str]:
    sel = picker.query_one(SelectionList)
    return {sel.get_option_at_index(i).value: str(sel.get_option_at_index(i).prompt) for i in range(len(KINDS))}


def test_kinds_shown_names_what_is_hidden_or_what_is_left() -> None:
    assert kinds_shown(KINDS) == "all"
    assert kinds_shown(set(KINDS) - {"perceived"}) == "all but perceived"
    assert kinds_shown(["said", "reflected"]) == "said, reflected"
    assert kinds_shown([]) == "none"


@pytest.mark.asyncio
async def test_header_picker_and_rows_agree_about_perceived(save: Path) -> None:
    app = Host(save)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        timeline = app.screen
        assert "kinds all but perceived" in text(timeline, "#title")
        assert "perceived" not in {e.kind for e in timeline.table.items}

        await pilot.press("k")
        picker = app.screen
        assert isinstance(picker, KindPicker)
        said = prompts(picker)
        assert said["perceived"].endswith("hidden")
        assert [k for k, p in said.items() if "hidden" in p] == ["perceived", "decided"]
        assert text(picker, "#shown") == "shown: all but perceived, decided"  # the header's words

        for _ in range(KINDS.index("perceived")):
            await pilot.press("down")
        await pilot.press("enter")  # perceived: shown now
        assert "hidden" not in prompts(picker)["perceived"]
        assert text(picker, "#shown") == "shown: all but decided"
        await pilot.press("escape")

        assert app.screen is timeline
        assert text(timeline, "#title").endswith("kinds all but decided")
        assert "perceived" in {e.kind for e in timeline.table.items}
