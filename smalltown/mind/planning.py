"""Planning (SPEC 4): the day in broad strokes, the schedule of blocks with their places, and each
block decomposed just in time into 5-15 minute actions, each at its own object.

A block is decomposed with its day in view: the activities before and after it, what is already
done of its activity (a long activity is several hour-long blocks: one span), and how much of
it is left. Re-planning keeps what was lived and redoes the rest from the moment.
"""

from __future__ import annotations

from datetime import datetime, time, timedelta
from typing import TYPE_CHECKING

from smalltown.lang import gerund, hhmm
from smalltown.llm.tasks import SLEEPING, DailyPlan, Decompose, Done, HourlySchedule, NextAction
from smalltown.mind import importance, summary, trade, trips
from smalltown.mind.awareness import unavailable_now
from smalltown.mind.commitments import decision_input, narrowed, promise_inputs
from smalltown.mind.places import choose_place, covered, gatherings_on
from smalltown.mind.plan import fit_actions, normalise_blocks
from smalltown.mind.records import record
from smalltown.mind.replan import replan
from smalltown.mind.schedule import (as_block, day_text, raw_blocks, remember_schedule, standing_intentions,
                                     yesterday)
from smalltown.state.agent import Action, Pending
from smalltown.state.plan import DayPlan, PlanItem, minute_of
from smalltown.world.model import address, pretty

if TYPE_CHECKING:
    from smalltown.mind.core import MindCore

__all__ = ["action_at", "as_block", "hhmm", "next_action", "plan_day", "replan", "standing_intentions", "start", "take",
           "unplanned", "yesterday"]
DONE_SHOWN = 6  # the latest actions of an activity a decomposition is shown
RATE_PACKED = 12  # memories rated in a decomposition's answer at most (the rest wait for the next settle)
WINDOW = 120  # minutes of one activity decomposed at a time (its hour-long blocks, two at most)


def _midnight(now: datetime) -> datetime:
    return datetime.combine(now.date(), time())


# --- the day ------------------------------------------------------------------------------------


def plan_day(mind: "MindCore", now: datetime) -> DayPlan:
    """The morning: refresh the summary description, plan the day, write its schedule."""
    importance.settle(mind)
    summary.refresh(mind, now)
    date_text = day_text(now)
    extra = trips.planning_inputs(mind, now)  # (first: a trip's place joins the known tree)
    places = trips.known_places(mind)
    context = mind.retrieve(f"{mind.name}'s plans, appointments and events on {date_text}", now,
                            mind.settings.plan_context_k, "plan")
    gatherings = gatherings_on(mind, now.date())
    intentions = standing_intentions(mind, now)
    daily = mind.ask(DailyPlan(persona=mind.persona, now=now, known_places=places, yesterday=yesterday(mind, now),
                               context=context, gatherings=gatherings, intentions=intentions,
                               goal=mind.state.goal, **extra))
    made = [mind.asker.last_ref]  # the blocks' makers: the day in broad strokes, then its schedule
    items = [(s.time, s.activity) for s in daily.items]
    level1 = importance.remember(mind, "plan", [f"{mind.name}'s plan for {date_text}: wake up at {daily.wake_up_hour}:00, "
                                                "then " + "; ".join(f"{t} {a}" for t, a in items)], now)
    hourly = mind.ask(narrowed(mind, HourlySchedule(
        persona=mind.persona, now=now, wake_up_hour=daily.wake_up_hour, daily_plan=daily.items, known_places=places,
        gatherings=gatherings, intentions=intentions, decision=decision_input(mind, acting=True),
        promises=promise_inputs(mind, now), goal=mind.state.goal, sleep_places=list(mind.spec.sleep_places),
        **extra)))
    made.append(mind.asker.last_ref)
    raw = raw_blocks(mind, hourly.blocks, 0, trips.allowed(mind))
    # the day from midnight: sleep (or a night's work) as the schedule gives it; before its first
    # block, asleep
    first = min((r[0] for r in raw), default=daily.wake_up_hour * 60)
    blocks = normalise_blocks(raw, 0, sleep_until=first, home=mind.persona.home)
    for b in blocks:
        b.calls = list(made)
    carried = mind.state.plan.tail() if mind.state.plan is not None else []
    plan = DayPlan(now.date(), daily.wake_up_hour, items, blocks, carried)
    remember_schedule(mind, plan, f"{mind.name}'s schedule for {date_text}", now, [level1[0].id])
    return plan


# --- the action now -----------------------------------------------------------------------------


