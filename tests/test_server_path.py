"""The OpenAI-compatible server path, against loopback servers (real HTTP on 127.0.0.1): the
deadline of the start-up check and of each request, streamed answers and what a cut-off does on
the server, each attempt in the call log, a server that fails some requests (the stand-in answers
those questions: "failed") and a stop while a new save is created."""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from benchmarks.promptserver import answer_for
from fakes import FakeServer, Loopback, completion, send_json
from helpers import ROOT, TINY, answer_at_once, cli, query
from smalltown.llm.render import render
from smalltown.llm.asker import Asker
from smalltown.llm.backend import Stopped, estimate_prompt
from smalltown.llm.openai_compat import BackendError, OpenAIBackend
from smalltown.llm.tasks import ObjectState
from smalltown.llm.wrappers import retrying
from smalltown.scripted import ScriptedBackend
from realistic import ISABELLA as PERSONA, NOW

COFFEE = ObjectState(persona=PERSONA, now=NOW, activity="make coffee", object="coffee machine")


@pytest.fixture
def server():
    s = FakeServer()
    yield s
    s.close()


class Scripted(Loopback):
    """A server whose GET /models waits `models_wait` s and whose POSTs are answered by `post(self,
    body)` (a hash of the prompt by default: schema-valid answers, benchmarks/promptserver.py)."""

    def __init__(self, models_wait: float = 0.0, post=None):
        self.models_wait = models_wait
        self.posts = 0
        self.release = threading.Event()  # ends a waiting handler at close
        self.post = post or (lambda srv, body: (200, answer_for(body)[0]))
        me = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                me.release.wait(me.models_wait)
                send_json(self, 200, b'{"object": "list", "data": []}')

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                me.posts += 1
                code, content = me.post(me, body)
                data = json.dumps(completion(content, {"prompt_tokens": 50, "completion_tokens": 5})
                                  if code == 200 else {"error": {"message": content}}).encode()
                try:
                    send_json(self, code, data)
                except OSError:
                    pass

        self.serve(Handler)

    def close(self) -> None:
        self.release.set()
        super().close()


# --- 1. the deadline ----------------------------------------------------------------------------

def test_the_start_up_check_waits_as_long_as_the_timeout():
    """A busy server that answers GET /models after 10.5 s is reached with --timeout 12 (the check
    once gave up after min(10, timeout) s)."""
    srv = Scripted(models_wait=10.5)
    try:
        t0 = time.monotonic()
        OpenAIBackend(srv.url, timeout=12).connect()
        assert time.monotonic() - t0 >= 10.4
    finally:
        srv.close()


def test_the_deadline_counts_from_when_a_request_is_sent(server):
    """One request at a time, each 0.6 s, a deadline of 1 s: the third waits 1.2 s for its slot,
    which does not count against it."""
    server.delay = 0.6
    b = OpenAIBackend(server.url, timeout=1.0, retries=0, max_concurrency=1)
    answers = answer_at_once(retrying(b), [(COFFEE, render(COFFEE))] * 3)
    assert [a.output.state for a in answers] == ["brewing coffee"] * 3
    assert server.max_in_flight == 1


# --- 2. streamed answers ------------------------------------------------------------------------

def test_an_answer_is_streamed_and_read_as_a_whole(server):
    a = retrying(OpenAIBackend(server.url, retries=0)).answer(COFFEE, render(COFFEE))
    body = server.requests[-1]["body"]
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert a.output.state == "brewing coffee" and a.raw == json.dumps({"state": "brewing coffee"})
    assert (a.prompt_tokens, a.completion_tokens) == (120, 9)  # the stream's usage chunk


def test_a_stream_without_usage_counts_its_chunks(server):
    server.usage = None  # (llama-cpp-python's server sends none)
    a = OpenAIBackend(server.url, retries=0).answer(COFFEE, render(COFFEE))
    assert a.completion_tokens == len(json.dumps({"state": "brewing coffee"}))  # one chunk a character here
    assert a.prompt_tokens == estimate_prompt(render(COFFEE))


def test_a_stream_cut_off_at_the_deadline_ends_on_the_server(server):
    server.script(("drip", (200, 0.05)))  # 10 s of answer
    with pytest.raises(BackendError, match="no answer within 0.5 s"):
        retrying(OpenAIBackend(server.url, timeout=0.5, retries=0)).answer(COFFEE, render(COFFEE))
    deadline = time.monotonic() + 2.0
    while server.abandoned == 0 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert (server.abandoned, server.finished) == (1, 0)  # the server saw the client go


