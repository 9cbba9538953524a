"""Crash safety: a run killed again and again ends where an unbroken one does; a full disk or a
read-only save is a clear error, and the save stays whole at its last committed tick."""

from __future__ import annotations

import hashlib
import os
import random
import signal
import sqlite3
import stat
import time
from pathlib import Path

import pytest

from helpers import TINY, cli, query, save_info

END = "2023-02-14 06:00"  # one game day of the tiny town: 8640 ticks
DAY_TICKS = 8640
KILLS = 20


def _tick(save: Path) -> int:
    try:
        return int(query(save, "SELECT value FROM meta WHERE key = 'tick'")[0][0])
    except (sqlite3.Error, IndexError):
        return -1  # not created (or not committed) yet


def _run_until_killed(argv: list[str], save: Path, target: int, log: Path) -> tuple[int, bool]:
    """Start `smalltown run` in a child process and SIGKILL it once the save's committed tick
    reaches `target`; returns the tick last seen and whether it was killed (not finished first).
    The child is forked from this process, which has imported smalltown already: a real process
    killed for real, without paying the interpreter's start-up twenty times."""
    from smalltown.cli.main import main

    pid = os.fork()
    if pid == 0:  # the child: run, and never return into pytest
        code = 70
        try:
            out = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
            os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
            os.dup2(out, 2)
            code = main(["run", *argv])
        except BaseException:
            import traceback

            traceback.print_exc()
        finally:
            os._exit(code)
    deadline = time.monotonic() + 120
    tick, status = _tick(save), None
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        tick = _tick(save)
        if tick >= target:
            break
        time.sleep(0.001)
    killed = status is None or not done
    if killed:
        os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
    else:
        assert os.WEXITSTATUS(status) == 0, f"smalltown run {argv} failed:\n{log.read_text()}"
    return tick, killed


def test_twenty_kills_at_random_ticks_end_where_an_unbroken_run_does(tmp_path: Path):
    """A game day of the tiny town, SIGKILLed at 20 random ticks (a seeded RNG chooses them) and
    resumed each time, ends with the digest and the event log of one uninterrupted run."""
    from smalltown.sim.check import check_save

    reference = tmp_path / "reference.sqlite"
    t0 = time.monotonic()
    cli("run", "--headless", TINY, "--until", END, "--save", reference, "--backend", "scripted", check=True)
    unbroken = time.monotonic() - t0

    rng = random.Random(20230213)
    targets = sorted(rng.sample(range(1, DAY_TICKS - 200), KILLS))
    save = tmp_path / "killed.sqlite"
    first = ["--headless", str(TINY), "--until", END, "--save", str(save), "--backend", "scripted"]
    again = ["--headless", str(save), "--until", END, "--backend", "scripted"]
    t0 = time.monotonic()
    kills, last = [], -1
    for target in targets:
        target = max(target, last + rng.randint(1, 60))  # each run gets somewhere before its kill
        tick, killed = _run_until_killed(again if save.exists() else first, save, target, tmp_path / "log")
        if not killed:
            break
        after = _tick(save)
        kills.append(after)
        # whole after every kill: SQLite's check, our consistency checks, and nothing from a later tick
        report = check_save(save)
        assert report.ok, f"after a kill at tick {after}: {report.problems}"
        assert query(save, "SELECT count(*) FROM events WHERE tick > ?", after) == [(0,)]
        assert after >= last, "a kill lost committed ticks"
        last = after
    assert len(kills) == KILLS, f"only {len(kills)} kills landed before the day ended ({kills})"
    assert len(set(kills)) == KILLS, f"two kills at the same tick: {kills}"

    cli("run", *again, check=True)
    got, want = save_info(save), save_info(reference)
    print(f"\n{KILLS} kills at ticks {kills}; {time.monotonic() - t0:.1f} s (the unbroken run: {unbroken:.1f} s)")
    assert got["tick"] == want["tick"] == DAY_TICKS
    assert got["digest"] == want["digest"]
    assert got["events"] == want["events"] and got["memories"] == want["memories"]


