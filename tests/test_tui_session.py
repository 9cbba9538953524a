"""A session of `smalltown run` in the TUI, through the command line's own path (`main` ->
`start_tui` -> `run_tui`): save as, open and rewind go on in the file they name, with the run's
backend; quitting (q, Ctrl-C, SIGTERM) says where the save is and how to continue and replay it.
Each app `run_tui` starts is run headless by Textual, driven by the next of a list of scripts
(tests/sessions.py)."""

from __future__ import annotations

import os
import signal

import pytest
from textual.pilot import Pilot

from helpers import SMALLVILLE, TINY, cli, query, wait_until
from sessions import answer as _answer, log_of as _log, session as _session, started as _started
from smalltown.tui.app import SmalltownApp


def test_save_as_goes_on_in_the_copy_and_quitting_says_where(tmp_path, monkeypatch, capsys):
    first, copy = tmp_path / "a.sqlite", tmp_path / "b.sqlite"

    async def save_as(pilot: Pilot) -> None:
        await _started(pilot)
        await pilot.press("S")
        _answer(pilot, str(copy))
        await pilot.press("enter")

    async def in_the_copy(pilot: Pilot) -> None:
        assert pilot.app.sim.save.path == copy
        assert f"Saving to {copy}" in _log(pilot.app)
        copied = pilot.app.frame.tick
        await pilot.press("space")  # (a file opened in the TUI opens paused)
        await wait_until(pilot, lambda: pilot.app.frame.tick > copied + 1)
        await pilot.press("q")

    code, apps = _session(monkeypatch, ["run", TINY, "--save", first, "--backend", "scripted"], [save_as, in_the_copy])
    assert code == 0 and len(apps) == 2
    tick = int(query(copy, "SELECT value FROM meta WHERE key = 'tick'")[0][0])
    assert tick > int(query(first, "SELECT value FROM meta WHERE key = 'tick'")[0][0])  # it ran on in the copy
    err = capsys.readouterr().err
    assert f"saving to {first}" in err
    assert f"saved in {copy} at " in err and f"(tick {tick}, its last whole tick)" in err
    assert f"continue it: smalltown run {copy}" in err
    assert f"replay it:   smalltown replay {copy}" in err


def test_open_runs_another_world_and_a_fork_opens_as_its_message_says(tmp_path, monkeypatch, capsys, user_folders):
    fork = tmp_path / "a-fork.sqlite"

    async def fork_then_open_it(pilot: Pilot) -> None:
        await _started(pilot)
        await pilot.press("F")
        _answer(pilot, str(fork))
        await pilot.press("enter")
        await wait_until(pilot, lambda: "Open the fork with O" in _log(pilot.app))
        await pilot.press("O")
        _answer(pilot, str(fork))
        await pilot.press("enter")

    async def on_the_fork_open_a_world(pilot: Pilot) -> None:
        assert pilot.app.sim.save.path == fork
        await pilot.press("O")
        _answer(pilot, str(SMALLVILLE))
        await pilot.press("enter")

    async def on_the_world(pilot: Pilot) -> None:
        app = pilot.app
        assert len(app.frame.agents) == 25  # (the other world: tiny has 3)
        assert app.sim.save.path.parent == user_folders / "data" / "smalltown" / "saves"
        await pilot.press("ctrl+c")  # leaves as q does, and the command exits 130

    code, apps = _session(monkeypatch, ["run", TINY, "--save", tmp_path / "a.sqlite", "--backend", "scripted"],
                          [fork_then_open_it, on_the_fork_open_a_world, on_the_world])
    assert code == 130 and len(apps) == 3
    new = apps[2].sim.save.path
    assert new.name.startswith(SMALLVILLE.stem) and new.is_file()
    assert f"continue it: smalltown run {new}" in capsys.readouterr().err


def test_rewind_goes_on_in_the_new_save_from_the_time_asked(tmp_path, monkeypatch, capsys):
    save = tmp_path / "tiny.sqlite"
    cli("run", TINY, "--headless", "--until", "7:30", "--save", save, "--backend", "scripted", check=True)
    rewound = tmp_path / "tiny-at-0710.sqlite"

    async def rewind(pilot: Pilot) -> None:
        await pilot.press("r")
        _answer(pilot, "7:10")
        await pilot.press("enter")

    async def in_the_rewound(pilot: Pilot) -> None:
        app = pilot.app
        assert app.sim.save.path == rewound
        assert "07:00" <= app.frame.now.strftime("%H:%M") < "07:10"  # from the snapshot at or before 7:10
        start = app.frame.tick
        await pilot.press("space")
        await wait_until(pilot, lambda: app.frame.tick > start)  # it runs on there
        await pilot.press("q")

    code, _ = _session(monkeypatch, ["run", save, "--backend", "scripted"], [rewind, in_the_rewound])
    assert code == 0
    assert query(save, "SELECT value FROM meta WHERE key = 'game_time'")[0][0] >= '"2023-02-13 07:30:00"'
    assert f"continue it: smalltown run {rewound}" in capsys.readouterr().err


def test_sigterm_ends_the_tui_and_says_where_the_save_is(tmp_path, monkeypatch, capsys):
    save = tmp_path / "a.sqlite"

    async def terminate(pilot: Pilot) -> None:
        await _started(pilot)
        os.kill(os.getpid(), signal.SIGTERM)
        await wait_until(pilot, lambda: pilot.app.terminated)

    code, _ = _session(monkeypatch, ["run", TINY, "--save", save, "--backend", "scripted"], [terminate])
    assert code == 143
    err = capsys.readouterr().err
    assert f"saved in {save} at 2023-02-13 " in err and f"replay it:   smalltown replay {save}" in err


@pytest.mark.asyncio
async def test_ctrl_c_quits_as_q_does(tmp_path):
    from helpers import tiny_sim

    app = SmalltownApp(tiny_sim(tmp_path), start_paused=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+c")
        await wait_until(pilot, lambda: app.return_code is not None)
    assert app.return_code == 0 and app._closed
