"""Design study (issue 15): could "questions asked ahead" reach 8 requests in flight and a chain
of at most 15 calls per agent-day? Runs a scripted game day in-process, records every model call
with its tick, the crowd phase that asked it and the job it belonged to (an agent, or a
conversation), then SIMULATES two schedules of those same calls against a server of latency λ with
`--concurrency` workers and a fixed engine cost per tick:

- sync: today's ticks. Each phase submits its jobs at once and the tick waits for all of them.
- ahead: the proposed design. Each job gets an "ask" tick and a "due" tick; the engine only waits
  at the due tick of a job that is not back. Offsets by kind (see `Offsets`).

Printed per schedule: wall s, requests in flight (summed request time / wall), the longest chain
of requests each begun after the previous ended (the server-side measure of benchmarks/
concurrency.py) and per agent-day, engine waits (ticks that waited on an answer) and wait s.

    python benchmarks/schedule_model.py [WORLD] [--hours 24] [--latency 0.02 0.2 1] [--conc 16]

Assumptions (also in docs/design/thinking-ahead.md): the calls are those of the scripted run (the
new design changes behaviour a little; those changes are not re-simulated); a job's calls run one
after another; jobs of different agents never wait on each other except the two sides of a
conversation; a job's question is prepared in no time; the engine costs `--tick-ms` per tick
whatever it does. Re-asked next actions (a prefetch discarded by a re-plan) are counted, not run.
"""

from __future__ import annotations

import argparse
import bisect
import heapq
import json
import sys
import tempfile
import threading
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from smalltown.scripted import ScriptedBackend  # noqa: E402
from smalltown.sim.agent import Agent  # noqa: E402
from smalltown.sim.crowd import Crowd  # noqa: E402
from smalltown.sim.encounters import Candidate  # noqa: E402
from smalltown.sim.open import create  # noqa: E402
from smalltown.store.schema import TIME_FMT  # noqa: E402
from smalltown.world.load import load_world  # noqa: E402

# which step of the tick a crowd phase is, by the name of the function handed to Crowd.each
STEP = {"<lambda>:reflect": "reflect", "weigh": "react", "<lambda>:act_on": "act_on",
        "<lambda>:settle": "settle", "<lambda>:say": "line", "<lambda>:remember": "summary",
        "<lambda>:carry_on": "carry_on", "think": "next_action"}


@dataclass
class Job:
    tick: int
    phase: int
    step: str
    key: tuple  # ("agent", name) or ("conv", tick, i)
    names: frozenset[str]
    tasks: list[str] = field(default_factory=list)
    dep: "Job | None" = None
    ask: int = 0
    due: int = 0
    finish: float = 0.0


# ---------------------------------------------------------------- recording a day

def record(world_path: str, hours: float) -> tuple[list[Job], dict[str, list[tuple[int, int]]], int, int]:
    """Jobs (only those that asked something), each agent's (start tick, planned end tick) list,
    the ticks run and the agents."""
    world = load_world(world_path)
    local = threading.local()
    jobs: dict[tuple, Job] = {}
    conv_names: dict[tuple, set[str]] = defaultdict(set)
    each = Crowd.each

    def key_of(sim_tick: int, x: object) -> tuple[tuple, frozenset[str]]:
        if isinstance(x, Agent):
            return ("agent", x.name), frozenset([x.name])
        if isinstance(x, Candidate):
            return ("agent", x.agent.name), frozenset([x.agent.name])
        if isinstance(x, tuple) and isinstance(x[0], Agent):  # (agent, reaction)
            return ("agent", x[0].name), frozenset([x[0].name])
        i = x[0] if isinstance(x, tuple) else x
        k = ("conv", sim_tick, i)
        if isinstance(x, tuple):
            conv_names[k] |= {x[1].name, x[2].name}
        return k, frozenset(conv_names[k])

    with tempfile.TemporaryDirectory() as d:
        sim = create(world, Path(d) / "model.sqlite", ScriptedBackend(world.seed))

        def wrapped_each(self, items, fn):  # tags every call made under fn with its item and step
            code = fn.__code__
            name = code.co_name
            if name == "<lambda>":
                name += ":" + next((n for n in code.co_names if n in
                                    ("reflect", "act_on", "settle", "say", "remember", "carry_on")), "?")
            step = STEP.get(name, name)

            def tagged(x):
                local.tag = (step,) + key_of(sim.tick, x)
                try:
                    return fn(x)
                finally:
                    local.tag = None
            return each(self, items, tagged)

        Crowd.each = wrapped_each
        calls: list[tuple[int, int, str, str, tuple | None]] = []
        log = sim._calls

        class Tap(list):  # the simulation's call list: see each call as it is appended
            def append(self, item):
                tick, phase, rec = item
                calls.append((tick, phase, rec.agent, rec.task, getattr(local, "tag", None)))
                super().append(item)
        sim._calls = Tap(log)  # (the asker's callback looks the list up on the simulation each time)
        sim.run_until(sim.now + timedelta(hours=hours))
        Crowd.each = each
        rows = sim.save.conn.execute("select tick, agent, data from events where kind='started' order by id").fetchall()
        step_s = world.step_seconds
        start_dt = sim.now - timedelta(seconds=sim.tick * step_s)
        ticks, n_agents = sim.tick, len(world.agents)
        sim.close()
    starts: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for tick, agent, data in rows:
        end = datetime.strptime(json.loads(data)["end"], TIME_FMT)
        starts[agent].append((tick, round((end - start_dt).total_seconds() / step_s)))
    for tick, phase, agent, task, tag in calls:
        step, key, names = tag if tag else ("inline", ("agent", agent), frozenset([agent]))
        if key[0] == "conv":
            names = frozenset(conv_names[key])
        j = jobs.setdefault((tick, phase, key), Job(tick, phase, step, key, names))
        j.tasks.append(task)
    return sorted(jobs.values(), key=lambda j: (j.tick, j.phase, j.key)), starts, ticks, n_agents