def action_at(mind: "MindCore", now: datetime, current: str) -> tuple[str, str, datetime, dict | None, list[dict]]:
    """(activity, object address, until when, its economy op or None, the calls that decided it:
    its block's, then its own) for `now`, from today's plan (made if need be)."""
    if mind.state.plan is None or mind.state.plan.date != now.date():
        mind.state.plan = plan_day(mind, now)
    plan = mind.state.plan
    minute = minute_of(now)
    block = plan.block_at(minute)
    assert block is not None  # normalise_blocks covers the whole day
    doing = mind.state.action
    was = plan.block_at(minute_of(doing.start)) if doing and doing.start.date() == now.date() else None
    if block.actions is None:
        if block.activity == SLEEPING or block.minutes <= 15 or block.address:
            with mind.asker.trail() as placed:
                where = block.address or _object_for(mind, block, current)
            block.actions = [PlanItem(block.start, block.minutes, block.activity, where, calls=placed)]
            plan.edited()
            if was is not block:
                importance.settle_if_due(mind, now)
        else:
            _decompose(mind, block, now, current)  # rates what is waiting, in the same call
            importance.settle(mind, rated_only=True)
    elif was is not block:
        importance.settle_if_due(mind, now)  # a new block: a good moment to file what was noted
    actions = block.actions
    i = next((k for k, a in enumerate(actions) if a.start <= minute < a.end), len(actions) - 1)
    sub = actions[i]
    end = sub.end
    while i + 1 < len(actions) and actions[i + 1].activity == sub.activity and actions[i + 1].address == sub.address \
            and not actions[i].op:  # (an action doing an economy op ends with it)
        i += 1  # the same action again: one action, longer
        end = actions[i].end
    calls = block.calls + [c for c in sub.calls if c not in block.calls]
    return sub.activity, sub.address, _midnight(now) + timedelta(minutes=max(end, minute + 1)), actions[i].op, calls


def _object_for(mind: "MindCore", block: PlanItem, current: str) -> str:
    """Where a block that is not decomposed (sleep, a short block) is done: in its place, the
    arena and the object chosen (SPEC 7); sleep goes on in the bed it started in."""
    a = mind.state.action
    if block.activity == SLEEPING and a is not None and a.asleep and a.address:
        return a.address
    out = unavailable_now(mind, block_time(mind, block))
    known = block.place in mind.state.known.tree and not (out and covered(mind.state.known, out, block.place))
    return choose_place(mind.asker, mind.name, mind.persona, mind.state.known, block.activity, current,
                        mind.state.place_answers, sector=block.place if known else "",
                        now=block_time(mind, block), unavailable=out, beds=mind.spec.beds, allowed=trips.allowed(mind))


def block_time(mind: "MindCore", block: PlanItem) -> datetime:
    base = datetime.combine(mind.state.plan.date, time()) if mind.state.plan else datetime(2000, 1, 1)
    return base + timedelta(minutes=block.start)


def _decompose(mind: "MindCore", block: PlanItem, now: datetime, current: str) -> None:
    """Just in time: this block and, when the activity goes on into the next one, that one too
    (at most WINDOW minutes of it), into 5-15 minute actions, each at an object of its place,
    seeing the day around the activity and what is already done of it."""
    plan = mind.state.plan
    assert plan is not None
    out_now = unavailable_now(mind, now)
    closed = bool(out_now) and block.place in mind.state.known.tree and covered(mind.state.known, out_now, block.place)
    placed: list[dict] = []  # the calls that chose its place (when it had none it knew)
    if block.place not in mind.state.known.tree or closed:
        with mind.asker.trail() as placed:
            sector = choose_place(mind.asker, mind.name, mind.persona, mind.state.known, block.activity, current,
                                  mind.state.place_answers, levels=("sector",), now=now, unavailable=out_now,
                                  allowed=trips.allowed(mind))
        for b in [block] if closed else plan.span(block):  # (closed: this block only; later, it may be open)
            b.place = sector
        plan.edited()
    span = plan.span(block)
    first, last = span[0], span[-1]
    done: list[Done] = []
    for a in (a for b in span if b.start < block.start for a in (b.actions or [])):
        if done and done[-1].activity == a.activity and done[-1].object == _short(a.address):
            continue  # the same action going on: one line
        done.append(Done(time=hhmm(a.start), activity=a.activity, object=_short(a.address)))
    done = done[-DONE_SHOWN:]
    i = plan.index(first) if any(b is first for b in plan.blocks) else -1
    j = plan.index(last)
    before = as_block(plan.span(plan.blocks[i - 1])) if i > 0 else None
    after = as_block(plan.span(plan.blocks[j + 1])) if j + 1 < len(plan.blocks) else None
    objects = [f"{arena}: {obj}" for arena, objs in mind.state.known.tree[block.place].items() for obj in objs]
    rate = importance.unrated(mind, RATE_PACKED)
    unavailable = [o for o in objects if covered(mind.state.known, out_now, block.place, *o.split(": ", 1))] \
        if out_now else []
    window = [block]  # this block, and the next of the same activity while they fit WINDOW
    for b in span:
        if b.start == window[-1].end and b.actions is None and b.end - block.start <= WINDOW:
            window.append(b)
    part = PlanItem(block.start, window[-1].end - block.start, block.activity, place=block.place)
    inputs = dict(persona=mind.persona, now=now, activity=block.activity, start=hhmm(block.start),
                  minutes=part.minutes, place=block.place, objects=objects,
                  activity_start=hhmm(first.start), activity_minutes=last.end - first.start + last.runs_on,
                  done=done, minutes_left=last.end - part.end + last.runs_on, before=before, after=after,
                  gatherings=gatherings_on(mind, now.date()), intentions=standing_intentions(mind, now),
                  rate=rate, unavailable=unavailable, decision=decision_input(mind, acting=True),
                  promises=promise_inputs(mind, now),
                  beds=[o for o in objects if address(block.place, *o.split(": ", 1)) in mind.spec.beds])
    task = trade.decompose(mind, block.place, inputs) if mind.market else Decompose(**inputs)
    out = mind.ask(narrowed(mind, task))
    made = [*placed, mind.asker.last_ref]
    rated = mind.asker.last_task.rate  # those the prompt had room for
    if not importance.packed(mind, rated, out.ratings) and rated:
        mind.note(f"{len(out.ratings)} ratings for {len(rated)} memories; they are asked again")
    default = next((a.address for b in reversed(span) for a in reversed(b.actions or [])), "")
    if not default:
        default = _full(block.place, objects[0]) if objects else current
    raw = []
    for a in out.actions:
        where = _full(block.place, a.object) if a.object in objects else ""
        if not where:
            mind.note(f"object {a.object!r} is not at {block.place}; used the previous one")
        elif a.state.strip():  # packed: what the object does meanwhile, asked no more
            mind.state.object_states.setdefault(f"{where.rsplit(':', 1)[-1]}\x1f{a.activity}", a.state.strip())
        raw.append((a.activity, a.minutes, where or (raw[-1][2] if raw else default)))
    actions, fixed = fit_actions(raw, part, default)
    if fixed:
        mind.note(fixed)
    if mind.market:
        trade.attach(task, out.actions, actions)
    for b in window:  # each block gets the actions in its time; one crossing the hour is cut in two
        b.actions = [PlanItem(max(a.start, b.start), min(a.end, b.end) - max(a.start, b.start), a.activity, a.address,
                              op=a.op if a.end <= b.end else None,  # (an op goes with the piece that ends it)
                              calls=list(made))
                     for a in actions if a.start < b.end and b.start < a.end]
    plan.edited()
    steps = "; ".join(f"{a.activity} ({a.minutes} min)" for a in actions)
    # rated with the next batch: nothing cites this record at once
    # (its facts are not learned before it is filed: a plan is not news)
    importance.queue(mind, Pending("plan", f"From {hhmm(part.start)} to {hhmm(part.end)} {mind.name} will: {steps}",
                                   now, [mind.state.schedule_memory] if mind.state.schedule_memory else []))


