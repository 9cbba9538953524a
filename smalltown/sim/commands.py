"""The user's commands, as data: what every front end (the TUI, the command line, headless runs,
tests) sends a Simulation. Interventions change the town or its save and are applied between
ticks (`Simulation.apply`), each committed at once; run controls say how a runner drives the
clock (pause, step, speed, run until, breakpoints) and are the runner's to interpret."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Union

from smalltown.sim.breakpoints import Breakpoint
from smalltown.sim.fork import ForkResult, fork
from smalltown.store.copy import copy_save

if TYPE_CHECKING:
    from smalltown.mind.memory import Memory, Retrieval
    from smalltown.sim.simulation import Simulation


# --- interventions: the user's hand in the town ------------------------------------------------

@dataclass(frozen=True)
class Whisper:
    """An inner voice: the agent takes `text` as its own thought and re-plans around it."""
    agent: str
    text: str

    def apply(self, sim: "Simulation") -> "Memory":
        return sim.whisper(self.agent, self.text)


@dataclass(frozen=True)
class Interview:
    """A question to an agent, asked in a persona; answered from its memory, and remembered."""
    agent: str
    question: str
    interviewer: str = "the interviewer"

    def apply(self, sim: "Simulation") -> "tuple[str, Retrieval]":
        return sim.interview(self.agent, self.question, self.interviewer)


@dataclass(frozen=True)
class EditObject:
    """The user rewrites an object's state ("stove is burning"); agents who see it notice."""
    address: str
    state: str

    def apply(self, sim: "Simulation") -> tuple[str, str]:
        sim.edit_object(self.address, self.state)
        return self.address, self.state


@dataclass(frozen=True)
class SaveNow:
    """Every tick is already committed: this takes a snapshot (a point to fork or rewind to) and
    folds the write-ahead log into the file, so the .sqlite alone is the whole run. Returns the
    tick and the save's path."""

    def apply(self, sim: "Simulation") -> tuple[int, str]:
        sim.snapshot()
        sim.save.checkpoint()
        return sim.tick, str(sim.save.path)


@dataclass(frozen=True)
class CopySave:
    """A consistent copy of the save as of the last committed tick, at a new path."""
    path: str

    def apply(self, sim: "Simulation") -> Path:
        path = Path(self.path)
        if path.exists():
            raise FileExistsError(f"{path} already exists")
        return copy_save(sim.save.path, path)


@dataclass(frozen=True)
class Rewind:
    """A new save at `path`: this one as it was at the earlier moment `when`."""
    when: datetime
    path: str

    def apply(self, sim: "Simulation") -> ForkResult:
        return fork(sim.save.path, self.when, Path(self.path))


Intervention = Union[Whisper, Interview, EditObject, SaveNow, CopySave, Rewind]


# --- run controls: how a runner drives the clock ----------------------------------------------

@dataclass(frozen=True)
class Toggle:
    """Pause a running town, or run a paused one."""


@dataclass(frozen=True)
class Step:
    """One tick, then paused."""


@dataclass(frozen=True)
class Faster:
    pass


@dataclass(frozen=True)
class Slower:
    pass


@dataclass(frozen=True)
class Quit:
    pass


@dataclass(frozen=True)
class RunUntil:
    """Run to game time `when` (at full speed), then pause."""
    when: datetime


@dataclass(frozen=True)
class Break:
    """Pause when `breakpoint` is hit."""
    breakpoint: Breakpoint


@dataclass(frozen=True)
class Unbreak:
    """Remove the breakpoint `id` (None: all of them)."""
    id: int | None


@dataclass(frozen=True)
class StepAgent:
    """Run until `agent`'s next event (at full speed), then pause."""
    agent: str


@dataclass(frozen=True)
class Cancel:
    """Give up a run until or a step to an event, and pause; anything else is left as it is."""


Control = Union[Toggle, Step, Faster, Slower, Quit, RunUntil, Break, Unbreak, StepAgent, Cancel]
Command = Union[Intervention, Control]

INTERVENTIONS = (Whisper, Interview, EditObject, SaveNow, CopySave, Rewind)
