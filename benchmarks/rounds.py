"""Benchmark: where a day's model rounds go, and the ceiling they set on requests in flight.

Runs a world with the scripted stand-in in-process (no server) and tags every model call with
what asked it: a crowd phase (`Crowd.each`: a barrier; one item's calls run one after another),
a lone call on the tick's own thread, or a slow module's job (sim/later.py: it overlaps the
ticks). A tick must wait through each phase's longest item and every lone call, so

    rounds = sum over ticks of (sum over its phases of the longest item + its lone calls)

and, whatever the server's latency L, the average requests in flight are at most calls / rounds
(the wall is at least rounds x L plus the engine's own time per tick). Nothing in smalltown/ is
changed: the crowd, the call log and the slow modules' queue are wrapped for the run.

    python benchmarks/rounds.py [WORLD] [--hours 24] [--set think_every_ticks=6 ...]
                                [--concurrency C] [--latency L --tick-ms 0.45] [--sequences N]

With `--concurrency C` a phase is also scheduled on C workers in item order (as the pool does), so
a phase of more than C one-call items counts ceil(items / C) rounds. With `--latency` the bound on
the average in flight is (calls x L) / (rounds x L + ticks x tick-ms), and a timeline also counts
the waits for slow answers not back by the tick they are due (their calls are off the path, but
an answer due sooner than its latency holds the tick up).
With `think_ahead` the next actions decided beside the encounters (sim/thinking.py) are counted
like slow jobs ("ahead: ..."): off the rounds, and in the timeline waited for where they are
taken in. The "what-if" column: each grid tick's next-action rounds hidden behind the rest of that tick
(its reflections, reactions, talks, lone calls): max(next action, rest) instead of their sum.
The calls counted are the run's own (not the ratings of the agents' first memories made at create).
benchmarks/waits.py counts the same rounds by the kind of wait (benchmarks/waitkinds.py: own chain,
conversation turn, sight, slow job, global barrier, or false: near or far) and sets lock-step beside
the oracle (benchmarks/oracle.py) under the latency model.
"""

from __future__ import annotations

import argparse
import heapq
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from smalltown.mind import controller, talk  # noqa: E402
from smalltown.mind.agent import Mind  # noqa: E402
from smalltown.scripted import ScriptedBackend  # noqa: E402
from smalltown.sim import encounters, later, simulation, thinking  # noqa: E402
from smalltown.sim.crowd import Crowd  # noqa: E402
from smalltown.sim.open import create  # noqa: E402
from smalltown.world.load import load_world  # noqa: E402

NEXT = "next action"
# what each crowd phase runs, named by the function its items call (the outermost one wins)
STEPS = [(Mind, "reflect", "reflect"), (encounters, "consider", "react"), (encounters, "act_on", "act_on re-plan"),
         (Mind, "settle", "talk settle"), (talk, "say", "talk lines"), (talk, "remember", "talk summaries"),
         (talk, "carry_on", "talk re-plan"), (controller, "next_action", NEXT)]


@dataclass
class Phase:
    tick: int
    step: str  # the marker its items ran, else the function that called Crowd.each
    counts: list[int]  # calls per item, in item order
    tasks: list[list[str]]  # each item's calls' tasks, in order


@dataclass
class Thought:
    """(`think_ahead`) next actions decided beside the tick's encounters: off the rounds, like a slow
    job, and waited for where they are taken in (the timeline)."""
    future: object


@dataclass
class Tape:
    """What the run asked, in order: per tick, its phases, lone calls and slow jobs."""
    events: list[tuple] = field(default_factory=list)  # (tick, kind, payload) in the order they happened
    steps_calls: Counter = field(default_factory=Counter)  # the calls that are not a phase's: lone, slow jobs'
    job_calls: Counter = field(default_factory=Counter)  # id(a slow job) -> its calls (jobs stay in `events`)
    calls: int = 0
    local: threading.local = field(default_factory=threading.local)
    sim: object = None
    start: int = 0  # the tick the run began at


