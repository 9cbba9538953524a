"""Planning tasks (SPEC 4): the day, its schedule, decomposition, the no-planning ablation's next
action; and where an action is done (a place, an object's state)."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from smalltown.llm.tasks.base import Record, PlanStep, Block, Done, Output, Quiet, Task, Rating, _enum, _count
from smalltown.llm.tasks.broadcast import Decided, Promise
from smalltown.llm.tasks.travel import TownSeen, Trip
from smalltown.world.model import Gathering


# --- planning ---------------------------------------------------------------------------------


class DailyPlanOut(Output):
    wake_up_hour: int = Field(ge=3, le=12, description="the hour the person wakes up")
    items: list[PlanStep] = Field(min_length=5, max_length=8, description="the day in broad strokes, in order")


class DailyPlan(Quiet, Task):
    """SPEC 4: the day in broad strokes, from the summary, yesterday, and what bears on today."""

    name: ClassVar[str] = "daily_plan"
    output: ClassVar[type[Output]] = DailyPlanOut
    trim: ClassVar[tuple[str, ...]] = ("context", "yesterday")
    unretrieved: ClassVar[dict[str, str]] = {"yesterday": "record{s} of yesterday"}
    budgets: ClassVar[dict[str, int]] = {"context": 250, "yesterday": 250}
    known_places: list[str]
    yesterday: list[Record] = []  # what happened yesterday: the schedule lived, talks, what stood out
    context: list[Record] = []  # retrieved for today's plans
    gatherings: list[Gathering] = []  # events today the agent knows of
    intentions: list[Record] = []  # inner voices that still stand
    goal: str = ""  # the person's current goal (goal generation), shown only when there is one
    # a world of several towns with `travel` on (llm/tasks/travel.py): the towns known, today's reasons to go
    towns: list[TownSeen] = []
    trips: list[Trip] = []
    quiet: ClassVar[tuple[str, ...]] = ("goal", "towns", "trips")
    shrinkable: ClassVar[tuple[str, ...]] = ("towns", "trips")  # (llm/fit.py: a prompt too long otherwise)


class HourlyScheduleOut(Output):
    blocks: list[Block] = Field(min_length=1, max_length=14)


class HourlySchedule(Quiet, Task):
    """The waking day as blocks (one activity each, an hour or longer, with its place); after a
    reaction, a conversation or an inner voice, the rest of the day from `from_time`."""

    name: ClassVar[str] = "hourly_schedule"
    output: ClassVar[type[Output]] = HourlyScheduleOut
    trim: ClassVar[tuple[str, ...]] = ("reason",)
    unretrieved: ClassVar[dict[str, str]] = {"reason": "record{s} of the reason to re-plan"}
    budgets: ClassVar[dict[str, int]] = {"reason": 250}
    wake_up_hour: int
    daily_plan: list[PlanStep]
    known_places: list[str]
    gatherings: list[Gathering] = []
    intentions: list[Record] = []
    from_time: str = ""  # "HH:MM": re-plan from here on ("" = the whole waking day)
    done: list[Block] = []  # what was lived today before `from_time`
    reason: list[Record] = []  # what prompts a re-plan: a conversation and what was learned
    reaction: str = ""  # a reaction to do first, from `from_time`
    place: str = ""  # where the agent is now ("sector: arena"), when re-planning
    quiet: ClassVar[tuple[str, ...]] = ("decision", "promises", "goal", "sleep_places", "towns", "trips")
    # a prompt too long otherwise (llm/fit.py) loses, in turn: the earliest of what was done today,
    # the towns, the trips' reasons, the promises (a late re-plan in a many-town world needs it)
    shrinkable: ClassVar[tuple[str, ...]] = ("done", "towns", "trips", "promises")
    shrink_oldest: ClassVar[tuple[str, ...]] = ("done",)
    decision: Decided | None = None  # the controller's decision (broadcast on)
    promises: list[Promise] = []  # the agent's open commitments, to keep (broadcast on)
    goal: str = ""  # the person's current goal (goal generation), shown only when there is one
    sleep_places: list[str] = []  # of known_places: where the person may sleep (llm/coherence.py)
    towns: list[TownSeen] = []  # as the daily plan's (llm/tasks/travel.py)
    trips: list[Trip] = []

    def schema(self) -> dict:
        return _enum(super().schema(), ("$defs", "Block", "properties", "place"), self.known_places) \
            if self.known_places else super().schema()

    def check(self, out: Output) -> str:
        bad = [b.place for b in out.blocks if self.known_places and b.place not in self.known_places]
        return f"place {bad[0]!r} is not a place the person knows" if bad else ""


class SubAction(BaseModel):
    model_config = ConfigDict(extra="forbid")
    activity: str = Field(min_length=1, max_length=60)
    minutes: int = Field(ge=5, le=15)
    object: str = Field(default="", max_length=200, description="where it is done: one of the objects listed")
    state: str = Field(default="", max_length=30, description="what that object is doing meanwhile, in a few words")


class DecomposeOut(Output):
    actions: list[SubAction] = Field(min_length=1, max_length=10)
    ratings: list[Rating] = Field(default=[], description="one importance rating per memory to rate, in order")


class Decompose(Quiet, Task):
    """Just in time: the next part (at most two hours) of an activity into 5-15 minute actions, each
    with the object it is done at, seeing the day around it and what is already done of it. The
    same call rates the records noted since the last rating (packed: one call instead of two)."""

    name: ClassVar[str] = "decompose"
    output: ClassVar[type[Output]] = DecomposeOut
    numbered: ClassVar[tuple[str, ...]] = ("rate",)
    trim: ClassVar[tuple[str, ...]] = ("rate",)  # what is not rated here waits for the next batch
    unretrieved: ClassVar[dict[str, str]] = {"rate": "record{s} to rate"}
    budgets: ClassVar[dict[str, int]] = {"rate": 300}
    activity: str
    start: str  # "HH:MM": this part starts
    minutes: int  # this part's length
    place: str  # the sector
    objects: list[str]  # "arena: object" in that sector, as the agent knows it
    activity_start: str  # "HH:MM": the whole activity
    activity_minutes: int
    done: list[Done] = []  # what is already done of the activity (its latest actions)
    minutes_left: int = 0  # of the activity after this part
    before: Block | None = None  # the activity before, and after, in today's schedule
    after: Block | None = None
    gatherings: list[Gathering] = []  # events today the agent knows of (as the schedule was given)
    intentions: list[Record] = []  # inner voices that still stand (as the schedule was given)
    rate: list[Record] = []  # memories to rate on SPEC 2's scale
    unavailable: list[str] = []  # of `objects`: found closed or taken (mind/awareness.py)
    quiet: ClassVar[tuple[str, ...]] = ("unavailable", "decision", "promises", "beds")
    shrinkable: ClassVar[tuple[str, ...]] = ("promises",)  # (llm/fit.py: a prompt too long otherwise)
    decision: Decided | None = None  # the controller's decision (broadcast on)
    promises: list[Promise] = []  # the agent's open commitments (broadcast on)
    beds: list[str] | None = None  # of `objects`: where the person may sleep (None: not said)

    def schema(self) -> dict:
        s = super().schema()
        if self.objects:
            s = _enum(s, ("$defs", "SubAction", "properties", "object"), self.objects)
        return _count(s, ("properties", "ratings"), len(self.rate), len(self.rate))

    def check(self, out: Output) -> str:
        if len(out.ratings) != len(self.rate):
            return f"{len(out.ratings)} ratings for {len(self.rate)} memories"
        bad = [a.object for a in out.actions if self.objects and a.object not in self.objects]
        return f"object {bad[0]!r} is not one of the objects listed" if bad else ""


class NextActionOut(Output):
    activity: str = Field(min_length=1, max_length=60)
    minutes: int = Field(ge=5, le=120)


class NextAction(Task):
    """The no-planning ablation: the next action from the moment only."""

    name: ClassVar[str] = "next_action"
    output: ClassVar[type[Output]] = NextActionOut
    trim: ClassVar[tuple[str, ...]] = ("recent",)
    unretrieved: ClassVar[dict[str, str]] = {"recent": "recent record{s}"}
    budgets: ClassVar[dict[str, int]] = {"recent": 300}
    status: str
    recent: list[Record]
    known_places: list[str]


# --- places and objects -----------------------------------------------------------------------


class ChoosePlaceOut(Output):
    choice: str = Field(min_length=1, max_length=200)


class ChoosePlace(Quiet, Task):
    """One level of the recursive choice over the agent's known tree (SPEC 7)."""

    name: ClassVar[str] = "choose_place"
    output: ClassVar[type[Output]] = ChoosePlaceOut
    activity: str
    level: Literal["sector", "arena", "object"]
    within: str  # "" for sectors; the sector (or sector: arena) being chosen inside
    current: str  # where the agent is now, "sector: arena"
    options: list[str]
    unavailable: list[str] = []  # of `options`: found closed or taken (mind/awareness.py)
    beds: list[str] | None = None  # for sleep: the options where the person may sleep (None: not sleep)
    quiet: ClassVar[tuple[str, ...]] = ("unavailable", "beds")

    def schema(self) -> dict:
        return _enum(super().schema(), ("properties", "choice"), self.options) if self.options else super().schema()

    def check(self, out: Output) -> str:
        return "" if not self.options or out.choice in self.options else f"{out.choice!r} is not one of the options"


class ObjectStateOut(Output):
    state: str = Field(min_length=1, max_length=40)


class ObjectState(Task):
    """What an object is doing while an agent uses it ("coffee machine is brewing coffee")."""

    name: ClassVar[str] = "object_state"
    output: ClassVar[type[Output]] = ObjectStateOut
    activity: str
    object: str