# ---------------------------------------------------------------- the two schedules

@dataclass
class Offsets:
    """Ticks between a question being asked and its answer being due (10 s ticks)."""
    react: int = 1  # a reaction and the re-plan after it
    line: int = 2  # each step of a conversation (settle, a line, the summaries, the re-plan)
    reflect: int = 30  # nothing waits on a reflection
    prefetch: bool = True  # next action asked when the current one starts
    inline: int = 0  # calls made outside the crowd (lone ratings while noting)
    grid: int = 1  # answers due only at multiples of this many ticks (the engine waits once per grid point)


def link(jobs: list[Job]) -> None:
    """Each job waits on the latest earlier job of the same tick that shares an agent."""
    last: dict[tuple[int, str], Job] = {}
    for j in jobs:
        deps = [last[(j.tick, n)] for n in j.names if (j.tick, n) in last]
        j.dep = max(deps, key=lambda d: d.phase) if deps else None
        for n in j.names:
            last[(j.tick, n)] = j


def plan_ahead(jobs: list[Job], starts: dict[str, list[tuple[int, int]]], off: Offsets) -> tuple[int, int]:
    """Sets ask/due ticks for the proposed design. Returns (next-action jobs prefetched, discarded
    prefetches: an action cut short by a reaction or a talk, whose prefetched answer is thrown away)."""
    by_agent = {a: [s for s, _ in v] for a, v in starts.items()}
    ends = {a: dict(v) for a, v in starts.items()}
    prefetched = 0
    for j in jobs:
        offset = {"reflect": off.reflect, "react": off.react, "act_on": off.react, "settle": off.line,
                  "line": off.line, "summary": off.line, "carry_on": off.line, "inline": off.inline,
                  "next_action": off.react}.get(j.step, 0)  # (an unforeseen next action: the agent idles)
        if j.dep is not None:
            j.ask = j.dep.due
            j.due = -(-(j.ask + offset) // off.grid) * off.grid
            continue
        j.ask, j.due = j.tick, j.tick + offset
        if j.step == "next_action" and off.prefetch:
            (agent,) = j.names
            ss = by_agent.get(agent, [])
            i = bisect.bisect_left(ss, j.tick) - 1
            if i >= 0 and ends[agent][ss[i]] <= j.tick:  # the previous action ran to its planned end
                j.ask, j.due = ss[i], j.tick
                prefetched += 1
        if j.due > j.ask or off.grid > 1:
            j.due = -(-max(j.due, j.ask + 1 if off.grid > 1 else j.due) // off.grid) * off.grid
    discarded = sum(1 for a, v in starts.items() for (s, e), (s2, _) in zip(v, v[1:]) if s2 < e)
    return prefetched, discarded


class Pool:
    def __init__(self, workers: int, latency: float):
        self.free = [0.0] * workers
        self.latency = latency
        self.spans: list[tuple[float, float]] = []

    def run(self, job: Job, at: float) -> float:
        t = at
        for _ in job.tasks:
            w = heapq.heappop(self.free)
            start = max(t, w)
            t = start + self.latency
            heapq.heappush(self.free, t)
            self.spans.append((start, t))
        job.finish = t
        return t


def chain(spans: list[tuple[float, float]]) -> int:
    """The longest run of requests each begun after the one before it ended (eps for float ties)."""
    spans = sorted(spans)
    end_keys: list[float] = []
    prefix: list[int] = []
    best = 0
    done = sorted(range(len(spans)), key=lambda i: spans[i][1])
    k = 0
    results = [0] * len(spans)
    for i, (s, e) in enumerate(spans):
        while k < len(done) and spans[done[k]][1] <= s + 1e-9:
            j = done[k]
            end_keys.append(spans[j][1])
            prefix.append(max(prefix[-1] if prefix else 0, results[j]))
            k += 1
        results[i] = 1 + (prefix[-1] if prefix else 0)
        best = max(best, results[i])
    return best


def simulate(jobs: list[Job], ticks: int, latency: float, workers: int, tick_s: float,
             sync: bool) -> dict[str, float]:
    pool = Pool(workers, latency)
    now, waits, waited = 0.0, 0, 0.0
    blame: dict[str, int] = defaultdict(int)  # which step's answer the engine waited on
    asked: dict[int, list[Job]] = defaultdict(list)
    due: dict[int, list[Job]] = defaultdict(list)
    for j in jobs:
        asked[j.tick if sync else j.ask].append(j)
        due[j.tick if sync else j.due].append(j)
    for t in range(ticks + 1):
        before = now
        if sync:  # phase by phase: submit the phase's jobs together, wait for them all
            phases: dict[int, list[Job]] = defaultdict(list)
            for j in asked[t]:
                phases[j.phase].append(j)
            for p in sorted(phases):
                now = max([now] + [pool.run(j, now) for j in phases[p]])
        else:
            for j in sorted(asked[t], key=lambda j: (j.phase, j.key)):
                if j.dep is not None and j.dep.due == t:  # applied this tick: wait for it first
                    now = max(now, j.dep.finish)
                pool.run(j, now)
            for j in due[t]:
                if j.finish > now:
                    blame[j.step] += 1
                now = max(now, j.finish)
        if now > before:
            waits += 1
            waited += now - before
        now += tick_s
    busy = sum(e - s for s, e in pool.spans)
    return {"wall": now, "flight": busy / now, "chain": chain(pool.spans), "waits": waits, "waited": waited,
            "calls": len(pool.spans), "blame": dict(blame)}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("world", nargs="?", default=str(ROOT / "worlds" / "smallville.toml"))
    p.add_argument("--hours", type=float, default=24.0)
    p.add_argument("--latency", type=float, nargs="+", default=[0.02, 0.2, 1.0])
    p.add_argument("--conc", type=int, default=16)
    p.add_argument("--tick-ms", type=float, default=0.45)
    args = p.parse_args()
    jobs, starts, ticks, n_agents = record(args.world, args.hours)
    link(jobs)
    days = n_agents * args.hours / 24
    steps: dict[str, int] = defaultdict(int)
    for j in jobs:
        steps[j.step] += len(j.tasks)
    print(f"{len(jobs)} jobs, {sum(steps.values())} calls, {ticks} ticks; calls by step: "
          + ", ".join(f"{k} {v}" for k, v in sorted(steps.items(), key=lambda x: -x[1])))
    variants: list[tuple[str, Offsets | None]] = [
        ("sync (today)", None),
        ("ahead r1 l2 k30", Offsets()),
        ("ahead r3 l2 k30", Offsets(react=3)),
        ("ahead r1 l2 k30 no prefetch", Offsets(prefetch=False)),
        ("ahead r3 l6 k60", Offsets(react=3, line=6, reflect=60)),
        ("ahead r3 l6 k60 inline 3", Offsets(react=3, line=6, reflect=60, inline=3)),
        ("ahead r6 l12 k90 inline 6", Offsets(react=6, line=12, reflect=90, inline=6)),
        ("ahead r30 l30 k360 inline 30", Offsets(react=30, line=30, reflect=360, inline=30)),
        ("ahead r90 l90 k360 inline 90", Offsets(react=90, line=90, reflect=360, inline=90)),
        ("ahead r1 l2 k30 grid 6", Offsets(grid=6)),
        ("ahead r1 l2 k30 grid 30", Offsets(grid=30)),
        ("ahead r1 l2 k30 grid 90", Offsets(grid=90)),
    ]
    print(f"world {Path(args.world).stem} ({n_agents} agents), {args.hours:g} game hours, c{args.conc}, "
          f"engine {args.tick_ms} ms/tick")
    print(f"{'variant':30} {'λ s':>5} {'wall s':>7} {'flight':>6} {'chain':>6} {'/ag-day':>7} {'waits':>6} {'wait s':>7}")
    for name, off in variants:
        if off is not None:
            pre, disc = plan_ahead(jobs, starts, off)
        for lat in args.latency:
            r = simulate(jobs, ticks, lat, args.conc, args.tick_ms / 1000, sync=off is None)
            print(f"{name:30} {lat:5.2f} {r['wall']:7.1f} {r['flight']:6.2f} {r['chain']:6d} "
                  f"{r['chain'] / days:7.1f} {r['waits']:6d} {r['waited']:7.1f}")
        if off is not None:
            print(f"{'':30} (waited on, λ {lat:g}: " + ", ".join(f"{k} {v}" for k, v in
                                                         sorted(r["blame"].items(), key=lambda x: -x[1])) + ")")
        if off is not None and off.prefetch:
            print(f"{'':30} (next-action jobs asked ahead {pre}; actions cut short, prefetch discarded {disc})")


if __name__ == "__main__":
    main()
