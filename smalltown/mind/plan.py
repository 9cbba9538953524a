"""Plans at three levels (SPEC 4): the day in broad strokes, hour-long blocks, and 5-15 minute
actions decomposed just in time. All three are stored in the memory stream as well.

A long activity is cut into hour-long blocks, but stays one activity: its blocks follow each other
with the same activity and place (a `span`), and each block's decomposition sees what the
earlier ones already did, so nothing restarts on the hour."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime
from typing import ClassVar

from smalltown.world.model import DAY, SLEEPING

__all__ = ["DAY", "SLEEPING", "DayPlan", "PlanItem", "fit_actions", "minute_of", "normalise_blocks"]


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
        return d

    @classmethod
    def from_json(cls, d: dict) -> "PlanItem":
        actions = d.get("actions")
        address = d.get("address", "")
        items = [cls.from_json(a) for a in actions] if actions is not None else None
        for a in items or []:  # a save from before actions had their own objects
            a.address = a.address or address
        return cls(d["start"], d["minutes"], d["activity"], address, items,
                   d["place"] if "place" in d else address.split(":")[0], d.get("runs_on", 0), d.get("op"))


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


Raw = tuple[int, int, str, str]  # (start minute, minutes, activity, place)


def normalise_blocks(raw: list[Raw], start: int, before: list[PlanItem] | None = None,
                     sleep_until: int = 0, home: str = "") -> list[PlanItem]:
    """The blocks kept from `before`, then the answered ones from `start` on: sorted, clipped so
    they never overlap, gaps filled by stretching the previous block, long blocks cut into
    hour-long ones, sleep to midnight. A plan always covers the whole day, whatever the answer."""
    blocks = list(before or [])
    if not blocks and sleep_until > 0:
        blocks.append(PlanItem(0, sleep_until, SLEEPING, place=home))
    t = blocks[-1].end if blocks else 0
    t = max(t, start)
    for b_start, minutes, activity, place in sorted(raw, key=lambda b: b[0]):
        b_start = max(b_start, t)
        end = min(b_start + minutes, DAY)
        if end - b_start < 5:
            continue
        if b_start > t and blocks:  # a gap: the previous activity goes on over it
            _extend_last(blocks, b_start)
        elif b_start > t:  # nothing before it (a re-plan at midnight): asleep until it, as a day's plan is
            blocks.append(PlanItem(t, b_start - t, SLEEPING, place=home))
        blocks.extend(_hours(b_start, end, activity, place))
        if activity != SLEEPING and b_start + minutes > DAY:
            blocks[-1].runs_on = b_start + minutes - DAY  # a night's work: it goes on tomorrow
        t = end
    if t < DAY:
        if blocks and blocks[-1].activity == SLEEPING:
            blocks[-1].minutes += DAY - t
        else:
            blocks.append(PlanItem(t, DAY - t, SLEEPING, place=home))
    return blocks


def _extend_last(blocks: list[PlanItem], to: int) -> None:
    """Stretch the last block to end at `to`, cut into hours again if it grew long."""
    last = blocks.pop()
    if last.activity == SLEEPING or last.address or last.actions is not None:
        last.minutes = to - last.start  # already under way: just longer
        blocks.append(last)
    else:
        blocks.extend(_hours(last.start, to, last.activity, last.place))


def _hours(start: int, end: int, activity: str, place: str) -> list[PlanItem]:
    """Cut a long block into hour-long ones (the last may run to 89 minutes); sleep stays whole."""
    if activity == SLEEPING or end - start < 90:
        return [PlanItem(start, end - start, activity, place=place)]
    out = []
    while end - start >= 90:
        out.append(PlanItem(start, 60, activity, place=place))
        start += 60
    out.append(PlanItem(start, end - start, activity, place=place))
    return out


def fit_actions(raw: list[tuple[str, int, str]], block: PlanItem, default: str) -> tuple[list[PlanItem], str]:
    """5-15 minute actions (activity, minutes, object address) that exactly fill `block`, from the
    answer: each clamped to 5-15, the last ones trimmed or the block's activity added so the sum is
    right (at the last action's object, or `default`). Returns the note of what was fixed ("" when
    the answer was usable as it was)."""
    notes = []
    out: list[PlanItem] = []
    t = block.start
    for activity, minutes, address in raw:
        m = max(5, min(15, minutes))
        if m != minutes:
            notes.append(f"{minutes} minutes clamped to {m}")
        m = min(m, block.end - t)
        if m < 5:
            _absorb(out, t, m, block.activity, out[-1].address if out else default)
            notes.append("trimmed to fit the block")
            t += m
            break
        out.append(PlanItem(t, m, activity, address))
        t += m
        if t >= block.end:
            break
    while t < block.end:  # too short: go on with the block's own activity
        m = min(15, block.end - t)
        _absorb(out, t, m, block.activity, out[-1].address if out else default)
        t += m
        notes.append("padded to fill the block")
    if raw and sum(m for _, m, _ in raw) != block.minutes:
        notes.insert(0, f"actions summed to {sum(m for _, m, _ in raw)} minutes, not {block.minutes}")
    return out, "; ".join(dict.fromkeys(notes))


def _absorb(out: list[PlanItem], t: int, m: int, activity: str, address: str) -> None:
    """Add `m` minutes at `t`: as an action of its own when it can be one (5+), else into the
    previous action, split in two if that would pass 15."""
    if m >= 5 or not out:
        out.append(PlanItem(t, m, activity, address))
        return
    last = out[-1]
    total = last.minutes + m
    if total <= 15:
        last.minutes = total
    else:
        last.minutes = total - 5
        out.append(PlanItem(last.end, 5, activity, address))
