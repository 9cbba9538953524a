"""The day view's second round: the names and the hour ruler stay in view on a small terminal, the
view of a run in progress (where the run is, the cursor there, following it), and why an empty
cell is empty."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from textual.widgets import Input, Static

from helpers import tiny_sim, wait_until
from smalltown.tui.app import SmalltownApp
from smalltown.tui.replay import ReplayApp
from smalltown.tui.screens.day import NAME_WIDTH, NOW_MARK, DayGrid, DayScreen


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny town from 06:00 to 14:00."""
    sim = tiny_sim(tmp_path_factory.mktemp("glance"), until="14:00")
    sim.close()
    return sim.save.path


def grid_lines(app) -> list[str]:
    return str(app.screen.query_one(DayGrid).content).split("\n")


def described(app) -> str:
    return str(app.screen.query_one("#day-cell", Static).content)


@pytest.mark.asyncio
async def test_at_60x20_the_names_stay_while_the_cursor_goes_to_23h(recorded: Path, tmp_path: Path) -> None:
    app = ReplayApp(shutil.copy(recorded, tmp_path / "tiny.sqlite"))
    async with app.run_test(size=(60, 20)) as pilot:
        await pilot.press("D")
        screen = app.screen
        assert screen.minutes == 30  # 48 cells do not fit in 44 columns: the grid scrolls sideways
        await pilot.press(*["right"] * 48)  # to the day's last cell, 23:30
        assert screen._cursor_time().hour == 23 and screen.left > 0
        lines = grid_lines(app)
        names = app.history.names
        assert [line[:NAME_WIDTH].strip() for line in lines[1:1 + len(names)]] == [n[:NAME_WIDTH - 1] for n in names]
        assert "22" in lines[0] and "00" not in lines[0][NAME_WIDTH:]  # the ruler shows the hours drawn
        assert all(len(line) <= 60 for line in lines)


@pytest.mark.asyncio
async def test_on_a_short_terminal_the_ruler_stays_while_the_rows_move(recorded: Path, tmp_path: Path) -> None:
    app = ReplayApp(shutil.copy(recorded, tmp_path / "tiny.sqlite"))
    async with app.run_test(size=(100, 7)) as pilot:  # two rows of agents under the ruler
        await pilot.press("D")
        names = app.history.names
        assert len(names) > 2
        await pilot.press(*["up"] * len(names), *["down"] * (len(names) - 1))  # to the last agent
        lines = grid_lines(app)
        assert len(lines) == 3
        assert lines[0].startswith(f"{len(names) - 1}–{len(names)} of {len(names)}") and "12" in lines[0]
        assert lines[2].startswith(names[-1][:NAME_WIDTH - 1])
        assert described(app).startswith(names[-1])


@pytest.mark.asyncio
async def test_a_click_picks_the_cell_drawn_under_it_when_scrolled(recorded: Path, tmp_path: Path) -> None:
    app = ReplayApp(shutil.copy(recorded, tmp_path / "tiny.sqlite"))
    async with app.run_test(size=(60, 20)) as pilot:
        await pilot.press("D")
        screen = app.screen
        await pilot.press(*["left"] * 48, *["right"] * 47)  # the window starts at 00:30 + 3 h
        left = screen.left
        assert left > 0
        await pilot.click(DayGrid, offset=(NAME_WIDTH + 2, 1 + 1))  # the second agent, 3rd column drawn
        assert screen.col == left + 2 and screen.row == 1


@pytest.mark.asyncio
async def test_an_empty_cell_says_why(recorded: Path, tmp_path: Path) -> None:
    app = ReplayApp(shutil.copy(recorded, tmp_path / "tiny.sqlite"))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("D")
        await pilot.press(*["left"] * 72)  # midnight: the run began at 06:00
        assert "before the run began (at Mon 06:00)" in described(app)
        await pilot.press(*["right"] * 72)  # 23:40: the save stops at 14:00
        assert "not reached yet: the run is recorded until Mon 14:00" in described(app)


@pytest.mark.asyncio
async def test_live_the_cursor_starts_where_the_run_is_and_follows_it(tmp_path: Path) -> None:
    sim = tiny_sim(tmp_path, until="08:00")
    app = SmalltownApp(sim, start_paused=True)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("D")
        screen = app.screen
        assert isinstance(screen, DayScreen)
        assert screen._cursor_time().strftime("%H:%M") == "07:40"  # the cell of 07:59:59, recorded
        assert "recorded until 08:00" in str(screen.query_one("#day-title", Static).content)
        assert grid_lines(app)[0][NAME_WIDTH + screen.col] == NOW_MARK
        assert not described(app).endswith("nothing recorded")
        await pilot.press("space")  # the town runs under the view; the cursor on the run's column follows
        await wait_until(pilot, lambda: screen.day.end.minute >= 21 or screen.day.end.hour > 8, seconds=20)
        await pilot.press("space")
        assert screen._cursor_time() >= screen.day.start.replace(hour=8)
        assert grid_lines(app)[0][NAME_WIDTH + screen.col] == NOW_MARK


@pytest.mark.asyncio
async def test_live_a_cursor_on_the_run_follows_it_into_the_next_day(tmp_path: Path) -> None:
    sim = tiny_sim(tmp_path, until="23:55")
    app = SmalltownApp(sim, start_paused=True)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("D")
        screen = app.screen
        first = screen.day.day
        app.action_until()  # to ten past midnight and no further (a free run may pass a whole day in seconds)
        await pilot.pause()
        app.screen.query_one("#answer", Input).value = "+15m"
        await pilot.press("enter")
        await wait_until(pilot, lambda: screen.day.day > first and not app.frame.running, seconds=30)
        assert "day 2 of 2" in str(screen.query_one("#day-title", Static).content)
        assert screen.col == screen._now_col()
