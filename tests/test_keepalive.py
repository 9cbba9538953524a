"""The openai backend's connections are pooled and kept alive: sequential requests share one TCP
connection, concurrent ones at most one each, and a connection cut off at its deadline is dropped
from the pool, not reused. Counted at a real loopback server (benchmarks/promptserver.py)."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime

import pytest

from benchmarks.promptserver import PromptServer
from fakes import FakeServer
from smalltown.llm.openai_compat import BackendError, OpenAIBackend
from smalltown.llm.render import render
from smalltown.llm.tasks import ObjectState, PersonaCard
from smalltown.llm.validate import UnusableAnswer
from smalltown.llm.wrappers import retrying

PERSONA = PersonaCard(name="A", age=30, traits="calm", description="A keeps a shop.", home="a house")
TASK = ObjectState(persona=PERSONA, now=datetime(2023, 2, 13, 9, 30), activity="make coffee", object="coffee machine")


def ask(backend: OpenAIBackend, i: int) -> None:
    try:
        backend.answer(TASK, render(TASK), seed=i)
    except UnusableAnswer:
        pass  # (a hash answer may break the task's rules: the exchange is what is counted)


@pytest.fixture
def server():
    with PromptServer(latency=0.0) as s:
        yield s


def test_sequential_requests_share_one_connection(server):
    backend = OpenAIBackend(server.url, timeout=5, max_concurrency=4)
    backend.connect()
    for i in range(30):
        ask(backend, i)
    assert len(server.requests) == 30
    assert server.httpd.accepted == 1  # the start-up check's connection, kept for every request after


@pytest.mark.parametrize("c", [2, 6])
def test_concurrent_requests_use_at_most_one_connection_each(c):
    with PromptServer(latency=0.05) as server:  # (long enough that the c requests overlap)
        backend = OpenAIBackend(server.url, timeout=5, max_concurrency=c)
        with ThreadPoolExecutor(c) as pool:
            list(pool.map(lambda i: ask(backend, i), range(10 * c)))
        assert len(server.requests) == 10 * c
        assert 2 <= server.httpd.accepted <= c  # (c at once: more than one connection, never more than c)


def test_a_connection_cut_off_at_its_deadline_is_not_reused(server):
    backend = OpenAIBackend(server.url, timeout=0.3, max_concurrency=1)
    for i in range(3):
        ask(backend, i)
    server.latency = 1.0  # the next answer comes after the deadline
    with pytest.raises(BackendError, match="no answer within 0.3 s"):
        retrying(OpenAIBackend(server.url, timeout=0.3, retries=0)).answer(TASK, render(TASK))  # (its own pool)
    with pytest.raises(Exception, match="no answer within 0.3 s"):
        backend.answer(TASK, render(TASK), seed=99)
    server.latency = 0.0
    before = server.httpd.accepted
    for i in range(3):
        ask(backend, i)  # answered: the pool made a new connection rather than read the dead one
    assert server.httpd.accepted == before + 1


def test_a_stream_whose_connection_closes_after_its_done_is_answered_all_the_same():
    """llama-cpp-python's server may close a chunked stream after `data: [DONE]` without the
    body's last chunk: the answer was whole, so it counts (the connection is only not reused)."""
    fake = FakeServer()
    try:
        delta = {"choices": [{"index": 0, "delta": {"content": '{"state": "brewing"}'}, "finish_reason": "stop"}]}
        events = f"data: {json.dumps(delta)}\n\ndata: [DONE]\n\n".encode()
        head = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
        fake.script(("raw_stream", head + b"%x\r\n%s\r\n" % (len(events), events)))  # (no closing 0-chunk)
        backend = OpenAIBackend(fake.url, timeout=5, retries=0)
        assert backend.answer(TASK, render(TASK)).output.state == "brewing"
        assert backend.answer(TASK, render(TASK)).output.state == "brewing coffee"  # (the next, on a new connection)
    finally:
        fake.close()
