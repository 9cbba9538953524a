"""Planning answers: the day in broad strokes, the schedule of blocks with their places, and the
no-planning ablation's next action. All three read the same bent day (`day.plan`), so the
broad strokes, the schedule and a re-plan agree with each other without reading each other's
words: a schedule is rebuilt from typed inputs, never from the daily plan's prose."""

from __future__ import annotations

from smalltown.llm.tasks import (
    SLEEPING,
    DailyPlan,
    DailyPlanOut,
    HourlySchedule,
    HourlyScheduleOut,
    NextAction,
    NextActionOut,
    PlanStep,
)
from smalltown.scripted import day
from smalltown.scripted.commit import promise_labels
from smalltown.scripted.registry import answers
from smalltown.scripted.words import minute, minute_of
from smalltown.world.model import DAY


def _hhmm(m: int) -> str:
    return f"{m // 60 % 24:02d}:{m % 60:02d}"


def daily_plan(seed: int, task: DailyPlan) -> DailyPlanOut:
    """5-8 items from wake-up to bedtime: the routine's items, gatherings and intentions; the
    shortest routine items give way when there are too many, the longest split when too few."""
    bent = day.plan(seed, task.persona, task.now, task.known_places, task.gatherings, task.intentions,
                    trips=task.trips)
    rows = [[s.start, s.label.activity, s.label.source, s.minutes] for s in day.spans(bent.day, bent.wake, DAY)]
    merged: list[list] = []
    for r in rows:
        if merged and merged[-1][1] == r[1]:
            merged[-1][3] += r[3]
        elif r[3] >= 5 or not merged:
            merged.append(r)
        else:
            merged[-1][3] += r[3]
    while len(merged) > 8:
        plain = [i for i, r in enumerate(merged[:-1]) if r[2] in ("routine", "fill") and i > 0] \
            or list(range(1, len(merged) - 1))
        i = min(plain, key=lambda k: (merged[k][3], k))
        merged[i - 1][3] += merged[i][3]
        del merged[i]
    while len(merged) < 5:
        longest = max(range(len(merged)), key=lambda k: (merged[k][1] != SLEEPING, merged[k][3], -k))
        s, a, src, m = merged[longest]
        half = max(5, m // 2 // 5 * 5)
        if m - half < 5:  # nothing left to split: a broad stroke repeated five minutes on
            half = 5
        merged[longest][3] = half
        merged.insert(longest + 1, [s + half, a, src, max(5, m - half)])
    items = [PlanStep(time=_hhmm(min(s, DAY - 1)), activity=a) for s, a, _, _ in merged]
    return DailyPlanOut(wake_up_hour=min(12, max(3, bent.wake // 60)), items=items)


def hourly_schedule(seed: int, task: HourlySchedule) -> HourlyScheduleOut:
    """The whole day from midnight (or the rest of it from `from_time`) as blocks, each at a known
    place: the night's sleep, or a shift that runs past midnight, is a block like any other; a
    reaction first, at the place where the agent is."""
    p = task.persona
    known = task.known_places
    from_min = minute(task.from_time) if task.from_time else None
    here = task.place.split(":")[0].strip()
    if here not in known and task.done and (not known or task.done[-1].place in known):
        here = task.done[-1].place
    elif here not in known:
        here = ""
    bent = day.plan(seed, p, task.now, known, task.gatherings, task.intentions, from_min, task.reaction, here,
                    promise_labels(task.promises, from_min), task.trips)
    start = from_min if from_min is not None else 0
    blocks = day.to_blocks(day.spans(bent.day, start, DAY), p, known)
    # an activity that runs past midnight (a night's work) is given its whole length
    tomorrow = day.spans(day.routine_minutes(p), 0, DAY)
    if blocks and tomorrow and blocks[-1].activity == tomorrow[0].label.activity and blocks[-1].activity != SLEEPING:
        last = blocks[-1]
        blocks[-1] = last.model_copy(update={"minutes": min(1440, last.minutes + tomorrow[0].minutes)})
    return HourlyScheduleOut(blocks=blocks)


def next_action(seed: int, task: NextAction) -> NextActionOut:
    """The routine item at this moment, for as long as it lasts (at most two hours)."""
    minutes = day.routine_minutes(task.persona)
    now = minute_of(task.now)
    here = next(s for s in day.spans(minutes) if s.start <= now < s.end)
    left = here.end - now
    return NextActionOut(activity=here.label.activity, minutes=max(5, min(120, left)))


# the stand-in's answers (scripted/registry.py): the task, the run's seed
answers(DailyPlan)(lambda t, seed: daily_plan(seed, t))
answers(HourlySchedule)(lambda t, seed: hourly_schedule(seed, t))
answers(NextAction)(lambda t, seed: next_action(seed, t))
