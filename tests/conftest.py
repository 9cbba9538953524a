"""Fixtures only: what tests share as functions or data is in helpers.py, fakes.py, handmade.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import GULLHAVEN, SMALLVILLE, TINY, smalltown


@pytest.fixture
def tiny_sim(tmp_path):
    from smalltown.scripted import ScriptedBackend
    from smalltown.sim.open import create
    from smalltown.world.load import load_world

    world = load_world(TINY)
    sim = create(world, tmp_path / "tiny.sqlite", ScriptedBackend(world.seed))
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