def instrument(tape: Tape) -> None:
    """Wrap (not edit) the engine: Crowd.each, the markers in STEPS, the call log, the slow queue."""
    ctx = tape.local

    def now() -> int:
        return tape.sim.tick if tape.sim is not None else -1

    def marker(fn, name):
        def marked(*a, **k):
            if getattr(ctx, "item", None) is not None and ctx.label is None:
                ctx.label = name
            return fn(*a, **k)
        return marked

    for owner, attr, name in STEPS:
        setattr(owner, attr, marker(getattr(owner, attr), name))

    each = Crowd.each

    def tagged_each(self, items, fn):
        caller = sys._getframe(1).f_code.co_qualname
        phase = Phase(now(), "crowd: " + caller, [0] * len(items), [[] for _ in items])
        labels = []

        def run(pair):
            i, x = pair
            ctx.item, ctx.label = (phase, i), None
            try:
                return fn(x)
            finally:
                labels.append(ctx.label)
                ctx.item = ctx.label = None

        out = each(self, list(enumerate(items)), run)
        phase.step = next((lb for lb in labels if lb), phase.step)
        tape.events.append((phase.tick, "phase", phase))
        return out
    Crowd.each = tagged_each

    record = simulation.Simulation._record_call

    def tagged_record(self, rec):
        tape.calls += 1
        job = self.slow.later.current() if self.slow else None
        item = getattr(ctx, "item", None)
        if job is not None:
            tape.steps_calls["later: " + rec.task] += 1
            tape.job_calls[id(job)] += 1
        elif self.thinking.calls() is not None:  # (`think_ahead`) a thought beside the tick's encounters
            tape.steps_calls["ahead: " + rec.task] += 1
        elif item is not None:
            item[0].counts[item[1]] += 1
            item[0].tasks[item[1]].append(rec.task)
        else:
            step = ("lone, slow apply: " if getattr(ctx, "applying", False) else "lone ") + rec.task
            tape.steps_calls[step] += 1
            tape.events.append((self.tick, "lone", step))
        return record(self, rec)
    simulation.Simulation._record_call = tagged_record

    step = later.Later.step

    def tagged_step(self, *a, **k):
        ctx.applying = True  # (the appliers' own calls, e.g. ratings a reflection's answer left, are lone)
        try:
            return step(self, *a, **k)
        finally:
            ctx.applying = False
    later.Later.step = tagged_step

    send = later.Later._send

    def tagged_send(self, agent, q, task):
        send(self, agent, q, task)
        tape.events.append((now(), "ask", self.jobs[id(q)]))
    later.Later._send = tagged_send

    ahead = thinking.Thinking.ahead

    def tagged_ahead(self, *a, **k):  # each thought: asked now, taken in at `join` (its calls in a row)
        before = len(self._out)
        ahead(self, *a, **k)
        for _, _, future, calls, _ in self._out[before:]:
            job = Thought(future)
            tape.job_calls[id(job)] = len(calls)  # (the stand-in answers at once: the calls are made)
            tape.events.append((now(), "ask", job))
    thinking.Thinking.ahead = tagged_ahead

    result = Crowd.result

    def tagged_result(self, future):
        tape.events.append((now(), "apply", future))
        return result(self, future)
    Crowd.result = tagged_result


def width_rounds(counts: list[int], workers: int | None) -> int:
    """A phase's rounds: its longest item, or with `workers` the pool's makespan (items in order)."""
    if not workers:
        return max(counts, default=0)
    free = [0] * min(workers, max(1, len(counts)))
    for n in counts:
        heapq.heapreplace(free, free[0] + n)
    return max(free)


def analyse(tape: Tape, workers: int | None) -> tuple[Counter, Counter, dict[int, list[int]]]:
    """Calls and rounds per step, and per tick [next-action rounds, the rest]."""
    calls, rounds = Counter(), Counter()
    ticks: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    calls.update(tape.steps_calls)
    for tick, kind, x in tape.events:
        if kind == "phase":
            calls[x.step] += sum(x.counts)
            r = width_rounds(x.counts, workers)
        elif kind == "lone":
            r = 1
        else:
            continue
        step = x.step if kind == "phase" else x
        rounds[step] += r
        ticks[tick][0 if step == NEXT else 1] += r
    return calls, rounds, ticks


def timeline(tape: Tape, workers: int | None, latency: float, tick_s: float, ticks: int) -> tuple[float, float]:
    """The wall time the day would take (and of it, the waits for slow answers due before they are back)."""
    t, waited, done, last = 0.0, 0.0, {}, tape.start
    for tick, kind, x in tape.events:
        t, last = t + max(0, tick - last) * tick_s, max(last, tick)  # the engine's own time, tick by tick
        if kind == "phase":
            t += width_rounds(x.counts, workers) * latency
        elif kind == "lone":
            t += latency
        elif kind == "ask":
            done[id(x.future)] = t + tape.job_calls[id(x)] * latency
        elif kind == "apply" and id(x) in done:
            wait = max(0.0, done.pop(id(x)) - t)
            t, waited = t + wait, waited + wait
    return t + max(0, tape.start + ticks - last) * tick_s, waited


