"""The write-ahead log is folded into the save on a thread of its own (store/checkpoint.py, issue
15): the file catches up with the commits while the writer's own checkpoint waits for 2000 pages;
closing ends the thread and leaves the file alone, whole; a copy taken mid-run (file and log, as
a killed process leaves them) holds every commit."""

from __future__ import annotations

import shutil
import sqlite3
import threading
from datetime import timedelta
from pathlib import Path

from helpers import tiny_sim


def _file_alone(save: Path, to: Path) -> sqlite3.Connection:
    """The save's file without its log: what the checkpoints have folded in."""
    shutil.copy(save, to)
    return sqlite3.connect(to)


def _tick(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT value FROM meta WHERE key='tick'").fetchone()[0])


def _threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name == "save-checkpoint"]


def test_the_file_catches_up_off_the_writer(tmp_path: Path):
    sim = tiny_sim(tmp_path, "07:10")
    try:
        sim.run_until(sim.now + timedelta(minutes=20))
        path = Path(sim.save.conn.execute("PRAGMA database_list").fetchone()[2])
        assert sim.save.conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 2000
        # a few dozen small commits: the writer's own checkpoint has not run, so only the thread
        # can have put the latest tick in the file
        assert _threads() == ["save-checkpoint"]
        sim.save._checkpointer.run_pass()
        alone = _file_alone(path, tmp_path / "alone.sqlite")
        assert _tick(alone) == sim.save.meta("tick") > 0
        alone.close()
    finally:
        sim.close()
    assert _threads() == []


def test_a_copy_mid_run_holds_every_commit_and_close_leaves_the_file_whole(tmp_path: Path):
    sim = tiny_sim(tmp_path, "07:10")
    try:
        sim.run_until(sim.now + timedelta(minutes=30))
        path = Path(sim.save.conn.execute("PRAGMA database_list").fetchone()[2])
        for suffix in ("", "-wal"):  # as a killed process leaves them
            shutil.copy(f"{path}{suffix}", tmp_path / f"killed.sqlite{suffix}")
        killed = sqlite3.connect(tmp_path / "killed.sqlite")
        assert _tick(killed) == sim.save.meta("tick")
        assert killed.execute("SELECT count(*) FROM events").fetchone() == \
            sim.save.conn.execute("SELECT count(*) FROM events").fetchone()
        killed.close()
        events = sim.save.count("events")
    finally:
        sim.close()
    assert not Path(f"{path}-wal").exists()  # (the writer's close, the last, folded it in)
    alone = _file_alone(path, tmp_path / "alone.sqlite")
    assert alone.execute("SELECT count(*) FROM events").fetchone()[0] == events
    alone.close()
