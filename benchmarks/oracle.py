"""Benchmark: the oracle, the best any scheduler could do with a run's own model calls.

From a save, every call of the call log (`llm_calls`) is a node; its duration comes from the latency
model (benchmarks/latency.py): uncached prompt tokens = prompt − cached tokens and answer tokens =
completion tokens as recorded, or, where the save records no tokens (the scripted stand-in records
none), estimated at 4 characters a token from the prompt and the raw answer, the cached part being
the prompt's common prefix with the same agent's previous prompt (a server with per-agent affinity).
The edges are the calls' true dependencies, read from the save (each edge's kind from waitkinds.Wait):

- own chain: an agent's calls in the log's order (the mind asks one question after another; the log
  is ordered by tick, phase, then agent, so an agent's calls are in the order it made them);
- slow job (sim/later.py: logged at the tick it is applied, noted "asked at tick N"): a job (an
  agent's calls with the same note at one tick, chained) follows the agent's last call logged before
  tick N (and its job calls applied at N, whose appliers may have asked it), and precedes the agent's
  first own call logged at or after the tick it is applied;
- conversation (`conversations`: tick, initiator, other; a conversation is whole within its tick):
  both sides' calls at that tick chained in the log's order;
- sight (`perceived` events: A sees S at tick t): S's state then came from S's calls logged before t,
  so S's last such call precedes A's first call from t on (its first own call, and its slow jobs
  asked from t until then); an object seen is the state its latest setter (`object` events before t)
  gave it, so the setter's last call up to then precedes it. The economy's ledger likewise: the
  giver's last call before the transfer's tick precedes the taker's first call from it;
- civics (global barriers): the amendments follow every feedback since the last amendments, each vote
  follows the amendments, a revision follows every vote since the amendments, and every agent's first
  call after a revision's tick follows it (the constitution in force); feedback follows the last
  revision;
- memes (a town's question, `agent` "town X" or the rural area: its own chain): it reads every
  member's goals, so each agent's last goal question (`social_goal`) logged by then precedes it
  (members of any town: a conservative reading); nobody reads a meme back (no successors).

Not modelled, and why: a partner reserved in agent order within a tick (a refused talk leaves the
refused agent's state unchanged); hearing (heard lines are a conversation's, already chained, or
overheard within reach: `belief` worlds only); the economy's sector listing in the decomposition prompt.

Schedules: the critical path (infinite slots, each call at one busy slot: a lower bound), and a list
schedule on c slots, longest remaining path first, where each call's duration is fixed when it starts
at the number of slots busy then (itself included): the slowdown of a full server is simulated, not
assumed. Oracle in flight = Σ durations (as scheduled) / makespan.

    python3 benchmarks/oracle.py SAVE --latency gpu|cpu|fixed --concurrency 16 64 [--since TICK]

(`fixed`: 200 ms a reply whatever the tokens and the load, as benchmarks/concurrency.py's server.)
"""

from __future__ import annotations

import argparse
import bisect
import heapq
import math
import re
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.latency import MODELS, LatencyModel, PrefixCache  # noqa: E402
from benchmarks.waitkinds import Wait  # noqa: E402
from smalltown.store.reader import Reader  # noqa: E402
from smalltown.store.save import open_reader  # noqa: E402

# a fixed 200 ms a reply, however busy the server: benchmarks/concurrency.py's prompt server, for comparison
FIXED = LatencyModel("fixed", overhead=0.2, per_prompt_token=0.0, per_answer_token=0.0, slowdown=0.0, slots=1 << 20)
LATENCIES = {**MODELS, FIXED.name: FIXED}
ASKED = re.compile(r"asked at tick (\d+)")
GOALS = "social_goal"  # what a meme question reads of each member


@dataclass(frozen=True)
class Node:
    id: int  # the call's row id
    tick: int  # the tick it is logged at
    agent: str
    task: str
    asked: int  # the tick a slow job was asked at, else `tick`
    job: bool  # a slow module's job (noted "asked at tick N")
    uncached: int  # prompt tokens to prefill
    answer: int  # tokens to decode


