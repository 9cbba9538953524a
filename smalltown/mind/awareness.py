"""Action awareness (Project Sid's PIANO §2): each action's expected outcome (the agent
at its place, using its object) against what happened (the arena was closed, the object taken).
A mismatch is noted as the agent's own observation, the place is remembered as unavailable for a
while, and the controller is entered again: the rest of the block is planned anew now, with the
unavailable places given to the place choice and the decomposition as typed inputs. A promised
meeting whose other side is not there (sim/commitments.py) is noticed the same way.
In a world with an economy, an op the engine applies when its action ends (sim/economy.py) is
compared too: a give or a trade that did not happen (the other not there, or not holding what was
asked) is noted as an observation, and what came of the agent's recent gives and trades (done, or
not and why) is kept in the module's state: the next decompositions carry it as typed inputs
(`EconomyDecompose.outcomes`), so the agent can offer another person or other goods.

CLOCK: every tick, model-free. The engine reports an `Outcome` when an agent is stopped on the
way to or at its action's place (to the module's `each_tick` hook, mind/modules.py, run by
sim/phases.py); nothing is asked here (the re-plan's questions are asked when the agent next
decides, as any decision is).
READS: the current action, today's plan, the known tree, `unavailable`; an op's outcome.
WRITES: `unavailable` (address -> until when), one pending observation, the plan's current block
(cut at now; its rest undecomposed, in another sector when all of this one is unavailable), and
the action's end (now: decide again); the ops' outcomes (`AgentState.modules["action awareness"]`
= {"ops": [{"op": {...}, "done": bool, "why": str, "time": "YYYY-MM-DD HH:MM:SS"}, ...]}).
Setting: `action_awareness` (off: nothing is noticed; the agent stands there till its action ends,
and its next decomposition knows nothing of the op that did not happen).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from smalltown.llm.tasks import Op, OpOutcome
from smalltown.mind import importance, trips
from smalltown.mind.places import choose_place, covered
from smalltown.world.model import DAY, SLEEPING
from smalltown.state.agent import stamp
from smalltown.state.plan import PlanItem, minute_of
from smalltown.world.model import pretty

if TYPE_CHECKING:
    from smalltown.mind.core import MindCore

TAKEN_MINUTES = 30  # an object found taken is left alone this long (its user's end is not seen)
NAME = "action awareness"  # the module's name (mind/modules.py): its own state's key
# an op's outcome is kept this long, the newest OPS_KEPT at most: Sid's "soon" (a decomposition
# covers up to two hours, so the next one or two see it); a few lines of uncached prompt at most
OPS_KEPT_MINUTES = 180
OPS_KEPT = 4
PARTNERED = ("give", "trade")  # the ops another person has a part in: kept when done as well


@dataclass(frozen=True)
class Outcome:
    """What happened to an action, as the engine saw it."""

    address: str  # the action's object
    place: str  # what stopped it: the closed arena's address, or the taken object's
    closed: bool = False  # the arena was closed
    taken: bool = False  # the object was in use by as many as it holds
    until: datetime | None = None  # when it opens again (closed), if known


def expected(outcome: Outcome) -> bool:
    """The action went as expected: arrived, the place open, the object free."""
    return not (outcome.closed or outcome.taken)


def unavailable_now(mind: "MindCore", now: datetime) -> frozenset[str]:
    """The places the agent found closed or taken that it still holds so (empty: none)."""
    return frozenset(k for k, t in mind.state.unavailable.items() if t > now)


def notice(mind: "MindCore", outcome: Outcome, now: datetime) -> str:
    """Compare and, on a mismatch, remember and decide again. Returns the observation ("" when
    nothing is noticed: as expected, another action's outcome, or a place already known to be
    unavailable that the agent chose anyway)."""
    action = mind.state.action
    if expected(outcome) or action is None or action.address != outcome.address:
        return ""
    known = mind.state.unavailable
    for k in [k for k, t in known.items() if t <= now]:
        del known[k]  # (expired: the place may be open again)
    if outcome.place in known:
        return ""
    known[outcome.place] = outcome.until or now + timedelta(minutes=TAKEN_MINUTES)
    what = "closed" if outcome.closed else "taken"
    text = f"{mind.name} found {pretty(outcome.place)} {what} at {now:%H:%M}"
    if outcome.closed and outcome.until is not None:
        text += f" (it opens at {outcome.until:%H:%M})"
    importance.note(mind, "observation", text, now)  # rated with the re-plan's decomposition
    _again(mind, now, known[outcome.place])
    return text


def notice_absent(mind: "MindCore", other: str, place: str, now: datetime) -> str:
    """A meeting the agent promised, at its place and time, with the other not there (the person
    had left, or never came): remembered as its own observation, and the controller entered
    again (the action ends now: the next action is decided at the next tick, from a plan that no
    longer holds the promise). No question is asked here: a re-plan per missed meeting measured
    ~1.7k uncached tokens an agent-day over the issue's budget. Returns the observation ("" when
    nothing is noticed)."""
    action = mind.state.action
    if action is None or action.talking or action.asleep:
        return ""
    text = f"{mind.name} found {other} was not at {pretty(place)} at {now:%H:%M}"
    importance.note(mind, "observation", text, now)
    action.end = now  # decide again now
    return text


def notice_op(mind: "MindCore", op: Op, done: bool, why: str, now: datetime) -> str:
    """An op applied (`done`) or refused (`why`, the engine's reason) as its action ended: kept
    for the next decompositions (a give or trade done, any op that did not happen), the latter
    noted as the agent's own observation. Returns the observation ("" when nothing is noticed:
    off, done, or a gather, craft or deposit done)."""
    if not mind.settings.action_awareness or (done and op.op not in PARTNERED):
        return ""
    kept = [o for o, _ in _kept(mind, now)]
    kept.append({"op": op.model_dump(exclude_defaults=True), "done": done, "why": why, "time": stamp(now)})
    mind.state.modules.setdefault(NAME, {})["ops"] = kept[-OPS_KEPT:]
    if done:
        return ""
    text = f"{mind.name} tried to {op.label} at {now:%H:%M}, but it did not happen: {why}"
    importance.note(mind, "observation", text, now)
    return text


def op_outcomes(mind: "MindCore", now: datetime) -> list[OpOutcome]:
    """What came of the ops tried in the last OPS_KEPT_MINUTES, oldest first, as a question's
    typed inputs (none with the setting off: the agent does not know)."""
    if not mind.settings.action_awareness:
        return []
    return [OpOutcome(op=Op(**o["op"]), done=o["done"], why=o["why"], minutes_ago=ago) for o, ago in _kept(mind, now)]


def _kept(mind: "MindCore", now: datetime) -> list[tuple[dict, int]]:
    """The kept outcomes still within OPS_KEPT_MINUTES, with their age in minutes. One that does not
    read as written (a save edited by hand) is forgotten, as an expired one is: it is the module's
    own memory of its ops, not the town's record of them (the ledger and the `refused` events)."""
    out = []
    ops = mind.state.modules.get(NAME, {}).get("ops", [])
    for o in ops if isinstance(ops, list) else []:
        try:
            ago = int((now - datetime.fromisoformat(o["time"])).total_seconds() // 60)
            Op(**o["op"])
            ok = isinstance(o["done"], bool) and isinstance(o["why"], str)
        except (TypeError, ValueError, KeyError):  # (pydantic's ValidationError is a ValueError)
            continue
        if ok and 0 <= ago < OPS_KEPT_MINUTES:
            out.append((o, ago))
    return out


def _again(mind: "MindCore", now: datetime, until: datetime) -> None:
    """Re-enter the controller: the rest of the current block is planned again from now."""
    action = mind.state.action
    assert action is not None
    action.end = now  # decide again now
    plan = mind.state.plan
    if plan is None or plan.date != now.date():
        return  # (no plan: the next decision chooses its place afresh)
    minute = minute_of(now)
    block = plan.block_at(minute)
    if block is None or block.activity == SLEEPING:
        return
    rest = PlanItem(minute, block.end - minute, block.activity, "", None, block.place, block.runs_on,
                    calls=block.calls)
    if block.start < minute:  # what was lived of the block stays; the rest is its own block
        block.minutes, block.runs_on = minute - block.start, 0
        if block.actions is not None:
            block.actions = [PlanItem(a.start, min(a.end, minute) - a.start, a.activity, a.address, calls=a.calls)
                             for a in block.actions if a.start < minute]
        plan.blocks.insert(plan.index(block) + 1, rest)
    else:
        plan.blocks[plan.index(block)] = rest
    # the activity's next blocks already decomposed (a decomposition takes two hours at a time)
    # were laid out with the place open: they are laid out again when due
    last = (until.date() - now.date()).days * DAY + minute_of(until)
    i = plan.index(rest)
    for b in plan.blocks[i + 1:]:
        if b.activity != rest.activity or b.place != rest.place or b.start >= last:
            break
        b.actions, b.address = None, ""
    out = unavailable_now(mind, now)
    if rest.place and covered(mind.state.known, out, rest.place):
        # nothing left to do it at there: choose the sector again (elsewhere, or there later)
        rest.place = choose_place(mind.asker, mind.name, mind.persona, mind.state.known, rest.activity,
                                  action.address, mind.state.place_answers, levels=("sector",), now=now,
                                  unavailable=out, allowed=trips.allowed(mind))
    plan.edited()
