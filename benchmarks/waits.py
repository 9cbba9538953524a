"""Benchmark: lock-step's waits by kind, and its wall under the latency model beside the oracle's (the
successor of benchmarks/rounds.py's counting).

Runs a world with the scripted stand-in in-process into a save, and keeps, for every logged call,
what asked it: a crowd phase (`Crowd.each`: a barrier; one item's calls one after another, named by
the function that called `each`), a lone call on the tick's thread, a slow job (sim/later.py: off the
rounds, waited for where it is applied) or a thought (`think_ahead`); and each agent's tile at the
start of each tick. Nothing in smalltown/ is changed: the crowd and the call log are wrapped for the run.

Then, from the save and that tape:
- the oracle (benchmarks/oracle.py: the calls' true dependencies, critical path, list schedule);
- lock-step's makespan by the same latency model: tick by tick, each phase on c workers in item order
  (a call's duration set at the workers busy when it starts), lone calls one after another, a slow job
  run from its asking tick's start beside the ticks (not holding a worker) and waited for where it is
  applied; thoughts are counted as a phase of their own (their overlap with the encounters is not
  modelled: lock-step's figure is then an upper bound);
- the rounds of waiting by kind (benchmarks/waitkinds.py): each phase's rounds are its longest item's
  calls (unbounded width, as rounds.py counts them), a lone call one round; the agents waiting on
  them are those asking next (the next phase with calls). A waiter on one of the slowest items waits
  on its own chain (it is that item's agent), or on a true dependency (the oracle's edges from that
  item's calls to the waiter's next call: conversation turn, sight or exchange, global barrier; a
  civics or memes phase is a global barrier), or falsely: near (within reach R = max(vision,
  hearing) + 2 tiles, Chebyshev, of one of the slowest at the phase's tick) or far. A round takes the
  strongest kind among its waiters (waitkinds.TRUE, then near, then far); "agent-waits" count each
  waiter's kind.

    python3 benchmarks/waits.py [WORLD] [--hours 1] [--set k=v ...] [--latency gpu cpu fixed] [--concurrency 16 64]
                                [--save PATH]
"""

from __future__ import annotations

import argparse
import bisect
import heapq
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import oracle  # noqa: E402
from benchmarks.latency import LatencyModel  # noqa: E402
from benchmarks.waitkinds import FALSE, TRUE, Wait  # noqa: E402
from smalltown.scripted import ScriptedBackend  # noqa: E402
from smalltown.sim import simulation, thinking  # noqa: E402
from smalltown.sim.crowd import Crowd  # noqa: E402
from smalltown.sim.open import create  # noqa: E402
from smalltown.store.save import open_reader  # noqa: E402
from smalltown.world.load import load_world  # noqa: E402

BARRIER_STEPS = ("Civics", "Memes")  # crowd phases over the whole town (their caller's qualified name)
BARRIER_TASKS = {"amendments", "revise_constitution", "meme_summary"}  # lone calls of a town-wide step


@dataclass(frozen=True)
class Tag:
    tick: int
    phase: int  # the crowd's phase number it is logged at
    agent: str
    task: str
    kind: str  # "crowd", "lone", "job", "thought"
    step: str  # the function that called Crowd.each ("" for the others)


@dataclass
class Tape:
    sim: object = None
    tags: list[Tag] = field(default_factory=list)  # the logged calls, in the save's order
    steps: dict[tuple[int, int], str] = field(default_factory=dict)  # (tick, phase) -> Crowd.each's caller
    thoughts: set[tuple[int, int]] = field(default_factory=set)  # (tick, phase) of thoughts
    tiles: dict[int, dict[str, tuple[int, int]]] = field(default_factory=dict)  # tick -> agent -> tile at start


def instrument(tape: Tape) -> Callable[[], None]:
    """Wrap (not edit) Crowd.each, Thinking.ahead, Simulation._step and _flush; returns what puts
    them back."""
    each = Crowd.each

    def tagged_each(self, items, fn):
        if tape.sim is not None:
            tape.steps[(tape.sim.tick, self.phase + 1)] = sys._getframe(1).f_code.co_qualname
        return each(self, items, fn)
    Crowd.each = tagged_each

    ahead = thinking.Thinking.ahead

    def tagged_ahead(self, *a, **k):
        before = len(self._out)
        ahead(self, *a, **k)
        for *_, phase in self._out[before:]:
            tape.thoughts.add((tape.sim.tick, phase))
    thinking.Thinking.ahead = tagged_ahead

    step = simulation.Simulation._step

    def tagged_step(self, *args):
        if tape.sim is self:
            tape.tiles[self.tick + 1] = {a.name: a.tile for a in self.agents}
        return step(self, *args)
    simulation.Simulation._step = tagged_step

    flush = simulation.Simulation._flush

    def tagged_flush(self, changes, snapshot=False):
        if tape.sim is self:  # the calls in the order _flush writes them
            order = {a.name: i for i, a in enumerate(self.agents)}
            for t, phase, rec in sorted(self._calls, key=lambda x: (x[1], order.get(x[2].agent, -1))):
                step = tape.steps.get((t, phase), "")
                kind = ("job" if "asked at tick" in (rec.note or "") else "thought" if (t, phase) in tape.thoughts
                        else "crowd" if step else "lone")
                tape.tags.append(Tag(t, phase, rec.agent, rec.task, kind, step))
        return flush(self, changes, snapshot)
    simulation.Simulation._flush = tagged_flush

    def restore() -> None:
        Crowd.each, thinking.Thinking.ahead = each, ahead
        simulation.Simulation._step, simulation.Simulation._flush = step, flush
    return restore


