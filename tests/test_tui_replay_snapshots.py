"""Snapshots of replay's debugger (issue 14): the inspector and the model calls screen on a tiny
scripted run as it was at a scrubbed tick, not at its end.

The save is the tiny town from 06:00 to 07:20, in a file of a fixed name (the header shows it);
the scripted backend's timings differ from run to run, so the fixture writes fixed ones. The SVGs
are in tests/__snapshots__/test_tui_replay_snapshots/; regenerate them with
`python3 -m pytest tests/test_tui_replay_snapshots.py --snapshot-update` and look at them."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from helpers import query, tiny_sim
from smalltown.tui.replay import ReplayApp

SIZE = (120, 36)
AT = 420  # 07:10:00: Klaus has been up ten minutes, the run goes on to 07:20


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    sim = tiny_sim(tmp_path_factory.mktemp("replay_snap"), "07:20")
    path = sim.save.path
    sim.close()
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("UPDATE llm_calls SET ms = 0.1 + (id % 7) * 0.3")  # (a real run's vary)
    conn.close()
    return path


def test_the_run_goes_on_after_the_scrubbed_tick(recorded: Path) -> None:
    """What the snapshots show is the run then: calls and memories came after it."""
    assert query(recorded, "SELECT count(*) FROM llm_calls WHERE tick > ?", AT)[0][0] > 0
    assert query(recorded, "SELECT count(*) FROM llm_calls WHERE tick <= ?", AT)[0][0] > 0


KLAUS = ["right_square_bracket"] * 2  # the third agent, awake since 07:00


def test_replay_inspector_at_a_scrubbed_tick_snapshot(snap_compare, recorded: Path) -> None:
    assert snap_compare(ReplayApp(recorded, at=AT), terminal_size=SIZE, press=[*KLAUS, "i"])


def test_replay_calls_screen_at_a_scrubbed_tick_snapshot(snap_compare, recorded: Path) -> None:
    assert snap_compare(ReplayApp(recorded, at=AT), terminal_size=SIZE, press=[*KLAUS, "c"])