@dataclass
class Dag:
    nodes: list[Node]  # in the log's order
    preds: list[dict[int, Wait]]  # per node: its predecessors' indices, each with the edge's kind

    def edge(self, a: int | None, b: int | None, kind: Wait) -> None:
        if a is not None and b is not None and a != b:
            self.preds[b].setdefault(a, kind)

    def after(self, sources: Iterable[int], b: int, kind: Wait) -> None:
        """`b` waits on every one of `sources`."""
        for a in sources:
            self.edge(a, b, kind)

    def chain(self, ix: Sequence[int], kind: Wait) -> None:
        """Each of `ix` waits on the one before it."""
        for a, b in zip(ix, ix[1:]):
            self.edge(a, b, kind)


def load(reader: Reader, since: int = -1) -> list[Node]:
    """The calls logged at ticks after `since`, in the log's order, with their token counts."""
    rows = [r for r in reversed(reader.calls(limit=None)) if r.tick > since]
    unrecorded = {r.id for r in rows if not r.prompt_tokens}
    prompts = {i: p or "" for i, _, _, _, p, _ in reader.recorded_calls() if i in unrecorded} if unrecorded else {}
    sizes = reader.call_sizes(sorted(unrecorded)) if unrecorded else {}
    cache = PrefixCache()
    nodes = []
    for r in rows:
        m = ASKED.search(r.note or "")
        if r.prompt_tokens:
            uncached, answer = max(0, r.prompt_tokens - r.cached_tokens), r.completion_tokens
        else:
            uncached, answer = cache.uncached(r.agent, prompts[r.id]), math.ceil(sizes[r.id][1] / 4)
        nodes.append(Node(r.id, r.tick, r.agent, r.task, int(m.group(1)) if m else r.tick, m is not None,
                          uncached, answer))
    return nodes


class _Lines:
    """Per agent, its calls (indices, in log order) and their ticks, to find calls around a tick."""

    def __init__(self, nodes: list[Node], keep) -> None:
        self.at: dict[str, list[int]] = defaultdict(list)
        for i, n in enumerate(nodes):
            if keep(n):
                self.at[n.agent].append(i)
        self.ticks = {a: [nodes[i].tick for i in ix] for a, ix in self.at.items()}

    def last_before(self, agent: str, tick: int) -> int | None:
        """The agent's last call logged before `tick`."""
        k = bisect.bisect_left(self.ticks.get(agent, []), tick)
        return self.at[agent][k - 1] if k else None

    def first_from(self, agent: str, tick: int) -> int | None:
        """The agent's first call logged at or after `tick`."""
        ticks = self.ticks.get(agent, [])
        k = bisect.bisect_left(ticks, tick)
        return self.at[agent][k] if k < len(ticks) else None