def _short(addr: str) -> str:
    """"arena: object" of an object address."""
    return pretty(":".join(addr.split(":")[1:])) if addr else ""


def _full(sector: str, option: str) -> str:
    arena, _, obj = option.partition(": ")
    return address(sector, arena, obj)


# --- the no-planning ablation -------------------------------------------------------------------


def unplanned(mind: "MindCore", now: datetime, current: str) -> tuple[Action, bool]:
    """The next action from the moment only."""
    importance.settle(mind)
    recent = [record(mind.lore, m, i / 10) for i, m in enumerate(mind.memory.recent(10), 1)]
    out = mind.ask(NextAction(persona=mind.persona, now=now,
                              status=gerund(mind.state.action.activity) if mind.state.action else "just waking up",
                              recent=recent, known_places=list(mind.state.known.tree)))
    calls = [mind.asker.last_ref]
    end = now + timedelta(minutes=out.minutes)
    if mind.state.action and mind.state.action.activity == out.activity:
        mind.state.action.end = end
        return mind.state.action, False
    with mind.asker.trail() as placed:
        where = choose_place(mind.asker, mind.name, mind.persona, mind.state.known, out.activity, current,
                             mind.state.place_answers, now=now, unavailable=unavailable_now(mind, now),
                             allowed=trips.allowed(mind))
    return start(mind, out.activity, where, now, end, calls=calls + placed), True


# --- the action taken up ------------------------------------------------------------------------


def next_action(mind: "MindCore", now: datetime, current: str) -> tuple[Action, bool]:
    """The action for `now`, and whether it is new (False: the same action goes on)."""
    if not mind.settings.planning:
        return unplanned(mind, now, current)
    return take(mind, *action_at(mind, now, current), now)


def take(mind: "MindCore", activity: str, address: str, end: datetime, op: dict | None, calls: list[dict],
         now: datetime) -> tuple[Action, bool]:
    """The plan's action for `now` taken up (and whether it is new: False, the same action goes on)."""
    a = mind.state.action
    if a and a.activity == activity and a.address == address and not op and not a.op:
        mind.state.action = Action(activity, address, a.start, end, calls=a.calls)
        return mind.state.action, False
    return start(mind, activity, address, now, end, op, calls), True


def start(mind: "MindCore", activity: str, address: str, now: datetime, end: datetime,
          op: dict | None = None, calls: list[dict] = ()) -> Action:
    mind.state.action = Action(activity, address, now, end, op, list(calls))
    if mind.settings.observation_memory:
        importance.note(mind, "observation", f"{mind.name} is {gerund(activity)}", now)
    return mind.state.action
