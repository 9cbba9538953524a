"""The day at a glance (D): a row per agent across the day, live and in replay; the cursor's cell
described below; enter goes there (replay) or says how to see it (live).

Its snapshot (tests/__snapshots__/test_tui_dayview/) is the tiny town run by the scripted backend
from 06:00 to 14:00, at 100x30; regenerate it with
`python3 -m pytest tests/test_tui_dayview.py --snapshot-update` and look at the SVG."""

from __future__ import annotations

import shutil
from datetime import datetime
from pathlib import Path

import pytest
from textual.widgets import Static

from helpers import GULLHAVEN, tiny_sim, wait_until
from smalltown.scripted import ScriptedBackend
from smalltown.sim.open import create
from smalltown.tui.app import SmalltownApp
from smalltown.tui.replay import ReplayApp
from smalltown.tui.screens.day import DayScreen, slot_minutes
from smalltown.tui.widgets.panels import EventLog
from smalltown.world.load import load_world


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny town from 06:00 to 14:00: everyone has slept, eaten and gone to work."""
    sim = tiny_sim(tmp_path_factory.mktemp("day"), until="14:00")
    sim.close()
    return sim.save.path


def described(app) -> str:
    return str(app.screen.query_one("#day-cell", Static).content)


def test_the_cells_are_as_fine_as_the_width_allows() -> None:
    assert slot_minutes(200) == 10
    assert slot_minutes(100) == 20
    assert slot_minutes(40) == 30  # the whole day does not fit: 30 minutes a cell, scrolled


@pytest.mark.asyncio
async def test_replay_opens_the_day_and_the_cursor_describes_its_cell(recorded: Path, tmp_path: Path) -> None:
    save = shutil.copy(recorded, tmp_path / "tiny.sqlite")
    app = ReplayApp(save)
    async with app.run_test(size=(100, 30)) as pilot:
        first = app.selected
        await pilot.press("D")
        assert isinstance(app.screen, DayScreen)
        # the cursor starts on the selected agent at the replay's moment, the save's last: the
        # cell of 13:40, the last one recorded
        assert described(app).startswith(f"{first} ")
        assert app.screen._cursor_time().strftime("%H:%M") == "13:40"
        await pilot.press("up", *["left"] * 20)  # 20 minutes a cell: 07:00
        assert app.screen.row == 0
        text = described(app)
        assert text.startswith(app.history.names[0]) and "–" in text and " at " in text


@pytest.mark.asyncio
async def test_enter_in_replay_seeks_there_with_that_agent_selected(recorded: Path, tmp_path: Path) -> None:
    save = shutil.copy(recorded, tmp_path / "tiny.sqlite")
    app = ReplayApp(save)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("D")
        screen = app.screen
        await pilot.press("down", *["left"] * 11)  # the second agent, from 13:40 to 10:00
        agent = app.history.names[1]
        cell = screen._cells[agent][screen.col]
        when = max(screen.day.start.replace(hour=10), cell.span.start)
        await pilot.press("enter")
        assert not isinstance(app.screen, DayScreen)
        assert app.selected == agent
        assert app.tick == app.history.tick_of(when)
        assert app.history.time_of(app.tick).strftime("%H:%M") == when.strftime("%H:%M")


@pytest.mark.asyncio
async def test_a_click_on_a_cell_goes_there(recorded: Path, tmp_path: Path) -> None:
    save = shutil.copy(recorded, tmp_path / "tiny.sqlite")
    app = ReplayApp(save)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("D")
        # the grid: a ruler line, then a row per agent; 16 columns of names, then 20 minutes a cell
        await pilot.click("#day-grid", offset=(16 + 3 * 9, 1 + 2))  # the third agent at 09:00
        assert not isinstance(app.screen, DayScreen)
        assert app.selected == app.history.names[2]
        assert app.history.time_of(app.tick) >= datetime(2023, 2, 13, 9)


@pytest.mark.asyncio
async def test_live_the_day_opens_reloads_and_enter_says_how_to_replay_that_moment(tmp_path: Path) -> None:
    sim = tiny_sim(tmp_path, until="08:00")
    app = SmalltownApp(sim, start_paused=True)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("D")
        screen = app.screen
        assert isinstance(screen, DayScreen)
        before = screen.day.end
        await pilot.press("space")  # the town runs on under the view: today's rows grow
        await wait_until(pilot, lambda: screen.day.end > before)
        await pilot.press("space")
        await pilot.press("down", "left", "left")
        agent = app._names[1]
        await pilot.press("enter")
        assert not isinstance(app.screen, DayScreen)
        assert app.selected == agent
        log = " ".join(" ".join(line.text for line in app.query_one(EventLog).lines).split())  # unwrapped
        assert f"smalltown replay {sim.save.path} --at '2023-02-13 07:" in log


@pytest.mark.asyncio
async def test_another_world_has_its_day_too(tmp_path: Path) -> None:
    """Nothing in the view names a world: Gullhaven's people and places fill it."""
    world = load_world(GULLHAVEN)
    sim = create(world, tmp_path / "gull.sqlite", ScriptedBackend(world.seed))
    sim.run_until(world.start.replace(hour=world.start.hour + 3))
    sim.close()
    app = ReplayApp(tmp_path / "gull.sqlite")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("D")
        day = app.screen.day
        assert set(day.spans) == {a.name for a in world.agents}
        assert all(day.spans[a.name] for a in world.agents)
        assert described(app).startswith(app.selected)


def test_day_view_snapshot(snap_compare, recorded: Path, tmp_path: Path) -> None:
    save = shutil.copy(recorded, tmp_path / "tiny.sqlite")
    assert snap_compare(ReplayApp(save), terminal_size=(100, 30), press=["D", "left", "left"])
