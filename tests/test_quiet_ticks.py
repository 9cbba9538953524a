"""A tick that changes nothing writes nothing (issue 15: 42% of a scripted Smallville day, one
commit each): the save stays at the last tick that changed something, its clock is caught up on a
stop, a pause or the end of a run, and a run resumed from it (a crash in the quiet) re-makes the
quiet ticks and ends where an unbroken run does."""

from __future__ import annotations

import sqlite3
from datetime import timedelta
from pathlib import Path

import pytest

from helpers import tiny_sim
from smalltown.llm.backend import Stopped


def _quiet_step(sim) -> int:
    """Step until a tick commits nothing; returns the save's tick then."""
    for _ in range(2000):
        before = sim.save.conn.total_changes
        sim.step()
        if sim.save.conn.total_changes == before:
            return sim.save.meta("tick")
    raise AssertionError("no quiet tick in 2000")


def test_a_quiet_tick_writes_nothing_and_the_clock_catches_up(tmp_path: Path):
    sim = tiny_sim(tmp_path)
    try:
        written = _quiet_step(sim)
        assert written == sim.tick - 1 and sim.clock_behind  # nothing of the quiet tick, not even its clock
        for _ in range(3):
            before = sim.save.conn.total_changes
            sim.step()
            if sim.save.conn.total_changes != before:
                break
        sim.write_clock()
        assert sim.save.meta("tick") == sim.tick and not sim.clock_behind
        assert sim.save.meta("game_time") == sim.now.strftime("%Y-%m-%d %H:%M:%S")
    finally:
        sim.close()


def test_a_run_and_a_stop_leave_the_save_at_the_last_whole_tick(tmp_path: Path):
    sim = tiny_sim(tmp_path)
    try:
        sim.run_until(sim.now + timedelta(minutes=7))  # the night: quiet ticks at the end
        assert sim.save.meta("tick") == sim.tick == 42
        _quiet_step(sim)
        last = sim.tick
        sim.stop()
        with pytest.raises(Stopped):
            sim.step()
        assert sim.tick == last and sim.save.meta("tick") == last
    finally:
        sim.close()


def test_a_crash_in_the_quiet_resumes_to_the_same_save(tmp_path: Path):
    from smalltown.scripted import ScriptedBackend
    from smalltown.sim.open import resume

    end_minutes = 8 * 60
    (tmp_path / "ref").mkdir()
    reference = tiny_sim(tmp_path / "ref")
    reference.run_until(reference.now + timedelta(minutes=end_minutes))
    want = reference.save.digest()
    reference.close()

    sim = tiny_sim(tmp_path)
    end = sim.now + timedelta(minutes=end_minutes)
    _quiet_step(sim)
    crashed = tmp_path / "crashed.sqlite"
    with sqlite3.connect(crashed) as copy:  # the file as a kill now would leave it
        sim.save.conn.backup(copy)
    copy.close()
    at = sim.tick
    sim.close()
    resumed = resume(crashed, ScriptedBackend(sim.world.seed))
    try:
        assert resumed.tick < at  # the quiet ticks are not in the save
        resumed.run_until(end)
        assert resumed.save.digest() == want
    finally:
        resumed.close()
