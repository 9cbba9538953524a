"""Re-planning (SPEC 4): after a reaction, a conversation that changes the day, or an inner
voice, the rest of the day is planned again from the moment, keeping what was lived."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from smalltown.lang import hhmm
from smalltown.llm.tasks import HourlySchedule, PlanStep, Record
from smalltown.mind import importance, trips
from smalltown.mind.commitments import decision_input, narrowed, promise_inputs
from smalltown.mind.places import gatherings_on
from smalltown.mind.plan import normalise_blocks
from smalltown.mind.schedule import as_block, raw_blocks, remember_schedule, standing_intentions
from smalltown.state.plan import DayPlan, PlanItem, minute_of
from smalltown.world.model import pretty

if TYPE_CHECKING:
    from smalltown.mind.core import MindCore


def replan(mind: "MindCore", now: datetime, reason: list[Record], reaction: str = "", first_address: str = "",
           calls: list[dict] = ()) -> bool:
    """After a reaction, a conversation that changes the day, or an inner voice: the rest of the
    day is planned again from this moment (SPEC 4). False when there is no plan of today's to
    redo (planning ablated, or before the day's plan). `calls`: those that led to it (a reaction's)."""
    plan = mind.state.plan
    if not mind.settings.planning or plan is None or plan.date != now.date():
        return False
    importance.settle(mind)
    minute = minute_of(now)
    lived: list[PlanItem] = []
    for b in plan.blocks:
        if b.start >= minute:
            break
        kept = PlanItem(b.start, min(b.minutes, minute - b.start), b.activity, b.address, None, b.place,
                        calls=b.calls)
        if b.actions is not None:
            kept.actions = [PlanItem(a.start, min(a.minutes, minute - a.start), a.activity, a.address, calls=a.calls)
                            for a in b.actions if a.start < minute]
        if kept.minutes >= 5 or not lived:
            lived.append(kept)
        else:
            lived[-1].minutes += kept.minutes
            if lived[-1].actions and kept.actions:
                lived[-1].actions[-1].minutes += kept.minutes
    done = [as_block(s) for s in DayPlan(plan.date, plan.wake_up_hour, [], lived).spans()]
    extra = trips.planning_inputs(mind, now)  # (first: a trip's place joins the known tree)
    places = trips.known_places(mind)
    doing = mind.state.action
    hourly = mind.ask(narrowed(mind, HourlySchedule(
        persona=mind.persona, now=now, wake_up_hour=plan.wake_up_hour,
        daily_plan=[PlanStep(time=t if _hhmm_ok(t) else f"{plan.wake_up_hour:02d}:00", activity=a[:60] or "-")
                    for t, a in plan.items],
        known_places=places, gatherings=gatherings_on(mind, now.date()), intentions=standing_intentions(mind, now),
        from_time=hhmm(minute), done=done, reason=reason, reaction=reaction[:200],
        place=pretty(":".join(doing.address.split(":")[:2])) if doing and doing.address else "",
        decision=decision_input(mind, acting=True), promises=promise_inputs(mind, now), goal=mind.state.goal,
        sleep_places=list(mind.spec.sleep_places), **extra)))
    made = [*calls, mind.asker.last_ref]
    plan.blocks = normalise_blocks(raw_blocks(mind, hourly.blocks, minute, trips.allowed(mind)), minute, before=lived, home=mind.persona.home)
    for b in plan.blocks[len(lived):]:
        b.calls = list(made)
    if first_address:  # a reaction to an object: done at that object
        nxt = plan.block_at(minute)
        if nxt is not None and nxt.start == minute:
            nxt.address, nxt.place = first_address, first_address.split(":")[0]
            nxt.actions = [PlanItem(nxt.start, nxt.minutes, nxt.activity, first_address, calls=list(made))]
    plan.edited()
    remember_schedule(mind, plan, f"{mind.name}'s revised schedule from {hhmm(minute)}", now,
                       [r.id for r in reason if r.id] + ([schedule] if (schedule := mind.state.schedule_memory) else []),
                       minute)
    if mind.state.action is not None:
        mind.state.action.end = now  # decide again now
    return True


def _hhmm_ok(t: str) -> bool:
    return len(t) == 5 and t[2] == ":" and t[:2].isdigit() and t[3:].isdigit() and int(t[:2]) < 24 and int(t[3:]) < 60
