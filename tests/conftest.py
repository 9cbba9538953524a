from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import GULLHAVEN, ROOT, SMALLVILLE, TINY  # noqa: F401  (re-exported: older tests import them from here)


def smalltown(*args: str, check: bool = False, timeout: float = 600) -> subprocess.CompletedProcess:
    """Run the real command line, as a user would."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-m", "smalltown", *map(str, args)], capture_output=True,
                          text=True, timeout=timeout, env=env, cwd=ROOT)
    if check and proc.returncode != 0:
        raise AssertionError(f"smalltown {' '.join(map(str, args))} -> {proc.returncode}\n{proc.stderr}")
    return proc


def save_info(path: Path) -> dict:
    return json.loads(smalltown("save", "info", path, "--json", check=True).stdout)


def query(path: Path, sql: str, *params) -> list[tuple]:
    """Read a save without ever creating it (a plain connect would make an empty file)."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


@pytest.fixture
def tiny_sim(tmp_path):
    from smalltown.scripted import ScriptedBackend
    from smalltown.sim.simulation import Simulation
    from smalltown.world.load import load_world

    world = load_world(TINY)
    sim = Simulation.create(world, tmp_path / "tiny.sqlite", ScriptedBackend(world.seed))
    yield sim
    sim.close()


# --- the expensive runs, made once a session and shared (read them; never write to them) ----------


def _two_days(tmp_path_factory, world: Path, name: str) -> Path:
    save = tmp_path_factory.mktemp(name) / f"{name}.sqlite"
    smalltown("run", world, "--headless", "--until", "+2d", "--save", save, "--backend", "scripted", check=True)
    return save


@pytest.fixture(scope="session")
def smallville_two_days(tmp_path_factory) -> Path:
    """Two scripted game days of Smallville, the paper's run (about 30 s, made once)."""
    return _two_days(tmp_path_factory, SMALLVILLE, "smallville")


@pytest.fixture(scope="session")
def gullhaven_two_days(tmp_path_factory) -> Path:
    """Two scripted game days of Gullhaven, a town no code names."""
    return _two_days(tmp_path_factory, GULLHAVEN, "gullhaven")
