"""The tick, as the ordered phases the engine runs (sim/simulation.py `_step` loops over `PHASES`):
each phase bound to the registry's module(s) it runs (mind/modules.py), by name or by what the
modules declare (slow steps, a hook on each tick); a module that runs inside another's phase says
which (`Module.runs_in`). The world's systems (the economy's settling, the civics' step) are phases
of their own, switched by the world file, not by a setting. tests/test_phases.py keeps every
registered module bound to exactly one phase.

The model-asking phases (`THINKING`: reflection, encounters, next actions) run inside "think",
on the ticks the mind thinks (every tick, or with `think_every_ticks` G > 1 on multiples of G,
weighing all seen since the last of them)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Callable, Protocol

from smalltown.config import Settings
from smalltown.llm.backend import CallRecord
from smalltown.mind import modules
from smalltown.mind.module import EachTick, Module
from smalltown.sim import commitments
from smalltown.sim.agent import Agent
from smalltown.sim.belief import Belief
from smalltown.sim.civics import Civics
from smalltown.sim.crowd import Crowd
from smalltown.sim.economy import Economy
from smalltown.sim.encounters import Encounters
from smalltown.sim.memes import Memes
from smalltown.sim import heard
from smalltown.sim.movement import Movement
from smalltown.sim.changes import Changes
from smalltown.sim.perception import perceive_all
from smalltown.sim.public import Public
from smalltown.sim.slow import SlowModules, emit
from smalltown.sim.thinking import Thinking
from smalltown.world.model import World
from smalltown.world.perception import Seen
from smalltown.world.sight import Sight

class Engine(Protocol):
    """What the phases use of the engine (sim/simulation.py's Simulation, which runs them: naming
    it here would import the engine back, a circle of files)."""

    world: World
    settings: Settings
    tick: int
    agents: list[Agent]
    objects: dict[str, str]
    sight: Sight
    crowd: Crowd
    movement: Movement
    encounters: Encounters
    thinking: Thinking
    slow: SlowModules | None
    economy: Economy | None
    civics: Civics | None
    belief: Belief | None
    memes: Memes | None
    grid: int
    think_ahead: bool
    tick_phases: "TickPhases"

    public: Public

    @property
    def by_name(self) -> dict[str, Agent]: ...
    @property
    def calls(self) -> list[tuple[int, int, CallRecord]]: ...
    def agent(self, name: str) -> Agent: ...
    def sighted(self, agents: list[Agent], changes: Changes) -> dict[str, list[Seen]]: ...
    def ahead(self, agents: list[Agent], involved: set[str]) -> None: ...
    def join_ahead(self, changes: Changes) -> None: ...
    def horizon(self) -> datetime | None: ...


@dataclass
class Tick:
    """The tick in progress over a list of agents (the town, or a group of it: sim/groups.py), as the
    phases pass it on. Phase code reads the agents from here, never the engine's whole list."""
    now: datetime
    changes: Changes
    agents: list[Agent] = field(default_factory=list)
    first: bool = True  # the tick's first pass: the town-wide phases (memes) run in it
    seen: dict[str, list[Seen]] = field(default_factory=dict)  # per agent, what it newly saw this tick
    weigh: dict[str, list[Seen]] = field(default_factory=dict)  # what the thinking phases weigh


@dataclass(frozen=True)
class Phase:
    name: str
    run: Callable[[Engine, Tick], None]
    modules: tuple[str, ...] = ()  # the registry's modules it runs, by name (none: the world's, or the engine's own)
    takes: Callable[[Module], bool] | None = None  # the modules it runs, by what they declare
    # when it runs (default: when one of its modules is on); `always` for a phase whose modules'
    # settings are read inside it
    when: Callable[[Engine], bool] | None = None

    def binds(self, module: Module) -> bool:
        return module.name in self.modules or (self.takes is not None and self.takes(module))

    def runs(self, sim: Engine) -> bool:
        if self.when is not None:
            return self.when(sim)
        return any(m.switched_on(sim.settings) for m in modules.MODULES if self.binds(m))


def always(sim: Engine) -> bool:
    return True


# --- the phases -------------------------------------------------------------------------------

def _perceive(sim: Engine, tick: Tick) -> None:
    whole = len(tick.agents) == len(sim.agents)
    tick.seen = perceive_all(sim.sight, tick.agents, sim.objects, sim.settings, tick.changes, whole)
    for agent in tick.agents:
        if tick.seen.get(agent.name):
            agent.mind.observe(tick.seen[agent.name], tick.now, sim.objects)


