"""The save file alone is the whole run once its writer has closed: every writer folds its log in
on close, even with a reader open beside it (the TUI's screens, `inspect`, any SQLite tool). Copying
only NAME.sqlite after a TUI quit (q, Ctrl-C) or a headless stop (SIGINT) gives the last tick. And
`save info` says when a -wal beside a save holds ticks the file alone does not."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import ROOT, TINY, cli, tiny_sim, wait_until
from smalltown.store.save import open_reader
from smalltown.tui.app import SmalltownApp


def tick_of_file_alone(path: Path, tmp: Path) -> int:
    """The tick of a copy of the file only (what a user shares), opened as any SQLite tool does."""
    copy = tmp / "copied" / path.name
    copy.parent.mkdir(exist_ok=True)
    shutil.copy(path, copy)
    conn = sqlite3.connect(copy)
    try:
        return json.loads(conn.execute("SELECT value FROM meta WHERE key = 'tick'").fetchone()[0])
    finally:
        conn.close()


@pytest.mark.asyncio
@pytest.mark.parametrize("key", ["q", "ctrl+c"])
async def test_the_file_alone_has_the_last_tick_after_the_tui_quits_while_running(tmp_path: Path, key: str):
    sim = tiny_sim(tmp_path)
    app = SmalltownApp(sim, start_paused=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app.frame.tick > 150, 60)  # (its screens' reader is open meanwhile)
        await pilot.press(key)
        await wait_until(pilot, lambda: app.return_code is not None, 20)
    save = tmp_path / "tiny.sqlite"
    assert sim.tick > 150
    assert tick_of_file_alone(save, tmp_path) == sim.tick
    assert not Path(f"{save}-wal").exists()  # (the reader closed first: the writer's close removed the log)


def test_a_writer_closed_beside_an_open_reader_leaves_the_file_whole(tmp_path: Path):
    """The root of it: SQLite folds the log in only at the last connection's close; a reader
    open beside the writer kept the last ticks in the -wal."""
    sim = tiny_sim(tmp_path)
    save = tmp_path / "tiny.sqlite"
    reader = sqlite3.connect(f"{save.as_uri()}?mode=ro", uri=True)  # (as Datasette or sqlite3 would)
    store_reader = open_reader(save)  # (as the TUI's screens and `inspect` beside a run do)
    try:
        sim.run_until(sim.now.replace(hour=8))
        last = sim.tick
        sim.close()
        assert json.loads(reader.execute("SELECT value FROM meta WHERE key='tick'").fetchone()[0]) == last
        assert tick_of_file_alone(save, tmp_path) == last > 0
        assert os.path.getsize(f"{save}-wal") == 0  # (still there: the readers hold it open)
    finally:
        reader.close()
        store_reader.close()


def test_the_file_alone_has_the_last_tick_after_a_headless_run_is_stopped(tmp_path: Path):
    save = tmp_path / "town.sqlite"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "smalltown", "run", str(TINY), "--headless", "--backend",
                             "scripted", "--until", "+3d", "--save", str(save)], env=env, cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    reader = None
    try:
        deadline = time.monotonic() + 60
        while not save.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        reader = sqlite3.connect(f"{save.as_uri()}?mode=ro", uri=True)  # a reader open while it runs
        tick = lambda: json.loads(reader.execute("SELECT value FROM meta WHERE key='tick'").fetchone()[0])  # noqa: E731
        while tick() < 600 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert proc.poll() is None, "the run ended before it could be stopped"
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
        assert proc.returncode == 130, err
        last = tick()  # (through the log, if any: the run's last whole tick)
        said = json.loads(reader.execute("SELECT value FROM meta WHERE key='game_time'").fetchone()[0])
        assert f"→ {said}" in err, err  # (the time the run says it stopped at)
        assert tick_of_file_alone(save, tmp_path) == last >= 600
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if reader is not None:
            reader.close()


def _with_unfolded_ticks(src: Path, dst: Path, ticks: int) -> int:
    """`dst`: the save `src` with a -wal beside it whose last commit moves the clock `ticks` on (a
    commit the file does not hold, as a run killed before it closed leaves); returns the file's tick."""
    shutil.copy(src, dst)
    conn = sqlite3.connect(dst, isolation_level=None)
    conn.execute("PRAGMA wal_autocheckpoint=0")
    tick = json.loads(conn.execute("SELECT value FROM meta WHERE key='tick'").fetchone()[0])
    conn.execute("UPDATE meta SET value=? WHERE key='tick'", (json.dumps(tick + ticks),))
    folder = dst.parent / "left"
    folder.mkdir()
    for suffix in ("", "-wal"):
        shutil.copy(f"{dst}{suffix}", folder / f"{dst.name}{suffix}")  # (as a killed process leaves them)
    conn.close()
    shutil.move(folder / dst.name, dst)
    shutil.move(folder / f"{dst.name}-wal", f"{dst}-wal")
    return tick


def test_save_info_warns_of_a_log_holding_ticks_the_file_alone_does_not(tmp_path: Path):
    made = tmp_path / "made.sqlite"
    cli("run", "--headless", TINY, "--until", "+1h", "--save", made, "--backend", "scripted", check=True)
    quiet = cli("save", "info", made, "--json", check=True)
    assert json.loads(quiet.stdout)["wal"] is None and "warning" not in cli("save", "info", made).stdout
    save = tmp_path / "left.sqlite"
    tick = _with_unfolded_ticks(made, save, 5)
    info = json.loads(cli("save", "info", save, "--json", check=True).stdout)
    assert info["tick"] == tick + 5
    assert {k: info["wal"][k] for k in ("file_tick", "tick", "writer")} == {"file_tick": tick, "tick": tick + 5,
                                                                          "writer": False}
    text = cli("save", "info", save, check=True).stdout
    assert f"warning: left.sqlite-wal" in text and f"ticks {tick + 1} to {tick + 5}" in text
    assert f"left.sqlite alone does not (it is at tick {tick})" in text
    from smalltown.store.save import Save

    Save.open(save).close()  # opened to write once: folded in, as the warning says
    assert tick_of_file_alone(save, tmp_path) == tick + 5
    assert json.loads(cli("save", "info", save, "--json", check=True).stdout)["wal"] is None


def test_save_info_says_a_running_writer_holds_the_last_ticks_in_its_log(tmp_path: Path):
    """While a run writes, its last ticks are in the log until a checkpoint (the writer's own comes
    at 2,000 pages): `save info` says a run is writing, and after its close says nothing."""
    from datetime import timedelta

    sim = tiny_sim(tmp_path)
    save = tmp_path / "tiny.sqlite"
    try:
        sim.run_until(sim.now + timedelta(minutes=20))
        info = json.loads(cli("save", "info", save, "--json", check=True).stdout)
        assert info["tick"] == sim.tick and info["wal"]["writer"] is True
        assert info["wal"]["file_tick"] < sim.tick and "a run is writing this save" in info["wal"]["says"]
    finally:
        sim.close()
    assert json.loads(cli("save", "info", save, "--json", check=True).stdout)["wal"] is None
