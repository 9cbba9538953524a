"""Benchmark: how busy a model server is kept, and whether concurrency changes the run.

Runs a world (default Smallville, one game day) with `--backend openai` against a loopback server
whose answers depend only on the prompt (benchmarks/promptserver.py), each after a fixed latency,
at one or more `--concurrency` levels. For each it prints the calls, the wall time, the requests
in flight (time-weighted average and most at once, measured at the server), the longest chain of
calls that waited on each other (per agent-day), and the run's digest: the same prompt gets the
same answer, so equal digests mean concurrency did not change the run.

    python benchmarks/concurrency.py [WORLD] [--hours H] [--concurrency 1 4 16] [--latency 0.02|gpu|cpu]
                                     [--server-process] [--answers hash|scripted] [--set think_every_ticks=6 ...]

`--latency gpu` or `cpu`: each answer takes the latency model's time (benchmarks/latency.py: slots,
uncached prompt tokens per agent, answer tokens) instead of a fixed one. `--server-process`: the
server runs in a subprocess of its own, so its work takes none of the engine's CPU.

With `--set` the run's settings (as `smalltown run --set`); two figures say what thinking on a
grid (`think_every_ticks`) costs in behaviour: *wait* = game minutes per agent-day an agent
whose action had ended stood waiting for its next (counted after each tick), and *sight→react*
= mean game seconds from a sighting to the reaction that weighed it (the react prompt's "notices"
matched to the agent's latest such sighting).

Targets (issue 15): the same digest at 1, 4 and 16; at 16 over a 25-agent day, at least 8
requests in flight on average and a longest chain of at most 15 calls per agent-day.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from benchmarks.latency import MODELS  # noqa: E402
from benchmarks.promptserver import (PromptServer, ServerProcess, Telling, in_flight_average,  # noqa: E402
                                     longest_chain, max_in_flight)
from smalltown.scripted import ScriptedBackend  # noqa: E402
from smalltown.cli.backends import BackendOptions, make_backend, make_fallback  # noqa: E402
from smalltown.sim.open import create  # noqa: E402
from smalltown.store.save import open_reader  # noqa: E402
from smalltown.world.load import load_world  # noqa: E402


@dataclass
class Measure:
    concurrency: int
    calls: int  # the call log's rows (fallbacks included)
    requests: int  # what reached the server
    wall: float
    in_flight: float
    most: int
    chain: int
    per_agent_day: float  # the longest chain, per agent-day
    digest: str
    seeds: int  # distinct seeds the server received
    wait: float  # game minutes per agent-day an agent with its action ended waited for the next
    delay: float  # mean game seconds from a sighting to the reaction that weighed it


def reaction_delay(path: Path, step: int) -> float:
    """Mean game seconds from a sighting to the reaction weighing it (0 with no reactions)."""
    reader = open_reader(path)
    try:
        delays = []
        for call in reader.calls(task="react", limit=None):
            prompt = reader.call_detail(call.id)["prompt"]
            rows = reader.conn.execute("SELECT tick, text FROM events WHERE kind = 'perceived' AND agent = ? "
                                       "AND tick <= ? ORDER BY tick DESC LIMIT 400", (call.agent, call.tick))
            tick = next((t for t, text in rows if f'notices: "{text.split(" sees: ", 1)[-1]}"' in prompt), None)
            if tick is not None:
                delays.append((call.tick - tick) * step)
        return sum(delays) / len(delays) if delays else 0.0
    finally:
        reader.close()


def measure(world_path: Path | str, hours: float, concurrency: int, latency: float | str, work: Path,
            answers: str = "hash", sets: list[str] | None = None, process: bool = False) -> Measure:
    """One run of `hours` game hours of the world at `concurrency`, against a fresh server whose
    answers are drawn from the hash of the prompt ("hash") or are the stand-in's ("scripted"),
    each taking `latency` seconds or a latency model's time ("gpu", "cpu"), the server in a
    subprocess with `process`."""
    world = load_world(world_path)
    fixed, model = (0.0, latency) if isinstance(latency, str) else (latency, None)
    scripted = answers == "scripted"
    if process:
        server = ServerProcess(fixed, model, stand_in=world.seed if scripted else None)
    else:
        server = PromptServer(fixed, ScriptedBackend(world.seed) if scripted else None, MODELS[model] if model else None)
    with server:
        opts = BackendOptions(base_url=server.url, concurrency=concurrency, timeout=60, retries=1)
        backend = make_backend("openai", world.seed, opts)
        if scripted:
            backend = Telling(server.url, timeout=60, retries=1, max_concurrency=concurrency, seed=world.seed)
        path = work / f"c{concurrency}.sqlite"
        sim = create(world, path, backend, fallback=make_fallback("openai", world.seed, opts), sets=sets or [])
        waited = 0

        def count(_events: object) -> None:  # agents whose action has ended, still undecided after the tick
            nonlocal waited
            waited += sum(a.mind.due(sim.now) for a in sim.agents)

        try:
            t0 = time.monotonic()
            sim.run_until(sim.now + timedelta(hours=hours), on_tick=count)
            wall = time.monotonic() - t0
            calls, digest = sim.save.count("llm_calls"), sim.save.digest()
        finally:
            sim.close()
        reqs = list(server.requests)
    chain = longest_chain(reqs)
    agent_days = len(world.agents) * hours / 24
    return Measure(concurrency, calls, len(reqs), wall, in_flight_average(reqs, wall), max_in_flight(reqs), chain,
                   chain / agent_days, digest, len({r.seed for r in reqs}),
                   waited * world.step_seconds / 60 / agent_days, reaction_delay(path, world.step_seconds))


def _latency(text: str) -> float | str:
    if text in MODELS:
        return text
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: seconds, or one of {', '.join(sorted(MODELS))}") from None


def _said(latency: float | str) -> str:
    return f"model {latency}" if isinstance(latency, str) else f"{latency * 1000:g} ms"


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("world", nargs="?", default=str(ROOT / "worlds" / "smallville.toml"))
    p.add_argument("--hours", type=float, default=24.0, help="game hours to run (default: a day)")
    p.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 16])
    p.add_argument("--latency", type=_latency, default=0.02,
                   help="seconds each answer takes at the server, or a latency model: gpu, cpu")
    p.add_argument("--server-process", action="store_true", help="the server in a subprocess of its own")
    p.add_argument("--answers", choices=("hash", "scripted"), default="hash",
                   help="the server's answers: drawn from a hash of the prompt, or the stand-in's for its task")
    p.add_argument("--set", dest="sets", action="append", default=[], metavar="NAME=VALUE",
                   help="a setting for the run, e.g. think_every_ticks=6 (repeatable)")
    args = p.parse_args()
    world = load_world(args.world)
    print(f"world {world.name} ({len(world.agents)} agents), {args.hours:g} game hours, "
          f"server latency {_said(args.latency)}{' (own process)' if args.server_process else ''}, "
          f"{args.answers} answers" + "".join(f", {x}" for x in args.sets))
    print(f"{'conc':>4} {'calls':>6} {'reqs':>6} {'wall s':>7} {'in flight':>9} {'max':>4} {'chain':>6} "
          f"{'/agent-day':>10} {'seeds':>6} {'wait':>5} {'sight→react':>11}  digest")
    with tempfile.TemporaryDirectory() as d:
        for c in args.concurrency:
            m = measure(args.world, args.hours, c, args.latency, Path(d), args.answers, args.sets, args.server_process)
            print(f"{m.concurrency:>4} {m.calls:>6} {m.requests:>6} {m.wall:>7.1f} {m.in_flight:>9.2f} {m.most:>4} "
                  f"{m.chain:>6} {m.per_agent_day:>10.1f} {m.seeds:>6} {m.wait:>5.1f} {m.delay:>10.1f}s  "
                  f"{m.digest[:16]}", flush=True)


if __name__ == "__main__":
    main()
