"""A crash never corrupts a save, and a run resumed from it ends where an unbroken one does."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from conftest import ROOT, TINY, query, save_info, smalltown

END = "2023-02-13 20:00"


def test_sigkill_mid_run_loses_at_most_the_tick_in_flight(tmp_path):
    reference = tmp_path / "reference.sqlite"
    smalltown("run", "--headless", TINY, "--until", END, "--save", reference, check=True)

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

    smalltown("run", "--headless", save, "--until", END, check=True)
    assert save_info(save)["digest"] == save_info(reference)["digest"]
    assert save_info(save)["events"] == save_info(reference)["events"]
