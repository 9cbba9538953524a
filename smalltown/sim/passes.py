"""A pass: one tick run over a list of agents (the whole town in lock-step, or one group of it,
sim/groups.py), as the context its phase code reads: the tick, its time, its Changes, the agents,
and the crowd's phase counter (the call log's order). Kept in a context variable, copied into the
crowd's workers (sim/crowd.py), so that passes of different ticks may one day run side by side
without reading each other's tick from the engine."""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime

from smalltown.sim.agent import Agent
from smalltown.sim.changes import Changes


@dataclass
class Pass:
    tick: int
    now: datetime
    changes: Changes
    agents: list[Agent]
    first: bool = True  # the tick's first pass: it runs the town-wide phases (memes)
    phase: int = 0  # the crowd's phase counter (sim/phases.py sets it at each phase: the same in any pass)


_current: ContextVar[Pass | None] = ContextVar("smalltown_pass", default=None)


def current() -> Pass | None:
    """The pass this thread (or worker, given the context) is running, if any."""
    return _current.get()


def enter(p: Pass):
    """Make `p` the current pass; returns the token for `leave`."""
    return _current.set(p)


def leave(token) -> None:
    _current.reset(token)
