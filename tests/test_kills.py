"""Kills at random moments, in the first 100 ms of a process, while a save is being created, in
its first game minute, while a save is copied (save-as) or forked: every killed run leaves a
save that checks and continues, or nothing (and the command runs again), and ends with the
digest of an uninterrupted run. The harness is benchmarks/kills.py, which runs it with over a
hundred kills; here a few dozen, in about 15 s."""

from __future__ import annotations

from pathlib import Path

from helpers import TINY

KILLS = {"create": 24, "save-as": 10, "fork": 10}


def test_random_kills_in_creation_first_minute_save_as_and_fork_lose_nothing(tmp_path: Path):
    from benchmarks.kills import report, run_kills

    tallies = run_kills(TINY, KILLS, seed=12, work=tmp_path)
    text = report(TINY, tallies)
    print(text)
    for name, want in KILLS.items():
        t = tallies[name]
        assert t.kills >= want - 1, f"{name}: only {t.kills} kills landed\n{text}"
        assert t.failures == 0, text
    created = tallies["create"].states
    assert created["nothing"] + created["a partial file (not yet at its name)"] > 0, text  # the creation window
    assert sum(n for state, n in created.items() if state.startswith("a save")) > 0, text  # and after it
