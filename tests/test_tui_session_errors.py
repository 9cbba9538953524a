"""A session of `smalltown run` in the TUI when a file will not open (issue 14): what the O dialog
can know (a missing path, a folder, a text file that is no world, a world with problems, a file
named as a save that is none, a save whose rows fail their checks) it refuses before the app ends;
a file refused only on opening sends the user back to the run they had, paused, with the error as
the first note of its log, nothing lost and the file untouched. Save as and fork refuse a missing
folder in their dialog, as --save does. Driven through `main` (tests/sessions.py)."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Static

from helpers import TINY, cli, query, wait_until
from sessions import answer, log_of, session, started
from smalltown.tui.screens.forms import AskScreen

SCRIPTED = ("--backend", "scripted")


def _edited(base: Path, to: Path, sql: str) -> Path:
    """A copy of `base` with one thing broken, as a stranger's save could be (tests/hostile)."""
    shutil.copy(base, to)
    conn = sqlite3.connect(to)
    with conn:
        conn.execute(sql)
    conn.close()
    return to


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    """A tiny save, run from 06:00 to 06:30."""
    save = tmp_path_factory.mktemp("base") / "tiny.sqlite"
    cli("run", TINY, "--headless", "--until", "6:30", "--save", save, *SCRIPTED, check=True)
    return save


def _tick(save: Path) -> int:
    return int(query(save, "SELECT value FROM meta WHERE key = 'tick'")[0][0])


def _error(pilot: Pilot) -> str:
    return str(pilot.app.screen.query_one("#error", Static).content)


def test_a_save_refused_on_opening_sends_the_user_back_paused_with_the_error(tmp_path, base, monkeypatch, capsys):
    mine = tmp_path / "mine.sqlite"
    # its rows pass every reader's checks; its town cannot come back: known only by opening it
    late = _edited(base, tmp_path / "late.sqlite", "UPDATE meta SET value = '90000000000' WHERE key = 'tick'")
    before = late.read_bytes()
    ran: list[int] = []

    async def run_then_open(pilot: Pilot) -> None:
        await started(pilot)
        await pilot.press("space")  # paused: what it ran is committed
        await wait_until(pilot, lambda: not pilot.app.frame.running)
        ran.append(pilot.app.frame.tick)
        await pilot.press("O")
        answer(pilot, str(late))
        await pilot.press("enter")  # the dialog lets it through: the app ends to open it

    async def back_in_mine(pilot: Pilot) -> None:
        app = pilot.app
        assert app.sim.save.path == mine
        assert not app.frame.running  # paused
        assert app.frame.tick == ran[0]  # nothing lost
        first = log_of(app).splitlines()[0]
        assert first.startswith(f"Could not open {late}: ") and "past the game's last time" in first
        assert f"Back in {mine}, paused" in first
        await pilot.press("space")
        await wait_until(pilot, lambda: app.frame.tick > ran[0])  # the user goes on with the run
        await pilot.press("q")

    code, apps = session(monkeypatch, ["run", TINY, "--save", mine, *SCRIPTED], [run_then_open, back_in_mine])
    assert code == 0 and len(apps) == 2
    assert late.read_bytes() == before  # the file that did not open is untouched
    assert _tick(mine) > ran[0]
    assert f"continue it: smalltown run {mine}" in capsys.readouterr().err


def test_the_open_dialog_refuses_what_it_can_know_and_the_run_goes_on(tmp_path, base, monkeypatch):
    folder = tmp_path / "a-folder.toml"
    folder.mkdir()
    (notes := tmp_path / "notes.txt").write_text("Remember to buy milk.\n")
    (not_a_world := tmp_path / "other.toml").write_text("[tool.black]\nline-length = 100\n")
    (junk := tmp_path / "junk.sqlite").write_text("not a database")
    negative = _edited(base, tmp_path / "negative.sqlite", "UPDATE meta SET value = '-5' WHERE key = 'tick'")
    refusals = [(tmp_path / "missing.sqlite", "no such file"), (folder, "a folder, not a file"),
                (notes, "TOML syntax"), (not_a_world, "name: required field is missing"),
                (junk, "not a smalltown save"), (negative, "is not a tick")]

    async def refused(pilot: Pilot) -> None:
        await pilot.press("O")
        for path, why in refusals:
            answer(pilot, str(path))
            await pilot.press("enter")
            assert isinstance(pilot.app.screen, AskScreen), path  # still asking: the app goes on
            assert str(path) in _error(pilot) and why in _error(pilot), _error(pilot)
        await pilot.press("escape")
        await started(pilot)
        await pilot.press("q")

    code, apps = session(monkeypatch, ["run", TINY, "--save", tmp_path / "mine.sqlite", *SCRIPTED], [refused])
    assert code == 0 and len(apps) == 1


@pytest.mark.parametrize("key", ["S", "F"])
def test_save_as_and_fork_refuse_a_missing_folder_in_their_dialog(tmp_path, monkeypatch, key):
    missing = tmp_path / "no" / "such"

    async def refused(pilot: Pilot) -> None:
        await pilot.press(key)
        answer(pilot, str(missing / "copy.sqlite"))
        await pilot.press("enter")
        assert isinstance(pilot.app.screen, AskScreen)
        assert f"the folder {missing} does not exist" in _error(pilot)
        await pilot.press("escape", "q")

    code, apps = session(monkeypatch, ["run", TINY, "--save", tmp_path / "mine.sqlite", *SCRIPTED], [refused])
    assert code == 0 and len(apps) == 1
    assert not (tmp_path / "no").exists()