def test_a_save_killed_while_being_created_starts_again(tmp_path: Path):
    """A save an older smalltown left when killed between its first commit (schema and meta) and
    the agents' (a new save is now built aside and appears whole: tests/test_atomic_saves.py):
    `run SAVE` starts the run again from the world text it holds, and ends where an unbroken run does."""
    from smalltown.store.save import Save
    from smalltown.world.load import load_world

    world = load_world(TINY)
    unborn = tmp_path / "unborn.sqlite"
    Save.create(unborn, {"world": world.name, "world_source": world.source, "world_text": world.text,
                         "map_source": world.map_source, "map_text": world.map_text, "tick": 0,
                         "game_time": "2023-02-13 06:00:00", "created_with": "scripted", "settings": {}}).close()
    assert query(unborn, "SELECT count(*) FROM agents") == [(0,)]
    reference = tmp_path / "reference.sqlite"
    cli("run", "--headless", TINY, "--until", "+1h", "--save", reference, "--backend", "scripted", check=True)
    cli("run", "--headless", unborn, "--until", "+1h", "--backend", "scripted", check=True)
    assert save_info(unborn)["digest"] == save_info(reference)["digest"]


# --- full disks and read-only files ------------------------------------------------------------


def test_a_full_disk_stops_the_run_with_the_last_tick_intact(tmp_path: Path):
    """SQLite's 'database or disk is full' (a page limit stands in for the disk) is a SaveError
    naming the file; the save reopens whole, at the last committed tick, with that tick's digest."""
    from smalltown.scripted import ScriptedBackend
    from smalltown.sim.open import create
    from smalltown.store.save import Save, SaveError
    from smalltown.world.load import load_world

    path = tmp_path / "full.sqlite"
    world = load_world(TINY)
    sim = create(world, path, ScriptedBackend(world.seed))
    for _ in range(300):
        sim.step()
    pages = sim.save.conn.execute("PRAGMA page_count").fetchone()[0]
    sim.save.conn.execute(f"PRAGMA max_page_count = {pages + 2}")
    committed = (sim.tick, sim.save.digest())
    with pytest.raises(SaveError) as info:
        for _ in range(DAY_TICKS):
            sim.step()
            sim.write_clock()  # (a quiet tick writes nothing: the clock as a stop would leave it)
            committed = (sim.tick, sim.save.digest())
    message = str(info.value)
    assert message.startswith(f"{path}: cannot write: the disk is full") and "last committed tick" in message
    assert sim.tick == committed[0] + 1  # it failed on the tick after the last commit
    sim.close()

    save = Save.open(path)
    try:
        assert save.conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert save.meta("tick") == committed[0] > 300
        assert save.digest() == committed[1]
    finally:
        save.close()
    cli("run", "--headless", path, "--until", "+10m", "--backend", "scripted", check=True)  # and it goes on


def test_the_cli_reports_a_full_disk_as_an_error_naming_the_save(tmp_path: Path, capsys, monkeypatch):
    """The same, through `smalltown run`: exit 1 and one line, no traceback."""
    from smalltown.cli.main import main
    from smalltown.store import save as save_module

    path = tmp_path / "full.sqlite"
    assert main(["run", "--headless", str(TINY), "--until", "+1h", "--save", str(path), "--backend", "scripted"]) == 0
    connect = save_module.Save._connect

    def tight(p, readonly=False):
        conn = connect(p, readonly)
        if not readonly:
            pages = conn.execute("PRAGMA page_count").fetchone()[0]
            conn.execute(f"PRAGMA max_page_count = {pages + 1}")
        return conn

    monkeypatch.setattr(save_module.Save, "_connect", staticmethod(tight))
    capsys.readouterr()
    rc = main(["run", "--headless", str(path), "--until", "+1d", "--backend", "scripted"])
    err = capsys.readouterr().err
    assert rc == 1 and f"error: {path}: cannot write: the disk is full" in err and "Traceback" not in err
    monkeypatch.undo()
    assert query(path, "PRAGMA integrity_check") == [("ok",)]


def test_a_read_only_save_is_refused_before_any_tick(tmp_path: Path):
    path = tmp_path / "ro.sqlite"
    cli("run", "--headless", TINY, "--until", "+10m", "--save", path, "--backend", "scripted", check=True)
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    path.chmod(stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
    try:
        proc = cli("run", "--headless", path, "--until", "+1h", "--backend", "scripted")
        assert proc.returncode == 2
        assert proc.stderr.strip() == (f"error: {path}: the save file is read-only; make it writable, or "
                                       f"continue it into a new file with `smalltown run {path} -o NEW.sqlite`")
        assert hashlib.sha256(path.read_bytes()).hexdigest() == before
        # reading it is fine, and so is continuing it into a new file
        assert save_info(path)["tick"] == 60
        copy = tmp_path / "copy.sqlite"
        cli("run", "--headless", path, "--save", copy, "--until", "+10m", "--backend", "scripted", check=True)
        assert save_info(copy)["tick"] == 120
    finally:
        path.chmod(stat.S_IRUSR | stat.S_IWUSR)
