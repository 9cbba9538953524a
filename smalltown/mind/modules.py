"""The mind's modules and their clocks (PIANO: modules over one shared agent state, each on its
own clock): the one registry of them. Each `Module` says what it is, where it lives, when it runs,
the setting that switches it and what of the state it reads and writes (docs/architecture.md's
table "Modules and their clocks" is `table()`: tests/test_modules_registry.py keeps them the same).

A module the engine runs from here (a slow one: asked at one tick, applied `slow_lag_ticks` later,
sim/later.py) also gives the functions the engine calls: `due`, `question` and its steps' `apply`,
an `outcome` checked at the end of each tick, and the event kinds it emits (each with what a
breakpoint on it catches). sim/slow.py loops over `running()`; sim/events.py and
sim/breakpoints.py add the registered kinds to the engine's own. A model-free module on each tick
gives its hook (`each_tick`: action awareness), run by the engine's "each tick" phase. The tick's
other phases (sim/phases.py) are bound to the rest by name, or a module says the phase it runs
inside (`runs_in`): tests/test_phases.py keeps every row bound to exactly one."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

from datetime import datetime

from smalltown.config import Settings
from smalltown.llm.tasks import TASKS
from smalltown.mind import awareness, belief, memes, slowsteps
from smalltown.mind.awareness import Outcome
from smalltown.mind.core import MindCore
from smalltown.mind.module import Clock, Emit, Module
from smalltown.store.schema import TIME_FMT


def _notice(mind: MindCore, now: datetime, outcome: Outcome | None) -> list[Emit]:
    """Action awareness on each tick: what stopped the agent's action this tick, noticed (or not)."""
    text = awareness.notice(mind, outcome, now) if outcome is not None else ""
    if not text:
        return []
    until = mind.state.unavailable[outcome.place]
    return [Emit("unexpected", text, {"address": outcome.address, "place": outcome.place,
                                      "reason": "closed" if outcome.closed else "taken",
                                      "until": until.strftime(TIME_FMT)})]


TICK, EVENT, RARE = "every tick", "on an event", "rare"
MODULES: list[Module] = [
    Module("perception", "sim/perception.py", Clock(TICK, "each tick, model-free"), "observation_memory",
           "the world within sight", "pending observations, the known tree's object states"),
    Module("movement", "sim/movement.py", Clock(TICK, "each tick, model-free"), "",
           "the action's address, the map", "the agent's tile and path; blocked at a closed or taken place"),
    Module("action awareness", "mind/awareness.py", Clock(TICK, "each tick, model-free"), "action_awareness",
           "the action, the plan, the engine's outcome, an op's outcome",
           "unavailable, an observation, the plan's block, the ops' outcomes",
           each_tick=_notice),
    Module("commitment checks", "sim/commitments.py", Clock(TICK, "each tick, model-free"), "commitments",
           "commitments, the agent's place", "commitments (kept or broken events)"),
    Module("memory and importance", "mind/importance.py",
           Clock(EVENT, "before the memory is used, or a batch has waited"),
           "", "pending records", "the memory stream, ratings", runs_in="perception"),
    Module("controller", "mind/controller.py", Clock(EVENT, "an action boundary, an observation weighed"),
           "controller_broadcast", "the state's parts named in controller_inputs", "decision", runs_in="next actions"),
    Module("reacting", "mind/react.py", Clock(EVENT, "an observation weighed"), "",
           "retrievals, the last talk, news, weighed", "the plan (re-planned), declined, weighed"),
    Module("talking", "mind/talk.py", Clock(EVENT, "each line of a conversation"), "",
           "retrievals, the last talk, decision, feeling", "talks, told, heard, commitments"),
    Module("social awareness", "mind/social.py", Clock(EVENT, "after each conversation"), "social_awareness",
           "social, the other's traits", "social", runs_in="encounters"),
    Module("places", "mind/places.py", Clock(EVENT, "an action that needs a place"), "",
           "the known tree, unavailable", "place_answers", runs_in="next actions"),
    slowsteps.GOALS,
    slowsteps.ROLES,
    Module("daily plan", "mind/planning.py", Clock(RARE, "each morning; blocks decomposed as they start"), "planning",
           "the summary, retrievals, goal, decision", "plan, action", runs_in="next actions"),
    Module("summary", "mind/summary.py", Clock(RARE, "each morning"), "", "retrievals", "summary", runs_in="next actions"),
    slowsteps.REFLECTION,
    memes.MODULE,
    belief.MODULE,
]


def register(module: Module) -> Module:
    """Add `module` to the registry (its name, steps' keys and event kinds unique), and its tasks to
    the tasks a save's questions are read back by (llm.tasks.TASKS)."""
    taken = {m.name for m in MODULES}
    keys = {s.key for m in MODULES for s in m.steps}
    kinds = {k for m in MODULES for k in m.events}
    if module.name in taken or keys & {s.key for s in module.steps} or kinds & set(module.events):
        raise ValueError(f"module {module.name!r}: its name, a step's key or an event kind is registered already")
    clash = [t.name for t in module.tasks if TASKS.get(t.name, t) is not t]
    if clash:
        raise ValueError(f"module {module.name!r}: another task is named {clash[0]!r}")
    for t in module.tasks:
        TASKS[t.name] = t
    MODULES.append(module)
    return module


@contextmanager
def registered(module: Module) -> Iterator[Module]:
    """`module` registered for the block only (a module a test declares)."""
    new = [t.name for t in module.tasks if t.name not in TASKS]
    register(module)
    try:
        yield module
    finally:
        MODULES.remove(module)
        for name in new:
            del TASKS[name]


def running(settings: Settings) -> list[Module]:
    """The slow modules the engine runs under `settings`, in registry order."""
    return [m for m in MODULES if m.running(settings)]


def event_kinds() -> dict[str, str]:
    """Every registered module's event kinds -> what a breakpoint on one catches ("" for none)."""
    return {k: what for m in MODULES for k, what in m.events.items()}


def step(key: str) -> tuple[Module, int] | None:
    """The module whose step's questions carry `key`, and the step's index."""
    for m in MODULES:
        for i, s in enumerate(m.steps):
            if s.key == key:
                return m, i
    return None


HEADER = "| module | file | clock | when | setting | reads | writes | slow |"


def table() -> list[str]:
    """The registry as docs/architecture.md's markdown table (its lines)."""
    rows = [HEADER, "|" + "---|" * 8]
    for m in MODULES:
        clock = m.clock.kind if not m.clock.minutes else f"every `{m.clock.minutes}` minutes" \
            if isinstance(m.clock.minutes, str) else f"every {m.clock.minutes} minutes"
        cells = [m.name, f"`{m.file}`", clock, m.clock.when, f"`{m.setting}`" if m.setting else "—", m.reads,
                 m.writes, m.slow or "—"]
        rows.append("| " + " | ".join(cells) + " |")
    return rows

