"""Plans at three levels (SPEC 4): the day in broad strokes, hour-long blocks, and 5-15 minute
actions decomposed just in time. All three are stored in the memory stream as well."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

DAY = 24 * 60
SLEEPING = "sleeping"


@dataclass
class PlanItem:
    start: int  # minute of the day
    minutes: int
    activity: str
    address: str = ""  # where it is done, once chosen (blocks)
    actions: list["PlanItem"] | None = None  # its 5-15 minute actions, once decomposed (blocks)

    @property
    def end(self) -> int:
        return self.start + self.minutes

    @classmethod
    def from_json(cls, d: dict) -> "PlanItem":
        actions = d.get("actions")
        return cls(d["start"], d["minutes"], d["activity"], d.get("address", ""),
                   [cls.from_json(a) for a in actions] if actions is not None else None)


@dataclass
class DayPlan:
    date: str  # ISO date
    wake_up_hour: int
    items: list[str]  # level 1: the day in broad strokes
    blocks: list[PlanItem] = field(default_factory=list)  # level 2: about an hour each

    def block_at(self, minute: int) -> PlanItem | None:
        for b in self.blocks:
            if b.start <= minute < b.end:
                return b
        return None

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict) -> "DayPlan":
        return cls(d["date"], d["wake_up_hour"], list(d["items"]), [PlanItem.from_json(b) for b in d["blocks"]])


def normalise_blocks(raw: list[tuple[int, int, str]], start: int, before: list[PlanItem] | None = None,
                     sleep_until: int = 0) -> list[PlanItem]:
    """The blocks kept from `before`, then the answered ones from `start` on: sorted, clipped so
    they never overlap, gaps filled by stretching the previous block, long blocks cut into
    hour-long ones, sleep to midnight. A plan always covers the whole day, whatever the answer."""
    blocks = list(before or [])
    if not blocks and sleep_until > 0:
        blocks.append(PlanItem(0, sleep_until, SLEEPING))
    t = blocks[-1].end if blocks else 0
    t = max(t, start)
    for b_start, minutes, activity in sorted(raw, key=lambda b: b[0]):
        b_start = max(b_start, t)
        end = min(b_start + minutes, DAY)
        if end - b_start < 5:
            continue
        if b_start > t and blocks:  # a gap: the previous activity goes on over it
            _extend_last(blocks, b_start)
        blocks.extend(_hours(b_start, end, activity))
        t = end
    if t < DAY:
        if blocks and blocks[-1].activity == SLEEPING:
            blocks[-1].minutes += DAY - t
        else:
            blocks.append(PlanItem(t, DAY - t, SLEEPING))
    return blocks


def _extend_last(blocks: list[PlanItem], to: int) -> None:
    """Stretch the last block to end at `to`, cut into hours again if it grew long."""
    last = blocks.pop()
    if last.activity == SLEEPING or last.address or last.actions is not None:
        last.minutes = to - last.start  # already under way: just longer
        blocks.append(last)
    else:
        blocks.extend(_hours(last.start, to, last.activity))


def _hours(start: int, end: int, activity: str) -> list[PlanItem]:
    """Cut a long block into hour-long ones (the last may run to 89 minutes); sleep stays whole."""
    if activity == SLEEPING or end - start < 90:
        return [PlanItem(start, end - start, activity)]
    out = []
    while end - start >= 90:
        out.append(PlanItem(start, 60, activity))
        start += 60
    out.append(PlanItem(start, end - start, activity))
    return out


def fit_actions(raw: list[tuple[str, int]], block: PlanItem) -> tuple[list[PlanItem], str]:
    """5-15 minute actions that exactly fill `block`, from the answer: each clamped to 5-15, the
    last ones trimmed or one more added so the sum is right. Returns the note of what was fixed
    ("" when the answer was usable as it was)."""
    notes = []
    out: list[PlanItem] = []
    t = block.start
    for activity, minutes in raw:
        m = max(5, min(15, minutes))
        if m != minutes:
            notes.append(f"{minutes} minutes clamped to {m}")
        m = min(m, block.end - t)
        if m < 5:
            _absorb(out, t, m, block.activity)
            notes.append("trimmed to fit the block")
            t += m
            break
        out.append(PlanItem(t, m, activity))
        t += m
        if t >= block.end:
            break
    while t < block.end:  # too short: go on with the block's own activity
        m = min(15, block.end - t)
        _absorb(out, t, m, block.activity)
        t += m
        notes.append("padded to fill the block")
    if raw and sum(m for _, m in raw) != block.minutes:
        notes.insert(0, f"actions summed to {sum(m for _, m in raw)} minutes, not {block.minutes}")
    return out, "; ".join(dict.fromkeys(notes))


def _absorb(out: list[PlanItem], t: int, m: int, activity: str) -> None:
    """Add `m` minutes at `t`: as an action of its own when it can be one (5+), else into the
    previous action, split in two if that would pass 15."""
    if m >= 5 or not out:
        out.append(PlanItem(t, m, activity))
        return
    last = out[-1]
    total = last.minutes + m
    if total <= 15:
        last.minutes = total
    else:
        last.minutes = total - 5
        out.append(PlanItem(last.end, 5, activity))