def dependencies(reader: Reader, nodes: list[Node]) -> Dag:
    """The calls' true dependencies (see the module's docstring)."""
    dag = Dag(nodes, [{} for _ in nodes])
    every = _Lines(nodes, lambda n: True)
    own = _Lines(nodes, lambda n: not n.job)
    jobs: dict[tuple[str, int, int], list[int]] = defaultdict(list)
    for i, n in enumerate(nodes):
        if n.job:
            jobs[(n.agent, n.asked, n.tick)].append(i)
    for ix in own.at.values():
        dag.chain(ix, Wait.OWN)
    jobs_of: dict[str, list[tuple[int, int]]] = defaultdict(list)  # agent -> (asked, first call), by asked
    for (agent, asked, due), ix in jobs.items():
        dag.chain(ix, Wait.OWN)
        dag.edge(every.last_before(agent, asked), ix[0], Wait.OWN)
        for j in every.at.get(agent, []):  # its jobs applied at the tick it was asked
            if nodes[j].job and nodes[j].tick == asked and j < ix[0]:
                dag.edge(j, ix[0], Wait.OWN)
        dag.edge(ix[-1], own.first_from(agent, due), Wait.SLOW_JOB)
        jobs_of[agent].append((asked, ix[0]))
    for v in jobs_of.values():
        v.sort()

    def reaches(source: int | None, agent: str, tick: int, kind: Wait) -> None:
        """`source` precedes whatever `agent` asks from `tick` on."""
        if source is None:
            return
        first = own.first_from(agent, tick)
        dag.edge(source, first, kind)
        until = nodes[first].tick if first is not None else math.inf
        for asked, j in jobs_of.get(agent, ()):
            if tick <= asked <= until:
                dag.edge(source, j, kind)

    by_tick: dict[int, list[int]] = defaultdict(list)
    for i, n in enumerate(nodes):
        if not n.job:
            by_tick[n.tick].append(i)
    for c in reader.conversations():
        sides = [i for i in by_tick.get(c.tick, ()) if nodes[i].agent in (c.initiator, c.other)]
        for a, b in zip(sides, sides[1:]):
            if nodes[a].agent != nodes[b].agent:
                dag.edge(a, b, Wait.CONVERSATION)
    agents = set(reader.agent_names())
    setters: dict[str, tuple[list[int], list[str]]] = defaultdict(lambda: ([], []))  # address -> ticks, agents
    for e in reader.events(kinds=["object", "perceived"]):
        if e.kind == "object" and e.agent and e.data.get("address"):
            ticks, who = setters[e.data["address"]]
            ticks.append(e.tick)
            who.append(e.agent)
        elif e.kind == "perceived" and e.agent:
            subject = e.data.get("subject", "")
            if subject in agents:
                reaches(every.last_before(subject, e.tick), e.agent, e.tick, Wait.SIGHT)
            elif subject in setters:
                ticks, who = setters[subject]
                k = bisect.bisect_left(ticks, e.tick)
                if k:
                    reaches(every.last_before(who[k - 1], ticks[k - 1] + 1), e.agent, e.tick, Wait.SIGHT)
    for _, tick, _, _, giver, taker, *_ in reader.ledger():
        if giver and taker:
            reaches(every.last_before(giver, tick), taker, tick, Wait.SIGHT)
    _barriers(dag, own, reaches)
    return dag


def _barriers(dag: Dag, own: _Lines, reaches) -> None:
    """Civics phases and memes (see the module's docstring)."""
    nodes = dag.nodes
    feedback: list[int] = []
    votes: list[int] = []
    amendments = revision = None
    goals: dict[str, int] = {}  # agent -> its last goal question so far
    for i, n in enumerate(nodes):
        if n.task == "constitution_feedback":
            dag.edge(revision, i, Wait.BARRIER)
            feedback.append(i)
        elif n.task == "amendments":
            dag.after(feedback, i, Wait.BARRIER)
            feedback, votes, amendments = [], [], i
        elif n.task == "vote":
            dag.edge(amendments, i, Wait.BARRIER)
            votes.append(i)
        elif n.task == "revise_constitution":
            dag.after(votes, i, Wait.BARRIER)
            votes, revision = [], i
            for agent in own.at:
                reaches(i, agent, n.tick + 1, Wait.BARRIER)
        elif n.task == "meme_summary":
            dag.after(goals.values(), i, Wait.BARRIER)
        if n.task == GOALS:
            goals[n.agent] = i


def durations(nodes: list[Node], model: LatencyModel, busy: int = 1) -> list[float]:
    return [model.seconds(n.uncached, n.answer, busy) for n in nodes]


def order(dag: Dag) -> list[int]:
    """The nodes in an order where every predecessor comes first (edges may point back in the log:
    a slow job applied late precedes calls logged before it)."""
    succ: list[list[int]] = [[] for _ in dag.nodes]
    indeg = [len(p) for p in dag.preds]
    for b, ps in enumerate(dag.preds):
        for a in ps:
            succ[a].append(b)
    ready = [i for i, d in enumerate(indeg) if not d]
    heapq.heapify(ready)
    out = []
    while ready:
        a = heapq.heappop(ready)
        out.append(a)
        for b in succ[a]:
            indeg[b] -= 1
            if not indeg[b]:
                heapq.heappush(ready, b)
    if len(out) != len(dag.nodes):
        raise ValueError("the dependencies have a cycle")
    return out


def critical_path(dag: Dag, dur: list[float]) -> tuple[float, list[int]]:
    """The longest chain of dependent calls (seconds) and its nodes, first to last."""
    finish, via = [0.0] * len(dur), [-1] * len(dur)
    for b in order(dag):
        start = 0.0
        for a in dag.preds[b]:
            if finish[a] > start:
                start, via[b] = finish[a], a
        finish[b] = start + dur[b]
    if not dur:
        return 0.0, []
    end = max(range(len(dur)), key=finish.__getitem__)
    path = [end]
    while via[path[-1]] >= 0:
        path.append(via[path[-1]])
    return finish[end], path[::-1]


