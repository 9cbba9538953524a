"""Replay's `g` (go to a time) reads a game time as the live TUI and the command line do: "day N"
counts from the world's first day, not from the day shown; a bare clock time past the run's end is
the last one that happened (issue 14)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from helpers import TINY, cli
from smalltown.tui.replay import ReplayApp
from smalltown.tui.screens.forms import AskScreen



@pytest.fixture(scope="module")
def two_days(tmp_path_factory) -> Path:
    """The tiny town, scripted, from the first morning (06:00) to 08:00 on the second day."""
    save = tmp_path_factory.mktemp("goto") / "tiny.sqlite"
    cli("run", TINY, "--headless", "--until", "day 2 8:00", "--save", save, "--backend", "scripted", check=True)
    return save


@pytest.mark.asyncio
@pytest.mark.parametrize("text, expected", [
    ("day 1 7:00", datetime(2023, 2, 13, 7)),  # (read from the day shown, it was the second day's 7:00)
    ("day 2 7:00", datetime(2023, 2, 14, 7)),
    ("9:00", datetime(2023, 2, 13, 9)),  # the second day's 9:00 is past the end: the last one that was
    ("2023-02-13 12:00", datetime(2023, 2, 13, 12)),
])
async def test_go_to_reads_day_n_from_the_worlds_first_day(two_days: Path, text: str, expected: datetime) -> None:
    app = ReplayApp(two_days)  # at its end: the second day, 08:00
    async with app.run_test(size=(140, 44)) as pilot:
        assert app.history.time_of(app.tick) == datetime(2023, 2, 14, 8)
        await pilot.press("g")
        assert isinstance(app.screen, AskScreen)
        await pilot.press(*text, "enter")
        await pilot.pause()
        assert not isinstance(app.screen, AskScreen)
        assert app.history.time_of(app.tick) == expected