def _think(sim: Engine, tick: Tick) -> None:
    if sim.grid > 1:  # the mind thinks on grid ticks only, on all it saw since the last
        for name, new in tick.seen.items():
            sim.agent(name).sight(new)
        if tick.changes.tick % sim.grid:
            return
        tick.weigh = sim.sighted(tick.agents, tick.changes)
    else:
        tick.weigh = tick.seen
    base = sim.crowd.phase
    for i, phase in enumerate(sim.tick_phases.thinking, 1):
        sim.crowd.phase = base + i * SUB  # (the same in any pass: see `run`)
        phase.run(sim, tick)


def _reflect(sim: Engine, tick: Tick) -> None:
    """Inline reflection (the reflection module's form without `slow_reflection`: mind/reflect.py's `due`)."""
    due = [a for a in tick.agents if a.mind.should_reflect(tick.now)]
    for agent, insights in zip(due, sim.crowd.each(due, lambda a: a.mind.reflect(tick.now))):
        tick.changes.emit(agent.name, "reflected", f"{agent.name} reflects: " + " / ".join(m.description for m in insights),
                          memories=[m.id for m in insights])
        tick.changes.changed.add(agent.name)


def _encounters(sim: Engine, tick: Tick) -> None:
    ahead = (lambda involved: sim.ahead(tick.agents, involved)) if sim.think_ahead else None
    sim.encounters.react(tick.agents, tick.weigh, tick.now, tick.changes, ahead)
    sim.join_ahead(tick.changes)


def _next_actions(sim: Engine, tick: Tick) -> None:
    due = [a for a in tick.agents if a.mind.due(tick.now)]
    for agent, (action, new, later) in zip(due, sim.thinking.next_actions(due, tick.now, sim.horizon())):
        sim.movement.start(agent, action, new, tick.changes)
        tick.changes.changed.add(agent.name)
        if later:
            agent.ahead = (action, later)


def _ahead(sim: Engine, tick: Tick) -> None:
    """(`think_ahead`) Those the encounters had: what follows their talk or re-plan, now."""
    sim.ahead(tick.agents, set())
    sim.join_ahead(tick.changes)


def _move(sim: Engine, tick: Tick) -> None:
    for agent in tick.agents:
        if agent.path:
            sim.movement.walk(agent, tick.changes)
            tick.changes.moved.add(agent.name)
            if not agent.path:
                tick.changes.changed.add(agent.name)


def _each_tick(sim: Engine, tick: Tick) -> None:
    """The model-free modules' hooks, each agent given what stopped its action this tick (taken
    whatever is on: it is this tick's only)."""
    hooks = sim.tick_phases.hooks
    for agent in tick.agents:
        outcome, agent.outcome = agent.outcome, None
        for hook in hooks:
            emit(agent, hook(agent.mind, tick.now, outcome), tick.changes)


def _commitment_checks(sim: Engine, tick: Tick) -> None:
    s = sim.settings
    members = {a.name: a for a in tick.agents} if s.action_awareness else {}

    def sector_of(agent: Agent, name: str) -> str | None:
        # A partner in sight is where it is now (one who walks in with the promiser is there); one
        # out of sight as the last tick ended (sim/public.py). In sight now means within reach as the
        # last tick ended, so in this pass's group: lock-step and groups read the same.
        other = members.get(name)
        if other is not None and max(abs(other.tile[0] - agent.tile[0]),
                                     abs(other.tile[1] - agent.tile[1])) <= s.vision_radius:
            arena = sim.world.arena_at(other.tile)
            return arena.sector if arena else ""
        return sim.public.sector(name)

    commitments.check(tick.agents, sector_of, sim.world, tick.now,
                      s.commitment_window_minutes, tick.changes, s.action_awareness)


THINKING: list[Phase] = [
    Phase("inline reflection", _reflect, when=always),
    Phase("encounters", _encounters, ("reacting", "talking")),
    Phase("civics heard", lambda sim, t: sim.civics.heard(t.changes), when=lambda sim: sim.civics is not None),
    Phase("next actions", _next_actions, when=always),  # (its modules' settings are read inside the mind)
    Phase("ahead", _ahead, when=lambda sim: sim.think_ahead),
]

