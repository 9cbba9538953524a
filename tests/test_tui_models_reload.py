"""The models screen (m) keeps its counts of the calls up to date while it stays open on a running
town (issue 14): `reload()` counts only the calls saved since its last read, and its figures are
those of a fresh read of the whole log."""

from __future__ import annotations

import sqlite3
from io import StringIO
from pathlib import Path

import pytest
from rich.console import Console
from textual.widgets import Static

from helpers import tiny_sim, wait_until
from smalltown.sim.clock import parse_when
from smalltown.tui.app import SmalltownApp
from smalltown.tui.reader import SaveReader
from smalltown.tui.screens.models import CallTally, ModelsScreen, calls_text


def figures_text(screen: ModelsScreen) -> str:
    console = Console(width=200, file=StringIO(), color_system=None)
    with console.capture() as cap:
        console.print(screen.query_one("#figures", Static).content)
    return cap.get()


def whole_log(path: Path) -> str:
    """The figures as read from the whole call log at once (as the screen read them when opened)."""
    reader = SaveReader(path)
    try:
        _, prompt, cached, _ = reader.call_sums()
        return calls_text(reader.call_figures(), reader.call_sums(notes_only=True).calls, prompt, cached).plain
    finally:
        reader.close()


def saved_calls(path: Path) -> int:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT count(*) FROM llm_calls").fetchone()[0]
    finally:
        conn.close()


def test_a_tally_read_a_little_at_a_time_adds_up_to_the_whole_log(tmp_path: Path) -> None:
    sim = tiny_sim(tmp_path, until="06:20")
    path = sim.save.path
    reader = SaveReader(path)
    tally = CallTally()
    assert tally.read(reader)
    first = tally.calls
    assert first == saved_calls(path) > 0 and tally.text().plain == whole_log(path)
    assert not tally.read(reader)  # nothing new: nothing counted again
    assert tally.calls == first
    sim.run_until(parse_when("07:30", sim.now, sim.world.start))  # Klaus wakes: more calls, some noted
    sim.close()
    assert tally.read(reader)
    assert tally.calls == saved_calls(path) > first
    assert tally.text().plain == whole_log(path)
    reader.close()


@pytest.mark.asyncio
async def test_the_open_models_screen_counts_the_calls_the_running_town_makes(tmp_path: Path) -> None:
    sim = tiny_sim(tmp_path, until="06:30")
    path = tmp_path / "tiny.sqlite"
    app = SmalltownApp(sim, start_paused=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("m")
        screen = app.screen
        assert isinstance(screen, ModelsScreen)
        before = saved_calls(path)
        assert f"{before:,} calls so far" in figures_text(screen)
        for _ in range(3):
            app.action_faster()
        app.action_toggle()  # runs (as space does on the town), the screen still on top
        await wait_until(pilot, lambda: saved_calls(path) > before, seconds=20)
        await wait_until(pilot, lambda: f"{before:,} calls so far" not in figures_text(screen), seconds=5)
        app.action_toggle()
        await wait_until(pilot, lambda: not app.frame.running)
        await pilot.pause(0.6)  # the app reloads a screen at most every 0.5 s
        app.action_step()  # a tick's frame: the screen reads what was saved since
        await wait_until(pilot, lambda: " ".join(figures_text(screen).split()) == " ".join(whole_log(path).split()),
                         seconds=5)
        assert app.screen is screen
        await pilot.press("escape", "q")
        await wait_until(pilot, lambda: app.return_code is not None)
