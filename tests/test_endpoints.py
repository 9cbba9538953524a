"""Issue 15, beyond one machine: several `--base-url`s, each agent's questions all sent to one
server chosen by a hash of its name. The servers are real loopback HTTP servers:
benchmarks/promptserver.py (answers drawn from a hash of the prompt, so any server answers a
question alike) and tests/fakes.py's scripted one."""

from __future__ import annotations

import socket
import subprocess
import sys

import pytest

from benchmarks.promptserver import PromptServer
from fakes import FakeServer
from helpers import ROOT, TINY, cli, query
from realistic import ISABELLA, NOW, PLACES
from smalltown.llm.render import render
from smalltown.llm.asker import Asker
from smalltown.llm.backend import question_seed
from smalltown.llm.endpoints import pin
from smalltown.llm.models import ConfigError, user_config
from smalltown.llm.openai_compat import BackendError, OpenAIBackend
from smalltown.llm.wrappers import GONE_AFTER
from smalltown.llm.tasks import NextAction
from smalltown.llm.wrappers import retrying
from smalltown.scripted import ScriptedBackend
from smalltown.store.save import Save
from smalltown.world.load import load_world

NAMES = [f"Agent {i}" for i in range(40)]
TASK = NextAction(persona=ISABELLA, now=NOW, status="", recent=[], known_places=PLACES)


def _closed_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def _hour(tmp_path, name: str, *urls: str) -> str:
    """A headless game hour of the tiny town against `urls`; the save's path."""
    save = tmp_path / name
    args = [a for u in urls for a in ("--base-url", u)]
    cli("run", "--headless", TINY, "--until", "+1h", "--save", save, "--backend", "openai", *args,
        "--timeout", "30", "--concurrency", "2", check=True)
    return save


def test_pin_is_a_stable_hash_of_the_name_that_spreads_agents():
    assert [pin(n, 1) for n in NAMES] == [0] * len(NAMES)
    spread = [pin(n, 3) for n in NAMES]
    assert set(spread) == {0, 1, 2} and spread == [pin(n, 3) for n in NAMES]
    # not Python's hash(), which another process salts differently
    code = f"from smalltown.llm.endpoints import pin; print([pin(n, 3) for n in {NAMES!r}])"
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True,
                           env={"PYTHONHASHSEED": "4242", "PYTHONPATH": str(ROOT)})
    assert other.stdout.strip() == str(spread)


def test_two_servers_each_agent_on_its_own_and_the_digest_of_one_server(tmp_path):
    world = load_world(TINY)
    with PromptServer(latency=0.002) as a, PromptServer(latency=0.002) as b:
        two = _hour(tmp_path, "two.sqlite", a.url, b.url)
        seeds = [{r.seed for r in a.requests}, {r.seed for r in b.requests}]
        asked_two = len(a.requests) + len(b.requests)
    with PromptServer(latency=0.002) as one_server:
        one = _hour(tmp_path, "one.sqlite", one_server.url)
        asked_one = len(one_server.requests)
    rows = query(two, "SELECT agent, task, tick, model FROM llm_calls WHERE fallback != 'too long'")
    agents = {agent for agent, *_ in rows}
    assert len(agents) > 1 and all(seeds)  # both servers were used
    urls = [a.url, b.url]
    for agent, task, tick, model in rows:
        mine = pin(agent, 2)
        # the server saw the question (by its seed), and only its agent's server did
        seed = question_seed(world.seed, agent, task, tick)
        assert seed in seeds[mine] and seed not in seeds[1 - mine], (agent, task, tick)
        assert model == f"local @ {urls[mine]}"  # the call log names it
    assert asked_two == asked_one  # the same questions and retries as against one server
    digests = []
    for path in (one, two):
        save = Save.open(path, readonly=True)
        try:
            digests.append(save.digest())
        finally:
            save.close()
    assert digests[0] == digests[1]
    assert {m for (m,) in query(one, "SELECT model FROM llm_calls")} == {"local"}  # one server: its model's name
    # the fallbacks' calls too name their server; and "with a note" still means something
    assert query(two, "SELECT count(*) FROM llm_calls WHERE note != ''") == query(one, "SELECT count(*) FROM llm_calls "
                                                                                       "WHERE note != ''")