def run(world_path: str, hours: float, sets: list[str], save: Path) -> tuple[Tape, int, float, int]:
    """The world's run into `save`: the tape, the tick it began at, its wall seconds, the reach R."""
    tape = Tape()
    restore = instrument(tape)
    try:
        world = load_world(world_path)
        sim = create(world, save, ScriptedBackend(world.seed), sets=sets, overwrite=True)
        start, reach = sim.tick, max(sim.settings.vision_radius, sim.settings.hearing_radius) + 2
        tape.sim = sim
        began = time.perf_counter()
        sim.run_until(sim.now + timedelta(hours=hours))
        wall = time.perf_counter() - began
        sim.close()
    finally:
        restore()
    return tape, start, wall, reach


@dataclass
class Phase:
    tick: int
    phase: int  # the crowd's phase number
    kind: str
    step: str
    items: dict[str, list[int]]  # agent -> its calls (node indices), in order


def phases(tags: list[Tag]) -> list[Phase]:
    """The calls grouped as lock-step ran them: per tick and phase; each lone call a phase of its own."""
    out: list[Phase] = []
    for i, t in enumerate(tags):
        last = out[-1] if out else None
        if t.kind != "lone" and last is not None and (last.tick, last.phase, last.kind) == (t.tick, t.phase, t.kind):
            last.items.setdefault(t.agent, []).append(i)
        else:
            out.append(Phase(t.tick, t.phase, t.kind, t.step, {t.agent: [i]}))
    return out


def pool(items: list[list[int]], nodes: list[oracle.Node], model: LatencyModel, slots: int) -> tuple[float, float]:
    """(makespan, Σ durations) of items on `slots` workers in item order, each item's calls in turn,
    a call's duration set at the workers busy when it starts."""
    queue = list(reversed(items))
    running: list[tuple[float, int, int, list[int]]] = []  # (end, seq, call's position, the item)
    now = total = 0.0
    seq = 0

    def start(item: list[int], k: int) -> None:
        nonlocal total, seq
        n = nodes[item[k]]
        d = model.seconds(n.uncached, n.answer, len(running) + 1)
        total += d
        seq += 1
        heapq.heappush(running, (now + d, seq, k, item))

    while queue or running:
        while queue and len(running) < slots:
            start(queue.pop(), 0)
        now, _, k, item = heapq.heappop(running)
        if k + 1 < len(item):
            start(item, k + 1)
    return now, total


def lockstep(tags: list[Tag], nodes: list[oracle.Node], model: LatencyModel, slots: int) -> oracle.Schedule:
    """Lock-step's wall under the latency model (see the module's docstring)."""
    t = total = 0.0
    starts: list[tuple[int, float]] = []  # (tick, when its first phase began): ticks without calls take no time
    jobs: dict[tuple[str, int], float] = {}  # (agent, asked) -> when its answers so far are back
    for p in phases(tags):
        if not starts or starts[-1][0] != p.tick:
            starts.append((p.tick, t))
        if p.kind == "job":
            for i in (i for calls in p.items.values() for i in calls):
                n = nodes[i]
                k = bisect.bisect_left(starts, (n.asked, -1.0))
                asked = starts[k][1] if k < len(starts) else t
                d = model.seconds(n.uncached, n.answer)
                jobs[(n.agent, n.asked)] = max(jobs.get((n.agent, n.asked), 0.0), asked) + d
                total += d
                t = max(t, jobs[(n.agent, n.asked)])
        elif p.kind == "lone":
            n = nodes[next(iter(p.items.values()))[0]]
            d = model.seconds(n.uncached, n.answer)
            t, total = t + d, total + d
        else:
            span, busy = pool(list(p.items.values()), nodes, model, slots)
            t, total = t + span, total + busy
    return oracle.Schedule(slots, t, total)


def waits(tags: list[Tag], dag: oracle.Dag, tiles: dict, reach: int) -> tuple[Counter, Counter]:
    """Lock-step's rounds of waiting by kind, and its agent-waits by kind (see the module's docstring)."""
    rounds, agent_waits = Counter(), Counter()
    ps = [p for p in phases(tags) if p.kind != "job"]
    for k, p in enumerate(ps):
        longest = max(len(c) for c in p.items.values())
        slowest = [a for a, c in p.items.items() if len(c) == longest]
        low = min(i for c in p.items.values() for i in c)
        barrier = (any(s in p.step for s in BARRIER_STEPS)
                   or any(dag.nodes[i].task in BARRIER_TASKS for c in p.items.values() for i in c))
        nxt = ps[k + 1] if k + 1 < len(ps) else None
        kinds = []
        for w, calls in (nxt.items.items() if nxt else ()):
            kinds.append(Wait.BARRIER if barrier else _kind(w, calls[0], slowest, p, dag, low, tiles, reach))
        if not kinds:
            continue
        agent_waits.update(kinds)
        rounds[min(kinds, key=_strength)] += longest
    return rounds, agent_waits


