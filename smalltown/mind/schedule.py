"""What the day's plan and its re-plans share: the day as a task names it, a span of blocks as
a task shows it, the inner voices that still stand, yesterday as the daily plan is told it, an
answer's blocks as raw spans, and the schedule remembered."""

from __future__ import annotations

from datetime import date, datetime, time, timedelta
from typing import TYPE_CHECKING

from smalltown.lang import gerund, hhmm
from smalltown.llm.tasks import SLEEPING, Block, Record
from smalltown.mind import importance
from smalltown.mind.records import record
from smalltown.state.plan import DayPlan, PlanItem

if TYPE_CHECKING:
    from smalltown.mind.core import MindCore


def day_text(now: datetime) -> str:
    return now.strftime("%A %B %-d, %Y")


def as_block(span: list[PlanItem]) -> Block:
    """A span of blocks (one activity) as a task shows it."""
    return Block(start=hhmm(span[0].start), minutes=max(5, min(1440, span[-1].end - span[0].start)),
                 activity=span[0].activity[:60] or "-", place=span[0].place)


def standing_intentions(mind: "MindCore", now: datetime) -> list[Record]:
    """Inner voices whispered today (or since yesterday morning): intentions that still stand."""
    since = (now - timedelta(days=1)).date()
    return [Record(id=i.id, time=i.time, kind="reflection", text=i.text, score=1.0)
            for i in mind.state.intentions if i.time.date() >= since]


def yesterday(mind: "MindCore", now: datetime) -> list[Record]:
    """What happened yesterday, as the daily plan is told it (SPEC 4): the day as lived (the
    plan's activities as they ended up), the conversations had, and what stood out."""
    day: date = (now - timedelta(days=1)).date()
    out: list[Record] = []
    plan = mind.state.plan
    if plan is not None and plan.date == day:
        base = datetime.combine(day, time())
        for span in plan.spans():
            if span[0].activity == SLEEPING:
                continue
            where = f" at {span[0].place}" if span[0].place else ""
            out.append(Record(time=base + timedelta(minutes=span[0].start), kind="plan", score=2.0,
                              text=f"{mind.name} was {gerund(span[0].activity)}{where}"))
    seeds = mind.memory.recent(len(mind.memory))[:1]  # the description's phrases: known, not happened
    born = seeds[0].created if seeds else None
    mems = [m for m in mind.memory.recent(400) if m.created.date() == day and m.created != born]
    chats = [m for m in mems if m.kind == "chat"]
    notable = sorted((m for m in mems if m.kind in ("observation", "reflection") and m.importance >= 6),
                     key=lambda m: (-m.importance, m.id))[:5]
    out += [record(mind.lore, m, 1.0 + m.importance / 10) for m in chats[-6:]]
    out += [record(mind.lore, m, m.importance / 10) for m in sorted(notable, key=lambda m: m.id)]
    return sorted(out, key=lambda r: r.time)


def raw_blocks(mind: "MindCore", blocks: list[Block], from_minute: int,
               allowed: frozenset[str] | None = None) -> list[tuple[int, int, str, str]]:
    """An answer's blocks as (start minute, minutes, activity, place): from `from_minute` on, each
    at a place the agent knows (and, travel off, may go to: `allowed`), else ""."""
    raw = []
    for b in blocks:
        h, m = map(int, b.start.split(":"))
        if h * 60 + m < from_minute:
            mind.note(f"block at {b.start} is before {hhmm(from_minute)}: moved to it")
        place = b.place if b.place in mind.state.known.tree and (allowed is None or b.place in allowed) else ""
        raw.append((max(h * 60 + m, from_minute), b.minutes, b.activity, place))
    return raw


def remember_schedule(mind: "MindCore", plan: DayPlan, title: str, now: datetime, evidence: list[int],
                       start: int = 0) -> None:
    lines = [f"{hhmm(s[0].start)} {s[0].activity}" + (f" at {s[0].place}" if s[0].place else "")
             for s in plan.spans() if s[-1].end > start]
    mind.state.schedule_memory = importance.remember(mind, "plan", [f"{title}: " + "; ".join(lines)], now, evidence)[0].id