def test_a_failing_server_fails_its_own_agents_and_no_question_moves_elsewhere():
    with PromptServer(latency=0) as up:
        down = _closed_url()
        backend = OpenAIBackend([up.url, down], retries=1, backoff=0.01, timeout=5)
        on_up = next(n for n in NAMES if pin(n, 2) == 0)
        on_down = next(n for n in NAMES if pin(n, 2) == 1)
        calls = []
        asker = Asker(backend, calls.append, fallback=ScriptedBackend(0))
        for _ in range(GONE_AFTER - 1):  # the stand-in answers; the other server's answers between do not
            asker.ask(on_down, TASK)     # hide that this one keeps failing
            asker.ask(on_up, TASK)
        assert [c.fallback for c in calls] == ["failed", ""] * (GONE_AFTER - 1)
        with pytest.raises(BackendError, match="connection refused") as e:
            asker.ask(on_down, TASK)
        assert down in str(e.value) and "2 attempts" in str(e.value) and "in a row failed" in str(e.value)
        assert len(up.requests) == GONE_AFTER - 1  # not re-pinned to the server that is up


def test_each_server_finds_its_own_structured_output_mode():
    refusal = '{"error": {"message": "Input should be \'text\' or \'json_object\'", "input": "json_schema"}}'
    fake = FakeServer()
    try:
        with PromptServer(latency=0) as takes_schema:
            backend = OpenAIBackend([fake.url, takes_schema.url], retries=0, timeout=5)
            fake.script(("error", (500, refusal)))
            fake.respond = lambda request: ScriptedBackend(0).answer(TASK).raw
            on_fake = next(n for n in NAMES if pin(n, 2) == 0)
            on_other = next(n for n in NAMES if pin(n, 2) == 1)
            refused = retrying(backend).answer(TASK, render(TASK), agent=on_fake)
            plain = retrying(backend).answer(TASK, render(TASK), agent=on_other)
            assert [e.structured for e in backend.endpoints] == ["grammar", "json_schema"]
            assert "the server refused json_schema" in refused.note and "refused" not in plain.note
            about = backend.can.about
            assert f"{fake.url}: structured output: grammar" in about
            assert f"{takes_schema.url}: structured output: json_schema" in about
            assert backend.can.max_concurrency == 2 * backend.max_concurrency  # --concurrency on each server
    finally:
        fake.close()


def test_base_urls_from_the_config_file_and_their_mistakes(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    conf = tmp_path / "smalltown"
    conf.mkdir()
    (conf / "config.toml").write_text('base_url = ["http://10.0.0.1:8080/v1", "http://10.0.0.2:8080/v1"]\n')
    assert user_config()["base_url"] == ["http://10.0.0.1:8080/v1", "http://10.0.0.2:8080/v1"]
    for bad in ('base_url = [1, 2]\n', 'base_url = []\n', 'base_url = 3\n'):
        (conf / "config.toml").write_text(bad)
        with pytest.raises(ConfigError, match="base_url must be a str or a list of them"):
            user_config()
    with pytest.raises(BackendError, match="given twice"):
        OpenAIBackend(["http://10.0.0.1:8080/v1", "http://10.0.0.1:8080/v1/"])
    with pytest.raises(BackendError, match="not an http"):
        OpenAIBackend(["http://10.0.0.1:8080/v1", "ftp://10.0.0.2/v1"])


def test_the_command_line_takes_base_url_from_the_config_file_as_a_list(tmp_path, monkeypatch):
    with PromptServer(latency=0.002) as a, PromptServer(latency=0.002) as b:
        monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
        (tmp_path / "smalltown").mkdir()
        (tmp_path / "smalltown" / "config.toml").write_text(f'base_url = ["{a.url}", "{b.url}"]\n')
        save = tmp_path / "conf.sqlite"
        cli("run", "--headless", TINY, "--until", "+10m", "--save", save, "--backend", "openai", check=True)
        assert a.requests and b.requests


def test_every_request_says_which_agent_asks_and_one_without_an_agent_says_nothing():
    """X-Session-ID and `user` (vllm-router's consistent hash), x-smg-routing-key (sglang's router):
    sent through the Asker to a single server (a router's address), so a router can keep each
    agent on one worker; a question no agent asks carries none of them."""
    fake = FakeServer()
    try:
        fake.respond = lambda request: ScriptedBackend(0).answer(TASK).raw
        asker = Asker(OpenAIBackend(fake.url, retries=0, timeout=5), lambda call: None, fallback=ScriptedBackend(0))
        asker.ask("Agent 7", TASK)
        asker.ask("", TASK)
        asker.ask("Zoë 100%", TASK)  # (a header is ASCII: the name percent-encoded there, whole in `user`)
        said, unsaid, named = fake.requests
        assert said["body"]["user"] == "Agent 7"
        assert said["headers"]["X-Session-ID"] == said["headers"]["x-smg-routing-key"] == "Agent 7"
        assert "user" not in unsaid["body"]
        assert not {"x-session-id", "x-smg-routing-key"} & {h.lower() for h in unsaid["headers"]}
        assert named["body"]["user"] == "Zoë 100%" and named["headers"]["X-Session-ID"] == "Zo%C3%AB 100%25"
    finally:
        fake.close()
