"""A rewind (r) goes on in a new file of the same town, and keeps what the user set up for it: the
breakpoints, the display speed, the event log and the agent selected; save as (S) after it
proposes a name from the save now open, not the one the run came from. Driven through the command
line's own path (tests/sessions.py)."""

from __future__ import annotations

from textual.pilot import Pilot
from textual.widgets import Input

from helpers import TINY, cli, wait_until
from sessions import answer, log_of, session
from smalltown.tui.snapshot import SPEEDS
from smalltown.tui.screens.forms import AskScreen


def test_rewind_keeps_breakpoints_speed_log_and_selection(tmp_path, monkeypatch):
    save = tmp_path / "tiny.sqlite"
    cli("run", TINY, "--headless", "--until", "7:30", "--save", save, "--backend", "scripted", check=True)
    rewound = tmp_path / "tiny-at-0710.sqlite"
    before: dict = {}

    async def set_up_then_rewind(pilot: Pilot) -> None:
        app = pilot.app
        second = app._names[1]
        await pilot.press("right_square_bracket")  # the second agent under the lens
        assert app._add_breakpoint("talk", second, "") is None
        assert app._add_breakpoint("call", None, "daily_plan") is None
        for _ in range(2):
            await pilot.press("plus")  # 10 -> 30 -> 60 ticks a second
        await wait_until(pilot, lambda: app.frame.speed == 60 and len(app.frame.breakpoints) == 2)
        before.update(breaks=[b.describe() for b in app.frame.breakpoints], selected=second)
        await pilot.press("r")
        answer(pilot, "7:10")
        await pilot.press("enter")

    async def in_the_rewound(pilot: Pilot) -> None:
        app = pilot.app
        assert app.sim.save.path == rewound
        await wait_until(pilot, lambda: len(app.frame.breakpoints) == 2)  # (the worker's first frame)
        assert [b.describe() for b in app.frame.breakpoints] == before["breaks"]
        assert app.frame.speed == 60 == SPEEDS[app._runner._speed]
        assert app.selected == before["selected"]
        log = log_of(app)
        assert "Breakpoint set:" in log and "Rewound to Mon 07:" in log  # the run's log goes on
        assert log.index("Rewound to") < log.index(f"Saving to {rewound}")
        # a new breakpoint gets the next number, not #1 again
        assert app._add_breakpoint("reflect", None, "") is None
        await wait_until(pilot, lambda: len(app.frame.breakpoints) == 3)
        assert sorted(b.id for b in app.frame.breakpoints) == [1, 2, 3]
        await pilot.press("S")  # save as: named from the save you are on
        await wait_until(pilot, lambda: isinstance(app.screen, AskScreen))
        assert app.screen.query_one("#answer", Input).value == str(tmp_path / "tiny-at-0710-copy.sqlite")
        await pilot.press("escape")
        await pilot.press("q")

    code, apps = session(monkeypatch, ["run", save, "--backend", "scripted"], [set_up_then_rewind, in_the_rewound])
    assert code == 0 and len(apps) == 2


def test_opening_another_file_starts_afresh(tmp_path, monkeypatch):
    """Open (O) is another run: none of the last one's breakpoints or speed."""
    first, other = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    cli("run", TINY, "--headless", "--until", "+10m", "--save", other, "--backend", "scripted", check=True)

    async def set_up_then_open(pilot: Pilot) -> None:
        assert pilot.app._add_breakpoint("reflect", None, "") is None
        await pilot.press("plus")
        await wait_until(pilot, lambda: pilot.app.frame.breakpoints)
        await pilot.press("O")
        answer(pilot, str(other))
        await pilot.press("enter")

    async def in_the_other(pilot: Pilot) -> None:
        assert pilot.app.sim.save.path == other
        assert pilot.app.frame.breakpoints == () and pilot.app.frame.speed == 10
        assert "Breakpoint set:" not in log_of(pilot.app)
        await pilot.press("q")

    code, apps = session(monkeypatch, ["run", TINY, "--save", first, "--backend", "scripted"],
                         [set_up_then_open, in_the_other])
    assert code == 0 and len(apps) == 2
