"""The TUI: keys drive the simulation through its worker, and the screen looks as it should.

Snapshots (tests/__snapshots__/test_tui/) are of the tiny town paused at tick 0; regenerate them
with `python3 -m pytest tests/test_tui.py --snapshot-update` and look at the SVGs before committing.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import timedelta
from pathlib import Path

import pytest
from textual.widgets import Static

from helpers import tiny_sim, wait_until
from smalltown.tui.app import SmalltownApp
from smalltown.tui.screens.help import HelpScreen


def clock_text(app: SmalltownApp) -> str:
    return str(app.query_one("#clock", Static).content)


def saved_tick(path: Path) -> int:
    conn = sqlite3.connect(path)
    try:
        (value,) = conn.execute("SELECT value FROM meta WHERE key='tick'").fetchone()
    finally:
        conn.close()
    return json.loads(value)


@pytest.mark.asyncio
async def test_keys_step_run_pause_help_and_quit_saving(tmp_path: Path) -> None:
    sim = tiny_sim(tmp_path)
    app = SmalltownApp(sim, start_paused=True)
    async with app.run_test(size=(80, 24)) as pilot:
        assert "06:00:00" in clock_text(app) and "tick 0" in clock_text(app)

        for _ in range(3):
            await pilot.press("n")
        await wait_until(pilot, lambda: app.frame.tick == 3)
        assert sim.tick == 3
        assert "02-13 06:00:30" in clock_text(app) and "tick 3" in clock_text(app)  # (80 columns: no century)
        assert not app.frame.running

        await pilot.press("space")
        await wait_until(pilot, lambda: app.frame.tick > 3)
        assert app.frame.running

        await pilot.press("space")
        await wait_until(pilot, lambda: not app.frame.running)
        paused_at = app.frame.tick
        await pilot.pause(0.5)
        assert sim.tick == paused_at == app.frame.tick  # paused: no tick in the meantime

        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)

        await pilot.press("q")
        await wait_until(pilot, lambda: app.return_code is not None)
    assert not app.is_running
    with pytest.raises(sqlite3.ProgrammingError):
        sim.save.conn.execute("SELECT 1")  # the app closed the save
    assert saved_tick(tmp_path / "tiny.sqlite") == paused_at


@pytest.mark.asyncio
async def test_running_pauses_by_itself_at_the_until_time(tmp_path: Path) -> None:
    sim = tiny_sim(tmp_path)
    until = sim.now + timedelta(seconds=5 * sim.world.step_seconds)
    app = SmalltownApp(sim, until=until)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.frame.tick >= 5 and not app.frame.running)
        await pilot.pause(0.3)
        assert sim.tick == app.frame.tick == 5
        await pilot.press("q")
        await wait_until(pilot, lambda: app.return_code is not None)
    assert saved_tick(tmp_path / "tiny.sqlite") == 5


@pytest.mark.asyncio
async def test_speed_keys_step_through_the_speeds(tmp_path: Path) -> None:
    app = SmalltownApp(tiny_sim(tmp_path), start_paused=True)
    async with app.run_test(size=(80, 24)) as pilot:
        assert app.frame.speed == 10
        await pilot.press("plus")
        await wait_until(pilot, lambda: app.frame.speed == 30)
        for _ in range(5):
            await pilot.press("minus")
        await wait_until(pilot, lambda: app.frame.speed == 1)  # the slowest, no lower
        assert not app.frame.running and app.frame.tick == 0  # speed changes do not tick


@pytest.mark.parametrize("size", [(80, 24), (160, 50)], ids=["80x24", "160x50"])
def test_screen_paused_at_tick_0(snap_compare, tmp_path: Path, size: tuple[int, int]) -> None:
    assert snap_compare(SmalltownApp(tiny_sim(tmp_path), start_paused=True), terminal_size=size)


@pytest.mark.asyncio
async def test_the_debugger_screens_open_on_the_selected_agent_and_close(tmp_path: Path) -> None:
    from smalltown.tui.screens.calls import CallsScreen
    from smalltown.tui.screens.inspector import InspectorScreen
    from smalltown.tui.screens.timeline import ConversationsScreen, TimelineScreen

    sim = tiny_sim(tmp_path)
    app = SmalltownApp(sim, start_paused=True)
    async with app.run_test(size=(80, 24)) as pilot:
        for _ in range(3):
            await pilot.press("n")
        await pilot.press("right_square_bracket")
        assert app.selected == sim.world.agents[1].name
        for key, screen in (("i", InspectorScreen), ("c", CallsScreen), ("t", TimelineScreen), ("d", ConversationsScreen)):
            await pilot.press(key)
            await pilot.pause()
            assert isinstance(app.screen, screen)
            await pilot.press("escape")
            await pilot.pause()
            assert not isinstance(app.screen, screen)
        await pilot.press("q")


def test_an_agents_symbol_comes_from_its_activity_not_its_place() -> None:
    from smalltown.tui.palette import state_symbol

    assert state_symbol("", "get dressed @ Willow Cottage: bedroom: Maria's bed") == "·"  # awake, by a bed
    assert state_symbol("asleep", "sleeping @ Willow Cottage: bedroom: Maria's bed") == "z"
    assert state_symbol("", "eat toast at the kitchen table @ Willow Cottage: kitchen: kitchen table") == "%"
    assert state_symbol("", "read a book @ Hobbs Cafe: cafe: cafe table") == "="
