"""The OpenAI-compatible backend against a real server: llama-cpp-python's own
(`python -m llama_cpp.server`, the `server` extra), started on 127.0.0.1 with the tests' tiny
random-weight GGUF (tests/tinymodel.py). It refuses `json_schema`; the backend moves on to the
question's GBNF grammar and says so; `json_object` with the spelled-out schema works there too.
Random weights: answers are junk of the right shape, so many fall back; what is tested is that the
server constrains them, stays up, and a town runs an hour on it."""

from __future__ import annotations

import json
import time

import pytest

from helpers import TINY, cli, query
from realistic import rate, realistic_tasks
from realmodel import require_module, start_server, stop
from smalltown.llm.render import render
from smalltown.llm.asker import Asker
from smalltown.llm.backend import CallRecord
from smalltown.llm.openai_compat import OpenAIBackend
from smalltown.llm.schema import max_answer_tokens, request_schema
from smalltown.llm.validate import UnusableAnswer
from smalltown.scripted import ScriptedBackend

N_CTX = 8192  # the tiny model's tokens are bytes: a fitted prompt (--ctx 2048, estimated) fits whole


@pytest.fixture(scope="session")
def real_server(tmp_path_factory):
    """`python -m llama_cpp.server` serving the tiny GGUF, ready; stopped at the end whatever happens
    (tests/realmodel.py: without the server extra or gguf, skipped locally and failed in CI)."""
    require_module("gguf")  # it writes the tests' tiny model
    from tinymodel import build_tiny_gguf

    model = build_tiny_gguf(tmp_path_factory.mktemp("model") / "tiny.gguf")
    log = tmp_path_factory.mktemp("server") / "server.log"
    url, proc = start_server(model, log, N_CTX, extra=("--n_threads", "1"))
    try:
        yield url, proc
    finally:
        stop(proc)


def _backend(url: str, mode: str | None = None, retries: int = 0) -> OpenAIBackend:
    b = OpenAIBackend(url, model="tiny", retries=retries, timeout=60, context=N_CTX)
    if mode is not None:
        b.structured = mode  # this mode from the start (as if the ones before it were refused)
    return b


def _shaped(task, url: str, mode: str) -> None:
    """The server's answer to `task` in `mode` is JSON of the request schema's shape, within budget."""
    b = _backend(url, mode)
    try:
        answer = b.answer(task, render(task))
        raw, usage = answer.raw, (answer.prompt_tokens, answer.completion_tokens)
    except UnusableAnswer as e:  # random weights: valid JSON breaking a rule the grammar leaves to validation
        assert e.kind == "invalid", e.reason
        raw, usage = e.raw, e.usage[:2]
    data = json.loads(raw)
    assert set(data) == set(request_schema(task)["properties"]), raw
    assert usage[0] > 0 and 0 < usage[1] <= max_answer_tokens(task)
    if task.name == "choose_place":
        assert data["choice"] in task.options
    if task.name == "rate_importance":
        assert len(data["ratings"]) == len(task.memories)
    assert b.structured == mode  # the server took it


def test_the_server_refuses_json_schema_and_the_backend_moves_to_the_grammar_saying_so(real_server):
    url, proc = real_server
    b = _backend(url)
    task = realistic_tasks()["choose_place"]
    assert b.can.about.startswith("structured output: json_schema")
    try:
        note = b.answer(task, render(task)).note
    except UnusableAnswer as e:
        note = e.note
    assert note.startswith("structured output: grammar (the server refused json_schema: HTTP 500"), note
    assert b.structured == "grammar" and b.can.about.startswith("structured output: grammar")
    assert proc.poll() is None


@pytest.mark.parametrize("mode", ["grammar", "json_object"])
def test_each_mode_the_server_takes_constrains_every_kind_of_question(real_server, mode):
    url, proc = real_server
    questions = realistic_tasks()
    for task in (questions["object_state"], questions["choose_place"], rate(4), rate(9), questions["utterance"],
                 questions["hourly_schedule"], questions["decompose"]):
        _shaped(task, url, mode)
    assert proc.poll() is None  # the server is still up: nothing it cannot convert was sent


def test_the_asker_runs_every_task_on_the_real_server(real_server):
    url, _ = real_server
    records: list[CallRecord] = []
    asker = Asker(_backend(url, retries=1), records.append, fallback=ScriptedBackend(0))
    for task in realistic_tasks().values():
        assert isinstance(asker.ask(task.persona.name, task), task.output)
        assert records[-1].backend == "openai" and records[-1].fallback in ("", "invalid", "copied", "incoherent")
        assert records[-1].completion_tokens > 0
    assert "structured output: grammar" in records[0].note
    print(f"\nreal server: {sum(not r.fallback for r in records)}/{len(records)} answered by the model")


def test_the_tiny_town_runs_an_hour_on_the_real_server(real_server, tmp_path):
    url, proc = real_server
    save = tmp_path / "t.sqlite"
    t0 = time.perf_counter()
    r = cli("run", "--headless", TINY, "--until", "+1h", "--backend", "openai", "--base-url", url, "--model", "tiny",
            "--ctx", "2048", "--concurrency", "2", "--timeout", "60", "--save", save)
    seconds = time.perf_counter() - t0
    assert r.returncode == 0, r.stderr
    # the start-up line says how it asks (the first plans, made while the run opens, found the mode)
    assert "openai: structured output: grammar (a GBNF grammar); if the server refuses it, json_object" in r.stderr
    [(calls, prompt, completion)] = query(save, "select count(*), sum(prompt_tokens), sum(completion_tokens) "
                                                "from llm_calls where backend = 'openai'")
    assert calls > 10 and prompt > 0 and completion > 0  # the calls reached the server, which counted them
    noted = query(save, "select note from llm_calls where note like '%structured output: grammar (the server "
                        "refused json_schema%'")
    assert len(noted) == 1  # the call that found the mode says so, once
    assert proc.poll() is None
    print(f"\nan hour on the real server in {seconds:.1f}s: {calls} calls", r.stderr, sep="\n")
