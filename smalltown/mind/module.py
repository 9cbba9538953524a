"""A module of the mind, as it declares itself to the registry (mind/modules.py): its clock, its
setting, what it reads and writes, and how the engine runs it: its slow steps (a slow module), its
hook on each tick (a model-free one), or the engine's phase it is bound to or runs inside
(sim/phases.py); the event kinds it emits and its inspector panel."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Callable, NamedTuple

from smalltown.config import Settings
from smalltown.llm.tasks import Other, Output, Task

if TYPE_CHECKING:
    from smalltown.mind.awareness import Outcome as ActionOutcome
    from smalltown.mind.core import MindCore

# the clocks, from the fastest: model-free each tick; on an event of the agent's (a line, an action
# ending, an observation weighed, a conversation over); every N game minutes; rarely (a threshold, a day)
CLOCKS = ("every tick", "on an event", "every N minutes", "rare")


@dataclass(frozen=True)
class Clock:
    kind: str  # one of CLOCKS
    when: str  # the clock in words
    minutes: int | str = 0  # "every N minutes": N, or the setting that holds N

    def every(self, settings: Settings) -> int:
        """N in game minutes (0 for the other clocks)."""
        return int(getattr(settings, self.minutes)) if isinstance(self.minutes, str) else self.minutes


class TownView(NamedTuple):
    """What a module's question may read of the town beyond the agent's own mind (the engine's)."""
    needs: tuple[str, ...]  # the world's needs
    names: list[str]  # every agent, in agent order
    other: Callable[[str], Other]  # an agent as others see it: its activity and its goal's need


class Emit(NamedTuple):
    """An event for the engine to emit for the agent: its kind (declared by the module), text, data."""
    kind: str
    text: str
    data: dict


class Applied(NamedTuple):
    events: list[Emit]
    then: Task | None = None  # the module's next step's question, asked now (applied `lag` later)


Due = Callable[["MindCore", datetime, TownView], bool]
Question = Callable[["MindCore", datetime, TownView], Task]
Apply = Callable[["MindCore", Output, Task, datetime], Applied]  # the answer, the task as its prompt showed it
Outcome = Callable[["MindCore", datetime, set[str]], list[Emit]]  # given the kinds of the agent's events this tick
# a model-free module's hook on each tick (after movement), given what stopped the agent's action this tick (or None)
EachTick = Callable[["MindCore", datetime, "ActionOutcome | None"], list[Emit]]


@dataclass(frozen=True)
class SlowStep:
    key: str  # the name its questions carry in the agent's state (AgentState.slow: saved)
    apply: Apply


@dataclass(frozen=True)
class Panel:
    """An inspector tab (tui/screens/inspector_modules.py): its title and the rows (label, text)
    it shows of the module's own saved state (AgentState.modules[name])."""
    title: str
    rows: Callable[[dict], list[tuple[str, str]]]


@dataclass(frozen=True)
class Module:
    name: str
    file: str  # under smalltown/
    clock: Clock
    setting: str  # the setting that switches it ("" when it always runs)
    reads: str
    writes: str
    slow: str = ""  # when it is asked at one tick and applied `slow_lag_ticks` later (sim/later.py)
    # --- what the engine runs (a slow module) ---
    tasks: tuple[type[Task], ...] = ()  # the questions it asks
    due: Due | None = None
    question: Question | None = None  # its first step's question
    steps: tuple[SlowStep, ...] = ()  # the first answers `question`; each may ask the next (Applied.then)
    outcome: Outcome | None = None
    # --- what the engine runs (a model-free module on each tick, sim/phases.py's "each tick" phase) ---
    each_tick: EachTick | None = None
    # the engine's phase (sim/phases.py) this module runs inside, when no phase is bound to it by name
    # (talking inside "encounters", places inside "next actions", ...)
    runs_in: str = ""
    on: Callable[[Settings], bool] | None = None  # when the engine runs it (default: its setting is on)
    events: dict[str, str] = field(default_factory=dict)  # its event kinds -> what a breakpoint on one catches
    panel: Panel | None = None

    def switched_on(self, settings: Settings) -> bool:
        """Whether the module is on under `settings` (`on`, or else every setting it names)."""
        if self.on is not None:
            return self.on(settings)
        return all(getattr(settings, s.strip()) for s in self.setting.split(",") if s.strip())

    def running(self, settings: Settings) -> bool:
        """Whether the engine runs this module's slow steps under `settings`."""
        return bool(self.steps) and self.switched_on(settings)

    def is_due(self, mind: "MindCore", now: datetime, town: TownView) -> bool:
        """Its `due`; without one, its clock's: every N game minutes since it was last asked
        (kept in its own state, `AgentState.modules`), with none of its questions still out."""
        if self.due is not None:
            return self.due(mind, now, town)
        minutes = self.clock.every(mind.settings)
        if not minutes:
            raise ValueError(f"module {self.name!r}: no `due`, and its clock is not every N minutes")
        keys = {s.key for s in self.steps}
        if any(q.module in keys for q in mind.state.slow):
            return False
        asked = mind.state.modules.get(self.name, {}).get("asked")
        return asked is None or now - datetime.fromisoformat(asked) >= timedelta(minutes=minutes)

    def ask(self, mind: "MindCore", now: datetime, town: TownView) -> Task:
        """Its first step's question, fixed now (the clock restarts when it is asked)."""
        assert self.question is not None, f"module {self.name!r}: a slow module needs a question"
        if self.due is None:
            mind.state.modules.setdefault(self.name, {})["asked"] = now.isoformat(" ")  # (as the state stamps times)
        return self.question(mind, now, town)
