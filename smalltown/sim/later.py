"""Slow modules' questions, answered while the town goes on and applied a fixed number of ticks
after they were asked ("slow modules never block fast ones").

A question asked at tick t has its inputs fixed then (a typed task); it goes to a worker of the
crowd's pool and the tick goes on. At t + lag the engine applies it, in agent order, waiting
only if the answer is not back yet (and never past a stop). Its seed is the tick it was asked at
(the asker reads `Later.current`); its calls are logged at the tick it is applied, in that tick's
call log, with a note of when it was asked, and so are the retrievals made for it when it was
asked (its records' scores: a call's retrieval is at the call's tick). So a run depends on the answers only, never on when
they came back: the same at any concurrency.

A question out is kept in the agent's state (`AgentState.slow`: the task's inputs as JSON, the
ticks it was asked at and is due at); a run resumed or forked between the two asks it again from
those inputs with the same seed, and applies it at the same tick. Any module may use it: it
names an applier for its answers (`appliers`), which is given the task as its prompt showed it
(after fitting: what numbered lists in the answer refer to) and may ask the module's next step."""

from __future__ import annotations

import threading
from datetime import datetime
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Callable

from pydantic import ValidationError

from smalltown.llm.backend import CallRecord
from smalltown.llm.tasks import TASKS, Output, Task
from smalltown.mind.memory import MemoryStream
from smalltown.state.agent import Slow, stamp
from smalltown.store.records import Retrieval, Scored
from smalltown.sim.agent import Agent
from smalltown.sim.changes import Changes
from smalltown.sim.crowd import Crowd

def retrieval_json(r: Retrieval) -> dict:
    """A retrieval as a slow question's state keeps it (state.agent.Slow.retrievals)."""
    return {"query": r.query, "purpose": r.purpose, "time": stamp(r.time),
            "results": [{"id": s.memory.id, "recency": s.recency, "importance": s.importance,
                         "relevance": s.relevance, "total": s.total} for s in r.results]}


def retrieval_of(d: dict, agent: str, memory: MemoryStream) -> Retrieval:
    """`retrieval_json` read back (a record no longer in the stream is left out)."""
    results = []
    for s in d["results"]:
        try:
            results.append(Scored(memory.get(s["id"]), s["recency"], s["importance"], s["relevance"], s["total"]))
        except KeyError:
            continue
    return Retrieval(agent, d["query"], datetime.fromisoformat(d["time"]), d["purpose"], results)


Applier = Callable[[Agent, Output, Task, Changes], None]  # the answer, the task as shown


@dataclass
class Job:
    agent: str
    question: Slow
    calls: list[CallRecord] = field(default_factory=list)  # logged when it is applied
    future: Future | None = None  # (the answer, the task as its prompt showed it)


class Later:
    def __init__(self, crowd: Crowd, lag: int, appliers: dict[str, Applier], grid: int = 1):
        self.crowd = crowd
        self.lag = lag
        self.grid = grid  # answers land on the mind's grid (`think_every_ticks`): due rounded up to it
        self.appliers = appliers
        self.jobs: dict[int, Job] = {}  # id(the Slow in the agent's state) -> its job out
        self._local = threading.local()

    def current(self) -> Job | None:
        """The job this thread is asking for (None outside one): its seed is its asking tick's."""
        return getattr(self._local, "job", None)

    def ask(self, agent: Agent, module: str, task: Task, tick: int, retrievals: list[Retrieval] = ()) -> None:
        """Send `task` out now; its answer is applied at tick + lag (rounded up to the grid).
        `retrievals`: those made for it (taken out of the memory's log: logged when it is applied)."""
        q = Slow(module, task.name, task.model_dump(mode="json"), tick, -(-(tick + self.lag) // self.grid) * self.grid,
                 [retrieval_json(r) for r in retrievals])
        agent.mind.state.slow.append(q)
        self._send(agent, q, task)

    def step(self, tick: int, agents: list[Agent], changes: Changes,
             calls: list[tuple[int, int, CallRecord]]) -> None:
        """This tick's part: send again what a resumed or forked run has out but not in flight,
        then apply, in agent order, every answer due now."""
        for agent in agents:
            for q in list(agent.mind.state.slow):
                if id(q) not in self.jobs:
                    self._resend(agent, q)
        self.crowd.phase += 1
        phase = self.crowd.phase  # the applied calls' place in this tick's call log
        self.crowd.phase += 1
        for agent in agents:
            for q in [q for q in agent.mind.state.slow if q.due <= tick]:
                job = self.jobs.pop(id(q))
                out, shown = self.crowd.result(job.future)
                for c in job.calls:
                    c.note = f"{c.note}; asked at tick {q.asked}" if c.note else f"asked at tick {q.asked}"
                    calls.append((tick, phase, c))
                agent.mind.memory.put_retrievals([retrieval_of(r, agent.name, agent.mind.memory) for r in q.retrievals])
                agent.mind.state.slow.remove(q)
                changes.changed.add(agent.name)
                self.appliers[q.module](agent, out, shown, changes)

    def _resend(self, agent: Agent, q: Slow) -> None:
        kind = TASKS.get(q.task)
        try:
            task = kind.model_validate(q.inputs) if kind is not None and q.module in self.appliers else None
        except ValidationError:
            task = None
        if task is None:  # (a stranger's save: nothing to ask) the module asks again on its clock
            agent.mind.state.slow.remove(q)
            return
        self._send(agent, q, task)

    def _send(self, agent: Agent, q: Slow, task: Task) -> None:
        job = Job(agent.name, q)
        mind = agent.mind

        def run() -> tuple[Output, Task]:
            self._local.job = job
            try:
                out = mind.ask(task)  # (the asker only: the mind's state is the engine's meanwhile)
                return out, mind.asker.last_task  # (per thread)
            finally:
                self._local.job = None

        self.jobs[id(q)] = job
        job.future = self.crowd.submit(run)
