"""A day's plan as data (SPEC 4): the day in broad strokes (`items`), hour-long blocks, and each
block's 5-15 minute actions once decomposed, with the lookups the mind, the engine and the front
ends share, and its JSON as the save keeps it. How a plan is made is the mind's (mind/plan.py,
mind/planning.py).

A long activity is cut into hour-long blocks, but stays one activity: its blocks follow each other
with the same activity and place (a `span`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime
from typing import ClassVar

from smalltown.world.model import DAY, SLEEPING


def minute_of(now: datetime) -> int:
    """The minute of the day, as plans count time."""
    return now.hour * 60 + now.minute


@dataclass
class PlanItem:
    start: int  # minute of the day
    minutes: int
    activity: str
    address: str = ""  # where it is done: the object (actions; blocks not decomposed, once chosen)
    actions: list["PlanItem"] | None = None  # its 5-15 minute actions, once decomposed (blocks)
    place: str = ""  # the sector (blocks)
    runs_on: int = 0  # minutes the activity goes on past midnight (the day's last block)
    op: dict | None = None  # an economy op this action does (llm.tasks.Op's fields; sim/economy.py applies it)
    # the model calls that made it (llm.asker.call_ref): a block's schedule, an action's
    # decomposition and place; an action taken up is decided by its block's and its own
    calls: list[dict] = field(default_factory=list)

    @property
    def end(self) -> int:
        return self.start + self.minutes

    def to_json(self) -> dict:
        """By hand, key for key as `dataclasses.asdict` wrote it (saves keep that JSON), at a
        fraction of its cost: a plan is encoded whenever its agent's state is written."""
        d = {"start": self.start, "minutes": self.minutes, "activity": self.activity, "address": self.address,
             "actions": [a.to_json() for a in self.actions] if self.actions is not None else None,
             "place": self.place, "runs_on": self.runs_on}
        if self.op:  # (only in a world with an economy: other plans encode as before)
            d["op"] = self.op
        if self.calls:
            d["calls"] = self.calls
        return d

    @classmethod
    def from_json(cls, d: dict) -> "PlanItem":
        actions = d.get("actions")
        address = d.get("address", "")
        items = [cls.from_json(a) for a in actions] if actions is not None else None
        for a in items or []:  # a save from before actions had their own objects
            a.address = a.address or address
        return cls(d["start"], d["minutes"], d["activity"], address, items,
                   d["place"] if "place" in d else address.split(":")[0], d.get("runs_on", 0), d.get("op"),
                   list(d.get("calls") or []))


@dataclass
class DayPlan:
    date: date  # the day it plans
    wake_up_hour: int
    items: list[tuple[str, str]]  # level 1: the day in broad strokes, (HH:MM, activity)
    blocks: list[PlanItem] = field(default_factory=list)  # level 2: about an hour each
    # yesterday's last activity, when it ran to midnight and today's first block goes on with it
    # (a night's work): its blocks, their minutes counted back from midnight (negative)
    carried: list[PlanItem] = field(default_factory=list)
    # how many times it was changed in place (mind/planning.py says so): its encoding is kept
    # while this holds still, so an agent whose action changes does not re-encode its plan
    # (a class default, not a field: the plan's fields are what its JSON holds)
    edits: ClassVar[int] = 0

    def edited(self) -> None:
        """Say the plan was changed in place (a block decomposed, the day re-planned)."""
        self.edits += 1

    def block_at(self, minute: int) -> PlanItem | None:
        for b in self.blocks:
            if b.start <= minute < b.end:
                return b
        return None

    def index(self, block: PlanItem) -> int:
        return next(i for i, b in enumerate(self.blocks) if b is block)

    def minute_in(self, t: datetime) -> int:
        """`t` as minutes from the start of this plan's day (negative before it, past DAY after)."""
        return (t.date() - self.date).days * DAY + minute_of(t)

    def block_during(self, start: datetime, end: datetime) -> PlanItem | None:
        """The block an action from `start` to `end` is in: the one holding its first minute on
        this plan's day; one begun the day before and still going (asleep since last night) is in
        the day's first block. None when it is not on this day."""
        first = self.minute_in(start)
        if first < 0 < self.minute_in(end):
            first = 0
        return self.block_at(first)

    def actions_during(self, block: PlanItem, start: datetime, end: datetime) -> list[PlanItem]:
        """The actions of `block` that an action from `start` to `end` covers: the one holding its
        first minute and those after it that it runs over (the same action in a row is done as one)."""
        first = self.minute_in(start)
        last = max(self.minute_in(end), first + 1)
        return [a for a in block.actions or [] if a.start < last and first < a.end]

    def span(self, block: PlanItem) -> list[PlanItem]:
        """The blocks of the one activity `block` is part of: it and its neighbours with the same
        activity and place, back to back (and yesterday's, when the day began with it)."""
        i = j = self.index(block)
        same = lambda b: b.activity == block.activity and b.place == block.place  # noqa: E731
        while i > 0 and same(self.blocks[i - 1]) and self.blocks[i - 1].end == self.blocks[i].start:
            i -= 1
        while j + 1 < len(self.blocks) and same(self.blocks[j + 1]) and self.blocks[j].end == self.blocks[j + 1].start:
            j += 1
        before = self.carried if i == 0 and self.carried and same(self.carried[-1]) and self.blocks[0].start == 0 else []
        return [*before, *self.blocks[i:j + 1]]

    def spans(self) -> list[list[PlanItem]]:
        """The day as activities (spans of blocks), in order."""
        out: list[list[PlanItem]] = []
        for b in self.blocks:
            if out and out[-1][-1].activity == b.activity and out[-1][-1].place == b.place \
                    and out[-1][-1].end == b.start:
                out[-1].append(b)
            else:
                out.append([b])
        return out

    def to_json(self) -> dict:
        return {"date": self.date.isoformat(), "wake_up_hour": self.wake_up_hour,
                "items": [list(i) for i in self.items], "blocks": [b.to_json() for b in self.blocks],
                "carried": [b.to_json() for b in self.carried]}

    def tail(self) -> list[PlanItem]:
        """The day's last activity if it runs to midnight and is not sleep, its minutes counted
        back from midnight: what a next day beginning with the same activity goes on with."""
        spans = self.spans()
        if not spans or spans[-1][-1].end != DAY or spans[-1][0].activity == SLEEPING:
            return []
        return [PlanItem(b.start - DAY, b.minutes, b.activity, b.address,
                         [PlanItem(a.start - DAY, a.minutes, a.activity, a.address) for a in b.actions]
                         if b.actions is not None else None, b.place) for b in spans[-1]]

    @classmethod
    def from_json(cls, d: dict) -> "DayPlan":
        items = [tuple(i) if isinstance(i, (list, tuple)) else ("", str(i)) for i in d["items"]]  # str: older saves
        return cls(date.fromisoformat(d["date"]), d["wake_up_hour"], items, [PlanItem.from_json(b) for b in d["blocks"]],
                   [PlanItem.from_json(b) for b in d.get("carried", [])])
