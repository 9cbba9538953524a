"""Many servers behind a real router: vllm-router (PyPI `vllm-router`, a Rust binary) with
consistent hashing on each request's X-Session-ID (the agent), in front of two loopback prompt
servers, each in a process of its own, answering alike (the stand-in's answers for the task the
request carries). A scripted game hour of Smallville runs through the router; one server is
killed a third of the way in. The run goes on: its digest is the one-server run's, no answer falls
back to the stand-in, the calls the kill caught were retried (a failed attempt, then an answer)
and the killed server's agents went on on the other. Locally a missing router skips; under
CI=true it fails (tests/realmodel.py `missing`)."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import time
import urllib.request
from datetime import timedelta
from pathlib import Path

import pytest

from benchmarks.promptserver import ServerProcess, Telling
from helpers import SMALLVILLE, query
from realmodel import free_port, missing, stop, wait_up
from smalltown.cli.llama_server import dies_with_parent
from smalltown.scripted import ScriptedBackend
from smalltown.sim.open import create
from smalltown.world.load import load_world

def require_router() -> None:
    """vllm-router's launcher, importable, or `missing` (skipped locally, failed under CI=true)."""
    try:
        importlib.import_module("vllm_router.launch_router")
    except ImportError as e:
        missing(f"vllm-router cannot be imported ({e}): the package vllm-router is not installed")


def start_router(workers: list[str], log: Path, *extra: str, wait: float = 60) -> tuple[str, subprocess.Popen]:
    """vllm-router at 127.0.0.1 in front of `workers` (base URLs without /v1): its /v1 URL once it
    answers, and its process. Health checked every second on /v1/models (a prompt server, like
    llama_cpp.server, has no /health)."""
    require_router()
    port = free_port()
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "vllm_router.launch_router", "--host", "127.0.0.1",
                                 "--port", str(port), "--prometheus-port", str(free_port()),
                                 "--policy", "consistent_hash", "--health-check-endpoint", "/v1/models",
                                 "--health-check-interval-secs", "1", *extra, "--worker-urls", *workers],
                                stdout=out, stderr=subprocess.STDOUT, preexec_fn=dies_with_parent())
    url = f"http://127.0.0.1:{port}/v1"
    return url, wait_up(proc, url, log, "vllm-router", wait)


def hour(url: str, path: Path, at_third=lambda: None) -> str:
    """A game hour of Smallville against `url`, stand-in answers over HTTP; `at_third` called after
    the tick a third of the way in. The save's digest."""
    world = load_world(SMALLVILLE)
    backend = Telling(url, timeout=30, retries=3, backoff=0.5, max_concurrency=4, seed=world.seed)
    sim = create(world, path, backend, fallback=ScriptedBackend(world.seed))
    start = sim.tick
    try:
        third = start + (3600 // world.step_seconds) // 3

        def tick(_events: object) -> None:
            if sim.tick == third:
                at_third()

        sim.run_until(sim.now + timedelta(hours=1), on_tick=tick)
        return sim.save.digest()
    finally:
        sim.close()


@pytest.mark.parametrize("retries", ["router", "client"])
def test_a_run_through_the_router_goes_on_when_a_server_dies(tmp_path: Path, retries: str):
    """`router`: vllm-router's own retries move a failed request to the other worker; `client`:
    with them off (--disable-retries) the router answers 5xx until its breaker opens, and the
    backend's retries (llm/wrappers.py Retry) are what move it."""
    require_router()
    seed = load_world(SMALLVILLE).seed
    with ServerProcess(latency=0.002, stand_in=seed) as one:
        alone = hour(one.url, tmp_path / "one.sqlite")
    with ServerProcess(latency=0.002, stand_in=seed) as a, ServerProcess(latency=0.002, stand_in=seed) as b:
        extra = ("--disable-retries",) if retries == "client" else ()
        url, router = start_router([a.url.removesuffix("/v1"), b.url.removesuffix("/v1")], tmp_path / "router.log",
                                   "--cb-failure-threshold", "3", *extra)
        try:
            killed: dict = {}

            def kill_a() -> None:
                killed["before"] = {r.agent for r in a.requests}  # (fetched while it lives)
                killed["b before"] = len(b.requests)
                a.kill()

            routed = hour(url, tmp_path / "routed.sqlite", kill_a)
        finally:
            stop(router)
        on_b_after = {r.agent for r in b.requests[killed["b before"]:]}
    assert routed == alone
    calls = query(tmp_path / "routed.sqlite", "SELECT agent, fallback, attempts FROM llm_calls")
    assert len(calls) == len(query(tmp_path / "one.sqlite", "SELECT 1 FROM llm_calls")) > 100
    assert [c for c in calls if c[1]] == []  # no answer fell back to the stand-in
    retried = [(agent, json.loads(attempts)) for agent, _, attempts in calls if attempts]
    rerouted = [agent for agent, tries in retried if tries[0].get("kind") == "failed" and not tries[-1].get("kind")]
    assert len(rerouted) == len(retried)  # every call retried was a failure of the server killed, then answered
    moved = killed["before"] & on_b_after  # the killed server's agents, answered by the other after it
    assert killed["before"] and moved and set(rerouted) <= on_b_after
    if retries == "client":
        assert rerouted  # the router's 5xx, retried by the backend until the router moved the agent
    print(f"{len(calls)} calls, {len(rerouted)} re-routed after a failed attempt; "
          f"{len(moved)} of the killed server's {len(killed['before'])} agents moved to the other")
