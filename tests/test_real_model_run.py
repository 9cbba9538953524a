"""A slice of a real run on a real model, as a user starts one: the tiny town created and run its
first game minute (every kind of question a run asks first: the agents' summaries, day plans,
hourly schedules, the first decomposition, places, object states and memory ratings, about 30
calls) on SmolLM2-135M-Instruct, through the llama backend and through a real
`llama_cpp.server`. A crash inside llama.cpp on the first real call fails here: the llama run is
a process of its own (a segfault shows as its exit code and stderr, not as pytest dying), and the
server's death is seen by the run and by the test. What is asserted is behaviour, not prompt text
or exact counts: the run completes, its calls are in the call log under the backend, most were
answered by the model, and every answer stored is of its task's type.

The rule the real-model tests follow (tests/realmodel.py: skip locally, fail in CI) is tested here
too."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

import realmodel
from helpers import TINY, cli, query, save_info, smalltown
from smalltown.llm.tasks import TASKS
from smalltown.store.packing import unpack_text

SLICE = "+1m"  # the first game minute: the run's first questions, all asked by its second tick
# One thread, as the shared backend and server have: on 2 cores shared with other work, llama.cpp's
# two threads wait on each other (SmolLM2, one rating question under load: 8 s on 1 thread, 23-45 s on 2).
THREADS = 1
FIRST_QUESTIONS = {"summary_description", "daily_plan", "hourly_schedule", "rate_importance"}


def _exit(code: int) -> str:
    """How a process ended, for a failure message: a signal is named (-11 and 139 are SIGSEGV)."""
    number = -code if code < 0 else code - 128 if code > 128 else 0
    try:
        return f"{code} ({signal.Signals(number).name})" if number else str(code)
    except ValueError:
        return str(code)


def _assert_ran_on(save: Path, backend: str) -> list[tuple[str, str]]:
    """The save is whole and past its start, every call is logged under `backend`, most were
    answered by the model, and every answer stored is of its task's type: (task, fallback) per call."""
    assert cli("save", "check", save).returncode == 0
    info = save_info(save)
    assert info["tick"] > 0 and info["backend"] == backend
    rows = query(save, "SELECT id, task, backend, fallback, parsed_answer FROM llm_calls ORDER BY id")
    assert FIRST_QUESTIONS <= {task for _, task, *_ in rows}, rows
    assert {b for _, _, b, _, _ in rows} == {backend}
    for i, task, _, fallback, parsed in rows:  # each raises, naming the call, if it is not its task's type
        TASKS[task].output.model_validate_json(unpack_text(parsed, f"llm_calls {i}"))
    by_model = [task for _, task, _, fallback, _ in rows if not fallback]
    assert len(by_model) >= len(rows) / 2, info["calls"]  # the model answered, not the stand-in
    print(f"\n{backend}: {len(rows)} calls, {len(by_model)} answered by SmolLM2; fallbacks {info['calls']['by_reason']}")
    return [(task, fallback) for _, task, _, fallback, _ in rows]


def test_the_tiny_town_starts_on_smollm2_through_llama(smollm2, tmp_path):
    save = tmp_path / "llama.sqlite"
    t0 = time.perf_counter()
    r = smalltown("run", "--headless", TINY, "--backend", "llama", "--model", smollm2, "--threads", THREADS,
                  "--until", SLICE, "--save", save, timeout=900)
    seconds = time.perf_counter() - t0
    assert r.returncode == 0, f"smalltown run --backend llama exited {_exit(r.returncode)}:\n{r.stderr[-3000:]}"
    calls = _assert_ran_on(save, "llama")
    print(f"{SLICE} on SmolLM2 through llama in {seconds:.1f} s ({seconds / len(calls):.2f} s a call)")


def test_the_tiny_town_starts_on_smollm2_through_a_real_server(smollm2_server, tmp_path):
    url, proc, log = smollm2_server
    save = tmp_path / "server.sqlite"
    t0 = time.perf_counter()
    # One request at a time, each given minutes: the server answers one at a time, and this test is
    # about the model answering, not about deadlines (tests/test_real_server.py has those).
    r = cli("run", "--headless", TINY, "--backend", "openai", "--base-url", url, "--model", "smollm2",
            "--concurrency", "1", "--timeout", "600", "--until", SLICE, "--save", save)
    seconds = time.perf_counter() - t0
    assert proc.poll() is None, f"llama_cpp.server exited {_exit(proc.returncode)}:\n{realmodel.tail(log)}"
    assert r.returncode == 0, f"{r.stderr[-3000:]}\nserver log:\n{realmodel.tail(log)}"
    calls = _assert_ran_on(save, "openai")
    print(f"{SLICE} on SmolLM2 through llama_cpp.server in {seconds:.1f} s ({seconds / len(calls):.2f} s a call)")


# --- the rule: a missing real model skips locally and fails in CI ---------------------------------


@pytest.mark.parametrize("ci", ["", "false", "0"])
def test_a_missing_model_skips_outside_ci(monkeypatch, tmp_path, ci):
    monkeypatch.setenv("CI", ci)
    with pytest.raises(pytest.skip.Exception, match=r"SmolLM2's GGUF is not at .*nosuch\.gguf; install .*\[dev\]"):
        realmodel.require_file(tmp_path / "nosuch.gguf", "SmolLM2's GGUF")
    with pytest.raises(pytest.skip.Exception, match=r"no_such_module cannot be imported"):
        realmodel.require_module("no_such_module")


@pytest.mark.parametrize("ci", ["true", "True", "1", "yes"])
def test_a_missing_model_fails_in_ci_saying_what_and_how(monkeypatch, tmp_path, ci):
    monkeypatch.setenv("CI", ci)
    with pytest.raises(pytest.fail.Exception) as e:
        realmodel.require_file(tmp_path / "nosuch.gguf", "SmolLM2's GGUF")
    assert str(e.value).startswith("CI=true, so a real-model test may not skip: SmolLM2's GGUF is not at ")
    assert "nosuch.gguf" in str(e.value) and "pip install -e '.[dev]'" in str(e.value)
    with pytest.raises(pytest.fail.Exception, match=r"llama_cpp\.server\.nosuch cannot be imported"):
        realmodel.require_module("llama_cpp.server.nosuch")


def test_a_model_that_is_there_is_found_whatever_ci_says(monkeypatch, tmp_path):
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    for ci in ("true", ""):
        monkeypatch.setenv("CI", ci)
        assert realmodel.require_file(model, "a model") == model
        assert realmodel.require_module("json").__name__ == "json"