def test_a_stop_cuts_off_a_stream_at_once(server):
    server.script(("drip", (200, 0.05)))
    b = OpenAIBackend(server.url, timeout=30, retries=0)
    out: list[BaseException] = []

    def ask():
        try:
            b.answer(COFFEE, render(COFFEE))
        except BaseException as e:  # noqa: BLE001 (reported to the test)
            out.append(e)

    t = threading.Thread(target=ask, daemon=True)
    t.start()
    time.sleep(0.4)
    t0 = time.monotonic()
    b.abort()
    t.join(2)
    assert out and isinstance(out[0], Stopped) and time.monotonic() - t0 < 1.0


# --- 4. each attempt in the call log ------------------------------------------------------------

def test_each_attempt_is_its_own_record(server):
    calls = []
    asker = Asker(OpenAIBackend(server.url, retries=2, backoff=0.01), calls.append, fallback=ScriptedBackend(0))
    server.script(("status", 500), ("content", "garbage"))
    assert asker.ask("Isabella Rodriguez", COFFEE).state == "brewing coffee"
    (rec,) = calls
    one, two, three = json.loads(rec.attempts)
    assert [a["attempt"] for a in (one, two, three)] == [1, 2, 3]
    assert one["kind"] == "failed" and "HTTP 500" in one["reason"] and one["prompt_tokens"] == 0
    assert two["kind"] == "invalid" and two["raw"] == "garbage" and two["prompt_tokens"] == 120
    assert "kind" not in three and three["completion_tokens"] == 9 and three["ms"] > 0
    assert rec.prompt_tokens == 240 and rec.fallback == ""  # the call's cost: every attempt's
    asker.ask("Isabella Rodriguez", COFFEE)
    assert calls[-1].attempts == ""  # answered at once: nothing more to say


# --- 6. a server that fails some requests; one that is gone --------------------------------------

def flaky(rate: float, seed: int = 5, first: int = 3):
    """A POST handler failing the first `first` requests, then `rate` of them, with HTTP 500."""
    rng = random.Random(seed)

    def post(srv: Scripted, body: dict):
        if srv.posts <= first or rng.random() < rate:
            return 500, "scripted failure"
        return 200, answer_for(body)[0]
    return post


def test_a_server_failing_30_percent_of_requests_does_not_stop_the_run(tmp_path: Path):
    srv = Scripted(post=flaky(0.3))
    save = tmp_path / "flaky.sqlite"
    try:
        proc = cli("run", "--headless", TINY, "--until", "+30m", "--save", save, "--backend", "openai",
                   "--base-url", srv.url)
    finally:
        srv.close()
    assert proc.returncode == 0, proc.stderr
    assert "run complete" in proc.stderr
    assert re.search(r"fallbacks +(\w+ \d+, )*failed \d+", proc.stderr), proc.stderr  # the summary counts them
    info = json.loads(cli("save", "info", "--json", save, check=True).stdout)["calls"]
    assert info["by_reason"].get("failed", 0) >= 1  # the first question's every attempt failed
    assert info["retried"] >= 1 and info["attempts"] > info["calls"]
    (first,) = query(save, "SELECT attempts, fallback, note FROM llm_calls ORDER BY id LIMIT 1")
    assert first[1] == "failed" and "HTTP 500" in first[2]
    assert [a["kind"] for a in json.loads(first[0])] == ["failed"] * 3
    assert cli("save", "check", save).returncode == 0


def test_a_server_that_is_gone_stops_the_run(tmp_path: Path):
    srv = Scripted(post=lambda s, body: (500, "down for good"))
    save = tmp_path / "gone.sqlite"
    try:
        proc = cli("run", "--headless", TINY, "--until", "+30m", "--save", save, "--backend", "openai",
                   "--base-url", srv.url)
    finally:
        srv.close()
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "questions in a row failed: the backend is gone" in proc.stderr and "HTTP 500" in proc.stderr


# --- 5. a stop while a new save is created -----------------------------------------------------

