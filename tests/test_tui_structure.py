"""The TUI's shape: what is shown is the app's reactive `frame` and `selected` (setting one draws
it, as in Textual's own apps), and no module of the TUI grows past the project's size limit."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from helpers import tiny_sim
from smalltown.tui.app import SmalltownApp
from smalltown.tui.widgets.map_view import MapView
from smalltown.tui.widgets.panels import AgentsPanel, EventLog

TUI = Path(__file__).resolve().parent.parent / "smalltown" / "tui"
MAX_LINES = 400  # DESIGN.md: small modules


def test_no_tui_module_is_over_the_size_limit() -> None:
    sizes = {str(p.relative_to(TUI)): len(p.read_text().splitlines()) for p in TUI.rglob("*.py")}
    assert {name: n for name, n in sizes.items() if n > MAX_LINES} == {}


@pytest.mark.asyncio
async def test_setting_the_selection_or_the_frame_draws_it(tmp_path: Path) -> None:
    sim = tiny_sim(tmp_path)
    app = SmalltownApp(sim, start_paused=True)
    async with app.run_test(size=(120, 40)) as pilot:
        other = app.frame.agents[-1].name
        assert app.selected != other
        app.selected = other
        await pilot.pause()
        assert app.query_one(MapView).selected == app.query_one(AgentsPanel).selected == other
        assert f"Selected {other}." in "\n".join(line.text for line in app.query_one(EventLog).lines)

        alone = replace(app.frame, agents=app.frame.agents[:1])
        app.frame = alone
        await pilot.pause()
        assert app.query_one(MapView)._agents == alone.agents  # what the map draws