def tails(dag: Dag, dur: list[float]) -> list[float]:
    """Each node's longest path to the end, itself included: the list schedule's priority."""
    succ: list[list[int]] = [[] for _ in dag.nodes]
    for b, ps in enumerate(dag.preds):
        for a in ps:
            succ[a].append(b)
    tail = [0.0] * len(dur)
    for a in reversed(order(dag)):
        tail[a] = dur[a] + max((tail[b] for b in succ[a]), default=0.0)
    return tail


@dataclass(frozen=True)
class Schedule:
    slots: int
    makespan: float  # seconds
    busy_seconds: float  # Σ durations as scheduled (each at the slots busy when it started)

    @property
    def in_flight(self) -> float:
        return self.busy_seconds / self.makespan if self.makespan else 0.0


def list_schedule(dag: Dag, model: LatencyModel, slots: int) -> Schedule:
    """Longest remaining path first on `slots` slots; a call's duration is set when it starts, at the
    number of slots busy then (itself included)."""
    dur1 = durations(dag.nodes, model)
    tail = tails(dag, dur1)
    waiting = [len(p) for p in dag.preds]
    succ: list[list[int]] = [[] for _ in dag.nodes]
    for b, ps in enumerate(dag.preds):
        for a in ps:
            succ[a].append(b)
    ready = [(-tail[i], i) for i, w in enumerate(waiting) if not w]
    heapq.heapify(ready)
    running: list[tuple[float, int]] = []
    now = total = 0.0
    while ready or running:
        while ready and len(running) < slots:
            _, i = heapq.heappop(ready)
            n = dag.nodes[i]
            d = model.seconds(n.uncached, n.answer, len(running) + 1)
            total += d
            heapq.heappush(running, (now + d, i))
        now, a = heapq.heappop(running)
        done = [a]
        while running and running[0][0] <= now:
            done.append(heapq.heappop(running)[1])
        for a in done:
            for b in succ[a]:
                waiting[b] -= 1
                if not waiting[b]:
                    heapq.heappush(ready, (-tail[b], b))
    return Schedule(slots, now, total)


def report(dag: Dag, model: LatencyModel, concurrency: list[int]) -> dict:
    """The oracle's figures: calls, Σ durations, the critical path, a list schedule per concurrency."""
    dur = durations(dag.nodes, model)
    length, path = critical_path(dag, dur)
    kinds = Counter(dag.preds[b][a].value for a, b in zip(path, path[1:]))
    return {"calls": len(dag.nodes), "sum": sum(dur), "critical": length, "path": len(path), "path_kinds": kinds,
            "schedules": {c: list_schedule(dag, model, min(c, model.slots)) for c in concurrency}}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("save")
    p.add_argument("--latency", choices=sorted(LATENCIES), default="gpu")
    p.add_argument("--concurrency", type=int, nargs="+", default=[16, 64])
    p.add_argument("--since", type=int, default=-1, help="only the calls logged after this tick")
    a = p.parse_args()
    model = LATENCIES[a.latency]
    reader = open_reader(a.save)
    try:
        nodes = load(reader, a.since)
        dag = dependencies(reader, nodes)
    finally:
        reader.close()
    r = report(dag, model, a.concurrency)
    edges = Counter(k.value for ps in dag.preds for k in ps.values())
    print(f"{Path(a.save).name}: {r['calls']} calls, latency model {model.name}; Σ durations {r['sum']:.1f} s "
          f"(one slot busy); edges {dict(edges)}")
    print(f"critical path {r['critical']:.1f} s over {r['path']} calls ({dict(r['path_kinds'])}): "
          f"in flight at most {r['sum'] / max(r['critical'], 1e-9):.1f}")
    for c, s in r["schedules"].items():
        print(f"  c{c}: makespan {s.makespan:.1f} s, oracle in flight {s.in_flight:.2f} "
              f"(Σ as scheduled {s.busy_seconds:.1f} s on {s.slots} slots)")


if __name__ == "__main__":
    main()