@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["ctrl-c", "sigterm"])
def test_a_stop_while_a_new_save_is_created_is_honoured_at_once(tmp_path: Path, sig, code):
    """The server takes a minute to rate the first memories (--timeout 600): a stop ends the run
    within a second, with nothing saved."""
    srv = Scripted(post=lambda s, body: (s.release.wait(60), (200, answer_for(body)[0]))[1])
    save = tmp_path / "new.sqlite"
    try:
        proc = subprocess.Popen([sys.executable, "-m", "smalltown", "run", "--headless", str(TINY), "--until", "+10m",
                                 "--save", str(save), "--backend", "openai", "--base-url", srv.url, "--timeout", "600"],
                                stderr=subprocess.PIPE, text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
        deadline = time.monotonic() + 60
        while srv.posts == 0 and time.monotonic() < deadline:  # creation is asking
            time.sleep(0.05)
        assert srv.posts > 0
        t0 = time.monotonic()
        proc.send_signal(sig)
        rc = proc.wait(10)
        took = time.monotonic() - t0
        err = proc.stderr.read()
    finally:
        srv.close()
    assert rc == code, err
    assert took < 1.5, took  # (a second, and a busy machine's slack)
    assert "while the save was being created: nothing was saved" in err and "Traceback" not in err
    assert not save.exists()


# --- the save: schema 9 ----------------------------------------------------------------------------

def test_a_schema_8_save_gains_the_attempts_column_and_runs_on(tmp_path: Path):
    import sqlite3

    from smalltown.store.save import SCHEMA_VERSION

    save = tmp_path / "old.sqlite"
    cli("run", "--headless", TINY, "--until", "+10m", "--save", save, "--backend", "scripted", check=True)
    conn = sqlite3.connect(save)
    conn.execute("ALTER TABLE llm_calls DROP COLUMN attempts")
    conn.execute("UPDATE meta SET value = '8' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()
    assert cli("save", "check", save).returncode == 0  # read as it is: a schema-8 save has no attempts
    info = json.loads(cli("save", "info", "--json", save, check=True).stdout)
    assert info["calls"]["attempts"] == info["calls"]["calls"] and info["calls"]["retried"] == 0
    cli("run", "--headless", save, "--until", "+10m", "--backend", "scripted", check=True)
    assert query(save, "SELECT value FROM meta WHERE key = 'schema_version'") == [(str(SCHEMA_VERSION),)]
    assert "attempts" in [r[1] for r in query(save, "PRAGMA table_info(llm_calls)")]
    assert cli("save", "check", save).returncode == 0


def test_a_save_check_names_a_bad_attempts_list(tmp_path: Path):
    save = tmp_path / "bad.sqlite"
    cli("run", "--headless", TINY, "--until", "+10m", "--save", save, "--backend", "scripted", check=True)
    import sqlite3

    conn = sqlite3.connect(save)
    conn.execute("UPDATE llm_calls SET attempts = '[{\"attempt\": \"one\"}]' WHERE id = 1")
    conn.commit()
    conn.close()
    proc = cli("save", "check", save)
    assert proc.returncode == 1 and "llm_calls row 1" in proc.stdout + proc.stderr
    assert "attempts" in proc.stdout + proc.stderr




def test_the_help_states_the_server_defaults():
    out = " ".join(cli("run", "--help", check=True).stdout.split())
    assert "(default 60)" in out and "(1-256, default 4)" in out
    assert "retried twice, after 0.5 s, then 1 s" in out and "3 in a row stop the run" in out


# --- 7. counting ---------------------------------------------------------------------------------

def test_the_summary_counts_a_new_saves_creation_calls(tmp_path: Path):
    """A new save's first memories are rated at tick 0: the end-of-run summary counts those calls
    as `save info` does; a continued run counts only its own."""
    save = tmp_path / "s.sqlite"
    proc = cli("run", "--headless", TINY, "--until", "+10m", "--save", save, "--backend", "scripted", check=True)
    printed = int(re.search(r"model calls +([\d,]+)", proc.stderr).group(1).replace(",", ""))
    (at_zero,) = query(save, "SELECT count(*) FROM llm_calls WHERE tick = 0")[0]
    assert at_zero > 0 and printed == json.loads(cli("save", "info", "--json", save).stdout)["llm_calls"]
    before = printed
    proc = cli("run", "--headless", save, "--until", "+10m", "--backend", "scripted", check=True)
    (total,) = query(save, "SELECT count(*) FROM llm_calls")[0]
    match = re.search(r"model calls +([\d,]+)", proc.stderr)
    assert (int(match.group(1).replace(",", "")) if match else 0) == total - before


def test_a_stream_that_breaks_off_is_a_failed_exchange(server):
    """A server that goes away mid-answer (no finish_reason, no [DONE]) failed the request: it is
    retried, not taken as the model's unusable answer."""
    chunk = json.dumps({"choices": [{"index": 0, "delta": {"content": '{"sta'}, "finish_reason": None}]})
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"
    server.script(("raw_stream", head + f"data: {chunk}\n\n".encode()))
    a = retrying(OpenAIBackend(server.url, retries=1, backoff=0.01)).answer(COFFEE, render(COFFEE))
    assert a.output.state == "brewing coffee" and len(server.requests) == 2
