"""The controller's record in an agent's state (the data, `Decision` and `Commitment`, is
state/commitments.py): how they are shown to prompts as typed inputs when the broadcast is on,
and a commitment a line carries kept.

Written by mind/controller.py (decisions, at action boundaries and on observations weighed) and
mind/talk.py (a line's commitment); read by the talking and planning prompts (broadcast on) and
by sim/commitments.py, the model-free checker that marks each kept or broken by its deadline.
"""

from __future__ import annotations

from datetime import datetime, time
from typing import TYPE_CHECKING

from smalltown.llm.tasks import Block, Decided, Promise
from smalltown.state.commitments import Commitment

if TYPE_CHECKING:
    from smalltown.mind.core import MindCore


# --- shown to prompts (broadcast on) ---------------------------------------------------------------


def decision_input(mind: "MindCore", acting: bool = False) -> Decided | None:
    """The current decision as a prompt's input: only with the broadcast on. An acting prompt (a
    schedule, a decomposition) gets it only when it was decided on an observation: a decision
    that was the plan's own next action tells the plan nothing it does not hold."""
    d = mind.state.decision
    if not mind.settings.controller_broadcast or d is None or (acting and not d.observed):
        return None
    return Decided(intent=d.intent[:120], target=d.target, reason=d.reason[:200], time=d.time.strftime("%H:%M"))


def promise_inputs(mind: "MindCore", now: datetime) -> list[Promise]:
    """The agent's open commitments of today, as the planning and talking prompts get them: only
    with the broadcast on (off, what is said and what is planned do not share them)."""
    if not mind.settings.controller_broadcast:
        return []
    return [Promise(what=c.what, to=c.to, by=c.by.strftime("%H:%M"), where=c.where)
            for c in mind.state.commitments if c.by.date() == now.date()]


def plan_next(mind: "MindCore", now: datetime) -> Block | None:
    """The next activity of today's plan after the one under way (starting at least 15 minutes
    from now, at a place): what a speaker who hears the broadcast knows it will do."""
    plan = mind.state.plan
    if not mind.settings.controller_broadcast or plan is None or plan.date != now.date():
        return None
    minute = now.hour * 60 + now.minute
    for span in plan.spans():
        b = span[0]
        if b.start >= minute + 15 and b.place and b.start < 23 * 60:
            return Block(start=f"{b.start // 60:02d}:{b.start % 60:02d}",
                         minutes=max(5, min(1440, span[-1].end - b.start)), activity=b.activity[:60] or "-",
                         place=b.place)
    return None


def planned(mind: "MindCore", c: Commitment) -> bool:
    """Whether today's plan already has the agent at the promised place around its time."""
    return plan_place(mind, c.by) == c.where


def plan_place(mind: "MindCore", at: datetime) -> str:
    """The sector today's plan has the agent in at `at` ("": no plan of that day, or no place)."""
    plan = mind.state.plan
    if plan is None or plan.date != at.date():
        return ""
    b = plan.block_at(at.hour * 60 + at.minute)
    return b.place if b is not None else ""


def today_at(now: datetime, hhmm: str) -> datetime:
    h, m = map(int, hhmm.split(":"))
    return datetime.combine(now.date(), time(h, m))


# --- the bottleneck: what reaches the controller's prompts ------------------------------------------

_EMPTY = {"status": "nothing in particular", "place": "", "context": [], "last_talk": None, "news": [],
          "gatherings": [], "intentions": [], "feeling": None, "unavailable": []}


def narrowed(mind: "MindCore", task):
    """`task` with the inputs `controller_inputs` leaves out emptied (the default keeps them all:
    the task itself, unchanged). A left-out news list takes its facts with it."""
    keep = mind.settings.controller_inputs
    drop = {n: v for n, v in _EMPTY.items() if n not in keep and n in type(task).model_fields}
    if not drop:
        return task
    if "news" in drop and "facts" in type(task).model_fields:
        drop["facts"] = []
    return task.model_copy(update=drop)


# --- a commitment said -------------------------------------------------------------------------------


def asks_commitment(mind: "MindCore", listener: str, since: datetime) -> bool:
    """A line may carry a promise (`commitments` on): one per speaker per conversation."""
    return mind.settings.commitments and not any(c.to == listener and c.made == since for c in mind.state.commitments)


def commit(mind: "MindCore", listener: str, out, now: datetime) -> Commitment | None:
    """Keep the commitment a line carried, if it is one the agent can keep today (later than now,
    at a place it knows); the engine emits it as "committed"."""
    c = getattr(out, "commitment", None)
    if c is None:
        return None
    by = today_at(now, c.by)
    if by <= now or c.where not in mind.state.known.tree:
        mind.note(f"commitment {c.what!r} by {c.by} at {c.where!r} dropped: not later today at a known place")
        return None
    made = Commitment(c.what.strip(), listener, by, c.where, now)
    if any((o.what, o.to, o.by, o.where) == (made.what, listener, by, c.where) for o in mind.state.commitments):
        mind.note(f"commitment {c.what!r} by {c.by} at {c.where!r}: already promised, not counted again")
        return None
    mind.state.commitments.append(made)
    mind.state.outbox.append(("committed", f"{mind.name} promises {listener}: {made.what} at {made.where} by {c.by}",
                              {"to": listener, "what": made.what, "where": made.where, "by": c.by,
                               "planned": plan_place(mind, by)}))  # the speaker's own plan as it said it (eval/saydo.py)
    return made


def unplanned_promises(mind: "MindCore", since: datetime) -> bool:
    """After a talk, with the broadcast on: whether a promise made in it is not in today's plan yet
    (the day is then planned again with it)."""
    return mind.settings.controller_broadcast and any(
        c.made == since and not planned(mind, c) for c in mind.state.commitments)