PHASES: list[Phase] = [
    # perceiving runs whatever `observation_memory` says: it says only whether the mind remembers it
    Phase("perception", _perceive, ("perception",), when=always),
    # the ops of actions that have ended, before anyone thinks of the next
    Phase("economy", lambda sim, t: sim.economy.settle(t.agents, sim.by_name, t.now, t.changes),
          when=lambda sim: sim.economy is not None),
    # the constitution's phases and tax seasons due now
    Phase("civics", lambda sim, t: sim.civics.step(t.now, t.changes, t.agents), when=lambda sim: sim.civics is not None),
    Phase("slow", lambda sim, t: sim.slow.step(t.changes.tick, t.now, t.changes, sim.calls, t.agents),
          takes=lambda m: bool(m.steps), when=lambda sim: sim.slow is not None),
    # one meme summary per town each `meme_every_minutes` (the goals held at the end of the last tick)
    # (town-wide, from the public record of the last tick's end: once a tick, in its first pass)
    Phase("memes", lambda sim, t: sim.memes.step(t.now, t.changes) if t.first else None, ("memes",), when=lambda sim: sim.memes is not None),
    Phase("take up", lambda sim, t: sim.thinking.take_up(t.agents, t.now, t.changes), when=lambda sim: sim.think_ahead),
    Phase("think", _think, when=always),
    # the tick's lines heard and said: exposures and levels (after every talk of the tick, before anyone moves on)
    Phase("belief", lambda sim, t: sim.belief.step(t.now, t.changes, sim.by_name, t.agents), ("belief",),
          when=lambda sim: sim.belief is not None),
    # the tick's lines heard: the needs their speakers work toward (mind/goals.py), for the next goal question
    Phase("goals heard",
          lambda sim, t: heard.step(t.agents, sim.by_name, sim.settings.hearing_radius, t.now, t.changes),
          when=lambda sim: sim.settings.goal_generation),  # (goal generation's; its questions run in "slow")
    Phase("movement", _move, ("movement",)),
    Phase("each tick", _each_tick, takes=lambda m: m.each_tick is not None, when=always),
    # what the minds' modules put in their outboxes this tick (the controllers' decisions, promises made)
    Phase("outboxes", lambda sim, t: commitments.emit_outboxes(t.agents, t.changes), when=always),
    # promises made while `commitments` was on are settled whatever it says now
    Phase("commitment checks", _commitment_checks, ("commitment checks",), when=always),
    # goals that succeeded or failed: a new one asked at once
    Phase("slow outcomes", lambda sim, t: sim.slow.outcomes(t.now, t.changes, t.agents), when=lambda sim: sim.slow is not None),
]


class TickPhases:
    """The phases a run runs (`Phase.runs`), in order, and the each-tick hooks of the modules on:
    chosen once, when the engine is made (a run's settings and world stay as they are while it
    runs; the registry's slow modules are chosen so too, sim/slow.py)."""

    def __init__(self, sim: Engine):
        self.phases = [p for p in PHASES if p.runs(sim)]
        self.thinking = [p for p in THINKING if p.runs(sim)]
        self.hooks: list[EachTick] = [m.each_tick for m in modules.MODULES
                                      if m.each_tick is not None and m.switched_on(sim.settings)]


# The crowd's phase counter at each phase (and each thinking phase within "think"): fixed by the
# phase, not by how many questions the phases before it asked, so a call's place in the call log is
# the same whether the tick runs over the whole town or group by group (sim/simulation.py).
STRIDE, SUB = 10**8, 10**6


def run(sim: Engine, tick: Tick) -> None:
    """The tick's phases over `tick.agents`, in order (`sim.tick_phases`)."""
    changes = tick.changes
    for i, phase in enumerate(sim.tick_phases.phases, 1):
        sim.crowd.phase = i * STRIDE  # (the current pass's counter: sim/crowd.py)
        changes.phase = i
        phase.run(sim, tick)


def phase_of(module: Module) -> str:
    """The phase that runs `module`: the one bound to it, or the one it says it runs inside
    (`runs_in`). A module bound to none (described only) or to several is an error."""
    every = PHASES + THINKING
    bound = [p.name for p in every if p.binds(module)]
    if module.runs_in:
        if bound or module.runs_in not in {p.name for p in every}:
            raise ValueError(f"module {module.name!r}: runs in {module.runs_in!r}, "
                             f"but {'is bound to ' + ', '.join(bound) if bound else 'there is no such phase'}")
        return module.runs_in
    if len(bound) != 1:
        raise ValueError(f"module {module.name!r}: bound to {', '.join(bound) or 'no phase'} "
                         "(a phase of sim/phases.py by name, `steps`, `each_tick`, or `runs_in`)")
    return bound[0]