def run(world_path: str, hours: float, sets: list[str]) -> tuple[Tape, int, int, float]:
    tape = Tape()
    instrument(tape)
    world = load_world(world_path)
    with tempfile.TemporaryDirectory() as d:
        sim = create(world, Path(d) / "rounds.sqlite", ScriptedBackend(world.seed), sets=sets)
        tape.sim, tape.start = sim, sim.tick
        tape.events.clear()
        tape.steps_calls.clear()
        tape.calls = 0  # (only the day's calls: none made while the run was created)
        began = time.perf_counter()
        sim.run_until(sim.now + timedelta(hours=hours))
        wall = time.perf_counter() - began
        ticks = sim.tick - tape.start
        sim.close()
    return tape, len(world.agents), ticks, wall


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("world", nargs="?", default=str(ROOT / "worlds" / "smallville.toml"))
    p.add_argument("--hours", type=float, default=24.0)
    p.add_argument("--set", dest="sets", action="append", default=[], help="a run setting, key=value")
    p.add_argument("--concurrency", type=int, default=None, help="also count rounds on a pool this wide")
    p.add_argument("--latency", type=float, default=None, help="seconds per model answer: print the bound")
    p.add_argument("--tick-ms", type=float, default=0.45, help="the engine's own time per tick (ms)")
    p.add_argument("--sequences", type=int, default=0, help="print each step's N commonest longest items' tasks")
    a = p.parse_args()
    tape, agents, ticks, wall = run(a.world, a.hours, a.sets)
    agent_days = agents * a.hours / 24
    widths = [None] + ([a.concurrency] if a.concurrency else [])
    print(f"world {Path(a.world).name} ({agents} agents), {a.hours:g} game hours, settings {' '.join(a.sets) or '-'}; "
          f"{ticks} ticks in {wall:.1f} s in-process ({wall / ticks * 1000:.2f} ms a tick, scripted answers included)")
    for w in widths:
        calls, rounds, per_tick = analyse(tape, w)
        total, whatif = sum(rounds.values()), sum(max(n, r) for n, r in per_tick.values())
        busy = sum(1 for n, r in per_tick.values() if n + r)
        head = "unbounded width" if w is None else f"concurrency {w}"
        print(f"\n{head}: calls {tape.calls}, ticks with calls {busy}, rounds {total} ({total / agent_days:.1f} per "
              f"agent-day); what-if (next action behind the rest) {whatif} ({whatif / agent_days:.1f})")
        print(f"  {'step':36s} {'calls':>6s} {'rounds':>7s}")
        shown = {s for s in calls if calls[s] or rounds[s]} | {name for _, _, name in STEPS}
        for step in sorted(shown, key=lambda s: (-rounds[s], -calls[s])):
            print(f"  {step:36s} {calls[step]:6d} {rounds[step]:7d}")
        print(f"  in-flight ceiling calls/rounds {tape.calls / max(1, total):.2f}; "
              f"what-if {tape.calls / max(1, whatif):.2f}")
        if a.latency:
            engine = ticks * a.tick_ms / 1000
            bound = tape.calls * a.latency / (total * a.latency + engine)
            bound_if = tape.calls * a.latency / (whatif * a.latency + engine)
            wall_t, waited = timeline(tape, w, a.latency, a.tick_ms / 1000, ticks)
            print(f"  at {a.latency * 1000:g} ms, {a.tick_ms:g} ms a tick: bound {bound:.2f} in flight "
                  f"(wall >= {total * a.latency + engine:.1f} s); what-if {bound_if:.2f}; timeline with slow "
                  f"answers waited for: wall {wall_t:.1f} s ({waited:.1f} s waiting), "
                  f"{tape.calls * a.latency / wall_t:.2f} in flight")
    if a.sequences:
        longest: dict[str, Counter] = defaultdict(Counter)
        for _, kind, x in tape.events:
            if kind == "phase" and any(x.counts):
                longest[x.step][" > ".join(max(x.tasks, key=len))] += 1
        print("\nthe longest item of a phase, its tasks in order (phases: count), per step")
        for step, seqs in longest.items():
            print(f"  {step}: " + "; ".join(f"{s} ({n})" for s, n in seqs.most_common(a.sequences)))


if __name__ == "__main__":
    main()
