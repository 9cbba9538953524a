"""Starting paused, and the runs toward a goal: a step to an agent's next event (s) and a run until
a game time (g, --until) go at full speed whatever the display speed, show how far they have come,
say what they stopped on, and stop on space or esc (issue 14)."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest

import smalltown.tui.app
from smalltown.cli.main import main
from smalltown.tui.app import SmalltownApp
from smalltown.tui.session import run_tui
from smalltown.tui.snapshot import DEFAULT_SPEED, SPEEDS, Chase, Frame, span
from smalltown.tui.widgets.panels import ClockBar, EventLog
from helpers import TINY, screen_text, tiny_sim, wait_until

KLAUS = "Klaus Mueller"
DISPLAY_SPEED = SPEEDS[DEFAULT_SPEED]


def log_text(app: SmalltownApp) -> str:
    """The log as written: its wrapped lines joined up again."""
    return "".join(line.text for line in app.query_one(EventLog).lines)


def bar_text(app: SmalltownApp) -> str:
    return str(app.query_one(ClockBar).query_one("#status").render())


def recorded(app: SmalltownApp) -> list[Frame]:
    """Every frame the worker sends the app, as it sends it (a poll could miss one)."""
    frames: list[Frame] = []
    runner = app._runner
    publish = runner._publish
    runner._publish = lambda frame: (frames.append(frame), publish(frame))
    return frames


async def select(pilot, app: SmalltownApp, name: str) -> None:
    while app.selected != name:
        await pilot.press("right_square_bracket")


def test_progress_says_how_far_a_run_has_come() -> None:
    start = datetime(2023, 2, 13, 6, 0)
    until = Chase(start, until=datetime(2023, 2, 13, 8, 0))
    assert until.progress(start + timedelta(minutes=30)) == "until 08:00 · 25%"
    assert Chase(start, until=datetime(2023, 2, 14, 8, 0)).progress(start) == "until Tue 08:00 · 0%"
    step = Chase(start, agent=KLAUS)
    assert step.progress(start + timedelta(hours=6, minutes=12)) == f"awaiting {KLAUS}'s next event · 6h12m"
    assert [span(timedelta(seconds=s)) for s in (40, 600, 3600, 90000)] == ["40s", "10m", "1h", "1d1h"]


@pytest.mark.asyncio
async def test_the_tui_opens_paused_and_space_runs_it(tmp_path: Path) -> None:
    app = SmalltownApp(tiny_sim(tmp_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause(0.5)
        assert app.frame.tick == 0 and app.sim.tick == 0 and not app.frame.running
        assert "paused — space to run" in bar_text(app)
        assert log_text(app).startswith("The tiny town: 3 agents. Paused — space to run")
        await pilot.press("space")
        await wait_until(pilot, lambda: app.frame.tick > 3)
        assert app.frame.running and "running" in bar_text(app)


@pytest.mark.asyncio
async def test_an_app_started_running_runs(tmp_path: Path) -> None:
    app = SmalltownApp(tiny_sim(tmp_path), start_paused=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.frame.tick > 3)
        assert log_text(app).startswith("The tiny town: 3 agents. Running — space pauses")


def test_run_opens_the_tui_paused_unless_running_or_until_is_given(tmp_path: Path, monkeypatch) -> None:
    started: list[tuple[bool, datetime | None]] = []

    def run(app: SmalltownApp) -> None:  # instead of taking over the terminal: how it would start
        started.append((app.frame.running, app.frame.until))
        app.sim.close()

    monkeypatch.setattr(SmalltownApp, "run", run)
    monkeypatch.chdir(tmp_path)
    assert main(["run", str(TINY), "--save", "a.sqlite"]) == 0
    assert main(["run", "a.sqlite", "--running"]) == 0
    assert main(["run", "a.sqlite", "--until", "+1h"]) == 0
    assert [running for running, _ in started] == [False, True, True]
    assert started[2][1] is not None  # --until: running there
    assert run_tui(tiny_sim(tmp_path / "b")) == 0 and started[-1] == (False, None)


@pytest.mark.asyncio
async def test_s_runs_at_full_speed_to_a_sleeping_agents_waking_and_says_so(tmp_path: Path) -> None:
    app = SmalltownApp(tiny_sim(tmp_path, until="06:01"))  # Klaus sleeps until 07:00
    frames = recorded(app)
    async with app.run_test(size=(160, 40)) as pilot:
        await select(pilot, app, KLAUS)
        assert app.frame.speed == DISPLAY_SPEED
        await pilot.press("s")
        await wait_until(pilot, lambda: app.frame.stopped is not None, 60)
        stepping = [f for f in frames if f.chase is not None and f.running]
        assert stepping and all(f.speed is None for f in stepping)  # as fast as it goes
        assert app.frame.now == datetime(2023, 2, 13, 7, 0) and not app.frame.running
        assert app.frame.speed == DISPLAY_SPEED and app.frame.chase is None  # the speed is back
        log = log_text(app)
        assert f"{KLAUS} woke up: {KLAUS}: get out of bed" in log
        assert "at 07:00, after 59m of game time" in log
        assert "Breakpoint" not in log


@pytest.mark.asyncio
async def test_a_breakpoint_pauses_a_run_until_that_shows_its_progress_and_space_goes_on(tmp_path: Path) -> None:
    # Klaus wakes at 07:00 and enters the bathroom at about 07:11: before 09:00
    app = SmalltownApp(tiny_sim(tmp_path, until="06:00"))
    async with app.run_test(size=(160, 40)) as pilot:
        app._add_breakpoint("enter", KLAUS, "")
        await pilot.press("g", *"09:00", "enter")
        await wait_until(pilot, lambda: bool(app.frame.hits), 60)
        assert not app.frame.running and app.frame.chase is not None
        assert "Breakpoint #1: Klaus Mueller enters" in log_text(app)
        done = int(100 * (app.frame.now - datetime(2023, 2, 13, 6)).total_seconds() / 10800)
        assert f"until 09:00 · {done}%" in bar_text(app)
        assert "paused — space to run" in bar_text(app)

        app._remove_breakpoint(1)
        await pilot.press("space")  # on toward 09:00
        await wait_until(pilot, lambda: app.frame.stopped is not None, 60)
        assert app.frame.now == datetime(2023, 2, 13, 9, 0) and not app.frame.running
        assert "Reached 09:00 (Mon 2023-02-13), after 3h of game time: paused." in log_text(app)
        assert app.frame.speed == DISPLAY_SPEED and "until" not in bar_text(app)


@pytest.mark.asyncio
async def test_space_or_esc_gives_up_a_run_until_and_pauses(tmp_path: Path) -> None:
    app = SmalltownApp(tiny_sim(tmp_path))
    async with app.run_test(size=(160, 40)) as pilot:
        for key in ("space", "escape"):
            # far enough to be caught under way: the tiny town's quiet nights run two game days in ~0.1 s
            until = app.frame.now + timedelta(days=60)
            await pilot.press("g", *"+60d", "enter")
            await wait_until(pilot, lambda: app.frame.chase is not None and app.frame.running)
            await pilot.press(key)
            await wait_until(pilot, lambda: not app.frame.running)
            assert app.frame.chase is None and app.frame.stopped is None  # given up, not reached
            assert app.frame.now < until
            # said once, and last (the log keeps a bounded number of lines: a long run pushes the
            # first give-up's line out, so earlier ones are not counted)
            assert log_text(app).count(f"Stopped short of {until:%a %H:%M} at ") == 1
            assert log_text(app).rindex("Stopped short of") == log_text(app).index(f"Stopped short of {until:%a %H:%M} at ")
            assert app.frame.speed == DISPLAY_SPEED
        stopped_at = app.frame.tick
        await pilot.press("escape")  # nothing under way: it changes nothing
        await pilot.pause(0.3)
        assert not app.frame.running and app.sim.tick == stopped_at
