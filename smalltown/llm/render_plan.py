"""The planning questions' extra prompt parts (llm/tasks/plan.py): the day's plan and schedule with
an example from the person's own usual day, a decomposition with the blocks around it, and the
places found unavailable."""

from __future__ import annotations

import json
import re

from smalltown.llm.examples import slot
from smalltown.llm.render_parts import block, bullets, extra, hhmm_end, quote
from smalltown.llm.tasks import SLEEPING, ChoosePlace, DailyPlan, Decompose, HourlySchedule


def own_example(t: DailyPlan | HourlySchedule) -> str:
    """An example drawn from the person's own usual day (a small model follows a concrete example
    better than a shape, and copying this one only keeps the person to its own routine); "" when
    the person has no routine."""
    items = [i for i in t.persona.routine if i.activity != SLEEPING]
    if isinstance(t, HourlySchedule):
        items = [i for i in items if i.start >= t.from_time] or items
        night = [{"start": "00:00", "minutes": int(items[0].start[:2]) * 60 + int(items[0].start[3:]),
                  "activity": SLEEPING, "place": t.persona.home}] if items and not t.from_time else []
        shown = {"blocks": night + [{"start": i.start, "minutes": i.minutes, "activity": i.activity,
                                     "place": i.place or t.persona.home} for i in items[:2]] + [slot("...")]}
    else:
        shown = {"wake_up_hour": int(items[0].start[:2]) if items else 7,
                 "items": [{"time": i.start, "activity": i.activity} for i in items[:3]] + [slot("...")]}
    return (f"Example from {t.persona.name}'s usual day (follow its shape; plan today as it really goes): "
            + re.sub(r'"\\u0000(.*?)\\u0000"', r"\1", json.dumps(shown, ensure_ascii=False))) if items else ""


def travel_part(t: DailyPlan | HourlySchedule) -> str:
    """The towns known and today's reasons to go to one (a world of several towns, travel on);
    "" otherwise, so every other world's prompt is what it was."""
    if not t.towns:
        return ""
    name = t.persona.name
    lines = [f"Towns {name} knows (a trip to a town goes to its square and back home):"]
    lines += [f"- {w.name} (square: {w.square}): " + (f"{name}'s own town" if w.own else f"{_walk(w.minutes)} from home")
              for w in t.towns]
    if not t.trips:
        return "\n".join(lines + [f"No reason for {name} to go to another town today."])
    lines.append(f"Reasons {name} may make a trip today (a trip is one block at that place, the walk there in it):")
    for r in t.trips:
        if r.why == "market":
            what = f"the market at {r.place} in {r.town}, open {r.start}-{r.end}"
        elif r.why == "people":
            what = f"people {name} knows live in {r.town}: {', '.join(r.people)} (meet at {r.place}, {r.start}-{r.end})"
        elif r.why == "preaching":
            what = (f"to win people in {r.town} over to {r.doctrine} ({name} seeks to spread it): at {r.place}, "
                    f"{r.start}-{r.end}")
        else:
            what = f"the gathering of {r.doctrine} believers ({name} is one) at {r.place} in {r.town}, {r.start}-{r.end}"
        lines.append(f"- {what}; {_walk(r.minutes)} from home")
    return "\n".join(lines)


def _walk(minutes: int) -> str:
    return f"{minutes} minutes' walk" if minutes < 120 else f"{minutes / 60:.1f} hours' walk"


@extra("daily_plan")
def _daily(t: DailyPlan) -> dict[str, str]:
    return {"own_example": own_example(t), "travel_part": travel_part(t)}


@extra("hourly_schedule")
def _hourly(t: HourlySchedule) -> dict[str, str]:
    return {"own_example": own_example(t), "travel_part": travel_part(t), "start_phrase": f"{t.from_time} (now)" if t.from_time else
            f"00:00 (the whole day: {t.persona.name} wakes up at {t.wake_up_hour:02d}:00)",
            "reaction_line": f"{t.persona.name} first reacts: {quote(t.reaction)}" if t.reaction else "",
            "sleep_line": f"Where {t.persona.name} sleeps: " + ", ".join(t.sleep_places) if t.sleep_places else ""}


@extra("decompose")
def decompose(t: Decompose) -> dict[str, str]:
    """The activity's neighbours in the schedule (and, in a world without an economy, no goods)."""
    return {**unavailable(t),
            "before_line": f"before: {block(t.before)}" if t.before else "before: (the start of the day)",
            "after_line": f"after: {block(t.after)}" if t.after else "after: (the end of the day)",
            "activity_end": hhmm_end(t.activity_start, t.activity_minutes), "economy_part": "", "economy_task": ""}


@extra("choose_place")
def unavailable(t: ChoosePlace | Decompose) -> dict[str, str]:
    """Places found closed or taken: a line only when there are some (else the prompt is as before)."""
    return {"unavailable_line": "Found closed or taken just now (unavailable for a while):\n"
            + bullets(t.unavailable, plain=True) if t.unavailable else ""}