def _strength(kind: Wait) -> int:
    return (TRUE + FALSE).index(kind) if kind in TRUE + FALSE else len(TRUE + FALSE)


def _kind(w: str, j: int, slowest: list[str], p: Phase, dag: oracle.Dag, low: int, tiles: dict, reach: int) -> Wait:
    """Why `w`, whose next call is node `j`, waits on phase `p`'s slowest items."""
    if w in slowest:
        return Wait.OWN
    theirs = {i: a for a in slowest for i in p.items[a]}
    best, seen, stack = None, {(j, None)}, [(j, None)]
    while stack:  # back over the dependencies, within the calls since the phase began
        b, via = stack.pop()
        for a, kind in dag.preds[b].items():
            # the path's kind: its last edge between two agents (none while still on w's own chain)
            cross = via or (kind if dag.nodes[a].agent != dag.nodes[b].agent else None)
            if a < low or (a, cross) in seen:
                continue
            seen.add((a, cross))
            if a in theirs and (best is None or _strength(cross) < _strength(best)):
                best = cross
            stack.append((a, cross))
    if best is not None:
        return best
    here = tiles.get(p.tick, {})
    me = here.get(w)
    near = me is not None and any(s in here and max(abs(me[0] - here[s][0]), abs(me[1] - here[s][1])) <= reach
                                  for s in slowest)
    return Wait.NEAR if near else Wait.FAR


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("world", nargs="?", default=str(ROOT / "worlds" / "smallville.toml"))
    p.add_argument("--hours", type=float, default=1.0)
    p.add_argument("--set", dest="sets", action="append", default=[], help="a run setting, key=value")
    p.add_argument("--latency", choices=sorted(oracle.LATENCIES), nargs="+", default=["gpu"])
    p.add_argument("--concurrency", type=int, nargs="+", default=[16, 64])
    p.add_argument("--save", type=Path, help="keep the run's save here (default: a temporary file)")
    a = p.parse_args()
    with tempfile.TemporaryDirectory() as d:
        path = a.save or Path(d) / "waits.sqlite"
        tape, start, wall, reach = run(a.world, a.hours, a.sets, path)
        began = time.perf_counter()
        reader = open_reader(path)
        try:
            nodes = oracle.load(reader, start)
            dag = oracle.dependencies(reader, nodes)
        finally:
            reader.close()
    check(tape.tags, nodes)
    agents = len(next(iter(tape.tiles.values()), {}))
    print(f"{Path(a.world).name} ({agents} agents), {a.hours:g} game hours, settings {' '.join(a.sets) or '-'}: "
          f"run {wall:.1f} s; {len(nodes)} calls")
    print(f"  {'latency':8s} {'Σ s':>7s} {'path s':>7s} {'c':>4s} {'oracle s':>9s} {'in flight':>9s} "
          f"{'lock-step s':>11s} {'in flight':>9s} {'ratio':>6s}")
    for name in a.latency:
        model = oracle.LATENCIES[name]
        r = oracle.report(dag, model, a.concurrency)
        for c, s in r["schedules"].items():
            ls = lockstep(tape.tags, nodes, model, min(c, model.slots))
            print(f"  {name:8s} {r['sum']:7.1f} {r['critical']:7.1f} {c:4d} {s.makespan:9.1f} {s.in_flight:9.2f} "
                  f"{ls.makespan:11.1f} {ls.in_flight:9.2f} {ls.makespan / s.makespan:6.2f}")
    rounds, agent_waits = waits(tape.tags, dag, tape.tiles, reach)
    print(f"lock-step's rounds of waiting by kind (reach R = {reach} tiles): {sum(rounds.values())} rounds")
    for kind in TRUE + FALSE:
        if rounds[kind] or agent_waits[kind]:
            print(f"  {kind.value:24s} {'(false)' if kind in FALSE else '':8s} rounds {rounds[kind]:5d}   "
                  f"agent-waits {agent_waits[kind]:6d}")
    print(f"(analysis {time.perf_counter() - began:.1f} s)")


def check(tags: list[Tag], nodes: list[oracle.Node]) -> None:
    """The tape and the save list the same calls in the same order."""
    if len(tags) != len(nodes) or any((t.tick, t.agent, t.task) != (n.tick, n.agent, n.task)
                                      for t, n in zip(tags, nodes)):
        raise SystemExit(f"the tape ({len(tags)} calls) does not match the save ({len(nodes)} calls)")


if __name__ == "__main__":
    main()
