"""The questions the mind asks (tasks): typed inputs, a prompt template file, a typed output.

Every backend answers every task with a validated instance of the task's `Output`.
"""

from __future__ import annotations

import string
from functools import cache
from importlib import resources
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field


class Persona(BaseModel):
    """The stable part of every prompt about an agent (kept first so a model can cache it)."""

    name: str
    age: int
    traits: str
    description: str
    home: str


class Output(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Task(BaseModel):
    name: ClassVar[str]
    output: ClassVar[type[Output]]
    persona: Persona

    def render(self) -> str:
        """The prompt: the template file filled with `$field` values (no code is executed)."""
        values = {k: _text(v) for k, v in self.model_dump().items()}
        values.update({f"persona_{k}": v for k, v in self.persona.model_dump().items()})
        return _template(self.name).safe_substitute(values)


def _text(v: object) -> str:
    if isinstance(v, list):
        return "\n".join(f"- {x}" for x in v)
    return str(v)


@cache
def _template(name: str) -> string.Template:
    return string.Template(resources.files("smalltown.llm").joinpath(f"prompts/{name}.txt").read_text())


# --- planning ---------------------------------------------------------------------------------


class DailyPlanOut(Output):
    wake_up_hour: int = Field(ge=3, le=12, description="hour of the day the agent wakes up")
    items: list[str] = Field(min_length=5, max_length=8, description="the day in broad strokes")


class DailyPlan(Task):
    name: ClassVar[str] = "daily_plan"
    output: ClassVar[type[Output]] = DailyPlanOut
    date: str  # "Monday February 13, 2023"
    known_places: list[str]


class Block(BaseModel):
    model_config = ConfigDict(extra="forbid")
    start: str = Field(pattern=r"^([01]\d|2[0-3]):[0-5]\d$", description="HH:MM")
    minutes: int = Field(ge=5, le=1440)
    activity: str = Field(min_length=1, max_length=200)


class HourlyScheduleOut(Output):
    blocks: list[Block] = Field(min_length=1, max_length=48)


class HourlySchedule(Task):
    """Decompose the daily plan into hour-long blocks that cover the waking day."""

    name: ClassVar[str] = "hourly_schedule"
    output: ClassVar[type[Output]] = HourlyScheduleOut
    date: str
    wake_up_hour: int
    daily_plan: list[str]
    known_places: list[str]


# --- places and objects -----------------------------------------------------------------------


class ChoosePlaceOut(Output):
    choice: str = Field(min_length=1, max_length=200)


class ChoosePlace(Task):
    """One level of the recursive choice over the agent's known tree."""

    name: ClassVar[str] = "choose_place"
    output: ClassVar[type[Output]] = ChoosePlaceOut
    activity: str
    level: Literal["sector", "arena", "object"]
    within: str  # "" for sectors; the sector (or sector: arena) being chosen inside
    current: str  # where the agent is now, "sector: arena"
    options: list[str]


class ObjectStateOut(Output):
    state: str = Field(min_length=1, max_length=80)


class ObjectState(Task):
    """What an object is doing while an agent uses it ("coffee machine is brewing coffee")."""

    name: ClassVar[str] = "object_state"
    output: ClassVar[type[Output]] = ObjectStateOut
    activity: str
    object: str


TASKS: dict[str, type[Task]] = {t.name: t for t in (DailyPlan, HourlySchedule, ChoosePlace, ObjectState)}
