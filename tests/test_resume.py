"""A crash never corrupts a save, and a run resumed from it ends where an unbroken one does."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from helpers import ROOT, TINY, cli, query, save_info

END = "2023-02-13 20:00"


def test_sigkill_mid_run_loses_at_most_the_tick_in_flight(tmp_path):
    reference = tmp_path / "reference.sqlite"
    cli("run", "--headless", TINY, "--until", END, "--save", reference, check=True)

    save = tmp_path / "killed.sqlite"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "smalltown", "run", "--headless", str(TINY),
                             "--until", END, "--save", str(save)], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    tick = 0
    while time.monotonic() < deadline and tick < 1500:  # well into the morning
        if save.exists():
            try:
                tick = int(query(save, "select value from meta where key='tick'")[0][0])
            except Exception:
                pass  # the schema may not be committed yet
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL

    assert query(save, "pragma integrity_check") == [("ok",)]
    killed_at = save_info(save)["tick"]
    assert killed_at >= 1500
    # the save is consistent at its last committed tick: nothing from a later tick is in it
    assert query(save, "select max(tick) from events")[0][0] <= killed_at
    assert query(save, "select max(tick) from llm_calls")[0][0] <= killed_at

    cli("run", "--headless", save, "--until", END, check=True)
    assert save_info(save)["digest"] == save_info(reference)["digest"]
    assert save_info(save)["events"] == save_info(reference)["events"]


def test_a_schema_1_save_is_migrated_and_continues(tmp_path):
    """A save written before the mind existed (issue 2's engine) opens: its tables are added,
    its seed memories get an importance and a vector, and the run goes on."""
    import shutil

    old = tmp_path / "old.sqlite"
    shutil.copy(ROOT / "tests" / "fixtures" / "tiny-v1.sqlite", old)
    assert query(old, "select value from meta where key='schema_version'") == [("1",)]
    assert query(old, "select count(*) from memories where embedding is null")[0][0] > 0
    cli("run", "--headless", old, "--until", "+1h", "--backend", "scripted", check=True)
    info = save_info(old)
    assert info["schema_version"] == 5 and info["game_time"] == "2023-02-13 08:00:00"
    assert query(old, "select count(*) from memories where embedding is null or importance is null")[0][0] == 0
    assert query(old, "select count(*) from llm_calls where task='decompose'")[0][0] > 0  # the mind took over
