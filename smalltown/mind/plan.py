"""Plans: the day in broad strokes and its blocks, as stored in the agent's state."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass
class PlanItem:
    start: int  # minute of the day
    minutes: int
    activity: str

    @property
    def end(self) -> int:
        return self.start + self.minutes


@dataclass
class DayPlan:
    date: str  # ISO date
    wake_up_hour: int
    items: list[str]  # broad strokes (level 1)
    blocks: list[PlanItem] = field(default_factory=list)  # about an hour each (level 2)

    def block_at(self, minute: int) -> PlanItem | None:
        for b in self.blocks:
            if b.start <= minute < b.end:
                return b
        return None

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict) -> "DayPlan":
        return cls(d["date"], d["wake_up_hour"], list(d["items"]), [PlanItem(**b) for b in d["blocks"]])


def normalise_blocks(raw: list[tuple[int, int, str]], wake_minute: int) -> list[PlanItem]:
    """Sleep until waking, then the answered blocks in order, clipped so they never overlap and
    padded with sleep to midnight: a plan always covers the whole day, whatever the answer."""
    blocks = [PlanItem(0, wake_minute, "sleeping")] if wake_minute > 0 else []
    t = wake_minute
    for start, minutes, activity in sorted(raw, key=lambda b: b[0]):
        start = max(start, t)
        end = min(start + minutes, 24 * 60)
        if end - start >= 5:
            if start > t:  # a gap: stretch the previous block over it
                blocks[-1].minutes += start - t
            blocks.append(PlanItem(start, end - start, activity))
            t = end
    if t < 24 * 60:
        if blocks and blocks[-1].activity == "sleeping":
            blocks[-1].minutes += 24 * 60 - t
        else:
            blocks.append(PlanItem(t, 24 * 60 - t, "sleeping"))
    return blocks
