"""A whole request has a deadline: a server that drips one byte every half second (so no single
read ever times out) is cut off at the backend's `timeout`, for the connection check before a run
and for every question; a run against it ends with a clear message, its save whole."""

from __future__ import annotations

import shutil
import threading
import time
from pathlib import Path

import pytest

from helpers import cli, query, smalltown
from dripserver import DripServer
from helpers import TINY
from realistic import realistic_tasks
from smalltown.llm.openai_compat import BackendError, OpenAIBackend
from smalltown.llm.wrappers import GONE_AFTER, retrying

DEADLINE = 2.0
SLACK = 2.0  # a busy 2-core machine


def within(seconds: float, call) -> tuple[BaseException | None, float]:
    """Run `call` on a thread and wait at most `seconds` for it: (what it raised, how long it took).
    A call still running then fails the test instead of hanging it."""
    out: list[BaseException | None] = []

    def run() -> None:
        try:
            call()
            out.append(None)
        except BaseException as e:  # noqa: BLE001 (reported to the test)
            out.append(e)

    t0 = time.monotonic()
    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(seconds)
    assert out, f"still waiting after {seconds:g} s: the deadline was not kept"
    return out[0], time.monotonic() - t0


@pytest.mark.parametrize("drip_headers", [False, True], ids=["dripped body", "dripped headers"])
def test_a_dripping_answer_is_cut_off_at_the_deadline(drip_headers: bool):
    with DripServer(0.5, drip_headers=drip_headers) as server:
        backend = OpenAIBackend(server.url, timeout=DEADLINE, retries=0)
        task = realistic_tasks()["rate_importance"]
        error, took = within(DEADLINE + SLACK, lambda: retrying(backend).answer(task, "hello"))
    assert isinstance(error, BackendError), error
    assert f"no answer within {DEADLINE:g} s" in str(error)
    assert DEADLINE - 0.1 <= took <= DEADLINE + SLACK


def test_the_connection_check_has_the_deadline_too():
    with DripServer(0.5, drip_models=True) as server:
        backend = OpenAIBackend(server.url, timeout=DEADLINE)
        error, took = within(DEADLINE + SLACK, backend.connect)
    assert isinstance(error, BackendError) and f"no answer within {DEADLINE:g} s" in str(error)
    assert took <= DEADLINE + SLACK


@pytest.fixture(scope="module")
def morning(tmp_path_factory) -> Path:
    """A save two hours into the tiny town's day (made without a model), whose next ticks ask one."""
    path = tmp_path_factory.mktemp("deadline") / "morning.sqlite"
    cli("run", "--headless", TINY, "--until", "+2h", "--save", path, "--backend", "scripted", check=True)
    return path


def test_a_run_against_a_dripping_server_ends_with_a_clear_message(morning: Path, tmp_path: Path):
    """Each attempt ends at the deadline; a question whose retries all failed is the stand-in's,
    and GONE_AFTER such questions in a row stop the run, which says why; the save is whole at its
    last tick and goes on (with a backend that answers)."""
    save = tmp_path / "run.sqlite"
    shutil.copy(morning, save)
    with DripServer(0.5) as server:
        t0 = time.monotonic()
        proc = smalltown("run", "--headless", save, "--until", "+8h", "--backend", "openai", "--base-url",
                         server.url, "--timeout", str(DEADLINE), timeout=120)
        took = time.monotonic() - t0
        posts = server.posts()
    assert proc.returncode == 1, proc.stderr
    assert f"no answer within {DEADLINE:g} s" in proc.stderr and "after 3 attempts" in proc.stderr
    assert f"{GONE_AFTER} questions in a row failed" in proc.stderr
    assert "Traceback" not in proc.stderr and "run complete" not in proc.stderr
    assert "continue it: smalltown run" in proc.stderr
    # the default retries, each attempt its own deadline; (questions asked at once may be in flight)
    assert 3 * GONE_AFTER <= posts <= 3 * (GONE_AFTER + 3)
    # + starting Python, the save's check and its creation's questions, on a busy 2-core machine (33 s measured)
    assert took <= GONE_AFTER * (3 * DEADLINE + 1.5) + 15
    assert cli("save", "check", save).returncode == 0
    tick = query(save, "SELECT value FROM meta WHERE key = 'tick'")
    cli("run", "--headless", save, "--until", "+10m", "--backend", "scripted", check=True)
    assert query(save, "SELECT value FROM meta WHERE key = 'tick'") != tick


@pytest.mark.parametrize("value", ["0", "-1", "nan", "1e9", "soon"])
def test_a_timeout_out_of_range_is_refused_by_name(value: str, tmp_path: Path):
    proc = cli("run", "--headless", TINY, "--until", "+1m", "--save", tmp_path / "s.sqlite",
               "--backend", "openai", "--base-url", "http://127.0.0.1:9/v1", f"--timeout={value}")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "'--timeout': " in proc.stderr and ("out of range" in proc.stderr or "not a number" in proc.stderr)
    assert not (tmp_path / "s.sqlite").exists()
