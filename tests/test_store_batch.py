"""Commits gathered in a batch (`Save.batched`, store/batch.py, as `smalltown run --headless`
commits): the same rows as a commit per tick, in far fewer commits; a tick's model calls and a
snapshot are committed at once; a failed write rolls the batch back to the last commit."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from helpers import tiny_sim
from smalltown.store.records import Memory, TickChanges
from smalltown.store.save import SaveError


def _rows(path: Path) -> dict[str, list]:
    """Every table's rows (the call log without its timings, which differ run to run)."""
    conn = sqlite3.connect(path)
    try:
        out = {}
        for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name"):
            cols = [r[1] for r in conn.execute(f"PRAGMA table_info({table})") if (table, r[1]) != ("llm_calls", "ms")]
            out[table] = conn.execute(f"SELECT {', '.join(cols)} FROM {table} ORDER BY rowid").fetchall()
        return out
    finally:
        conn.close()


def _run(folder: Path, batched: bool, minutes: int = 40) -> tuple[dict[str, list], int]:
    """The tiny town from 07:00 for `minutes`, each tick committed or batched: its rows, and the
    commits the run made."""
    folder.mkdir()
    sim = tiny_sim(folder, "07:00")
    commits = []
    sim.save.conn.set_trace_callback(lambda sql: commits.append(sql) if sql.strip().upper() == "COMMIT" else None)
    until = sim.now + timedelta(minutes=minutes)
    if batched:
        with sim.save.batched(seconds=3600):
            sim.run_until(until)
    else:
        sim.run_until(until)
    sim.save.conn.set_trace_callback(None)
    sim.close()
    return _rows(folder / "tiny.sqlite"), len(commits)


def test_a_batched_run_writes_the_same_rows_in_fewer_commits(tmp_path: Path):
    each, each_commits = _run(tmp_path / "each", batched=False)
    batched, batched_commits = _run(tmp_path / "batched", batched=True)
    assert sum(len(rows) for rows in each.values()) > 100
    assert batched == each
    assert batched_commits * 3 < each_commits, (batched_commits, each_commits)


def test_in_a_batch_model_calls_and_snapshots_are_committed_at_once(tmp_path: Path):
    sim = tiny_sim(tmp_path, "07:00")
    reader = sqlite3.connect(tmp_path / "tiny.sqlite")  # another connection: sees commits only
    held = with_calls = 0
    try:
        with sim.save.batched(seconds=3600):
            for _ in range(240):
                calls_before = sim.save.count("llm_calls")
                sim.step()
                mine = sim.save.count("llm_calls")
                committed = reader.execute("SELECT count(*) FROM llm_calls").fetchone()[0]
                assert committed == mine  # (a call is never held back)
                with_calls += mine > calls_before
                tick = reader.execute("SELECT value FROM meta WHERE key='tick'").fetchone()[0]
                held += int(tick) < sim.tick
            sim.snapshot()
            last = reader.execute("SELECT max(tick) FROM snapshots").fetchone()[0]
            assert last == sim.tick
        assert with_calls > 0 and held > 0, (with_calls, held)  # (both kinds of tick were seen)
        assert int(reader.execute("SELECT value FROM meta WHERE key='tick'").fetchone()[0]) == sim.tick
    finally:
        reader.close()
        sim.close()


def test_a_failed_write_in_a_batch_leaves_the_save_at_its_last_commit(tmp_path: Path):
    sim = tiny_sim(tmp_path, "07:00")
    reader = sqlite3.connect(tmp_path / "tiny.sqlite")
    try:
        with pytest.raises(SaveError):
            with sim.save.batched(seconds=3600):
                sim.run_until(sim.now + timedelta(minutes=30))
                committed = reader.execute("SELECT value FROM meta WHERE key='tick'").fetchone()[0]
                assert int(committed) < sim.tick  # some ticks are held
                kept = _rows(tmp_path / "tiny.sqlite")
                # a memory whose id is taken: the write fails half-way (its clock was to come after)
                mid, agent = sim.save.conn.execute("SELECT id, agent FROM memories LIMIT 1").fetchone()
                t = datetime(2023, 2, 13, 7, 30)
                sim.save.commit(TickChanges(sim.tick + 1, "2023-02-13 07:30:10", meta={"tick": sim.tick + 1},
                                            memories=((Memory(mid, agent, "observation", "x", t, t, 1), b""),)))
        assert not sim.save.conn.in_transaction
        assert _rows(tmp_path / "tiny.sqlite") == kept  # as the last commit left it, held ticks and all gone
        assert sim.save.meta("tick") == int(committed)
    finally:
        reader.close()
        sim.close()
