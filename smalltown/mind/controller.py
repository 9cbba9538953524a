"""The cognitive controller (Project Sid's PIANO, §2): the one place that decides what an
agent does next. It adds no question of its own: today's questions are its decisions, routed
here: the next action at an action boundary (the plan's, or the no-planning ablation's), and on
an observation weighed, whether to go on, talk or do something else (`react`).

CLOCK: on events: an action boundary (the agent's action ended) and an observation weighed.
READS: the plan, the action, what is observed; only the parts of the state `controller_inputs`
lets through reach its prompts (the bottleneck, mind/commitments.py `narrowed`).
WRITES (`controller_broadcast` on): AgentState.decision (intent, target, reason, time), given to
the talking and acting prompts (the broadcast: what the agent says and does agree), and a
"decided" event through the state's outbox. Off: nothing is written, and the run is as before.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from smalltown.lang import gerund
from smalltown.mind import planning, react
from smalltown.state.commitments import Decision
from smalltown.state.plan import minute_of
from smalltown.state.agent import Action
from smalltown.world.model import pretty
from smalltown.world.perception import Seen

if TYPE_CHECKING:
    from smalltown.mind.core import MindCore


def next_action(mind: "MindCore", now: datetime, current: str) -> tuple[Action, bool]:
    """At an action boundary: the action for now (and whether it is new), decided."""
    return _boundary(mind, *planning.next_action(mind, now, current), now)


def begin(mind: "MindCore", ahead: Action, now: datetime) -> tuple[Action, bool]:
    """At an action boundary: the action decided ahead (`Mind.plan_ahead`) taken up, decided."""
    return _boundary(mind, *planning.take(mind, ahead.activity, ahead.address, ahead.end, ahead.op, ahead.calls,
                                                now), now)


def _boundary(mind: "MindCore", action: Action, new: bool, now: datetime) -> tuple[Action, bool]:
    if new:
        plan = mind.state.plan
        block = plan.block_at(minute_of(now)) if plan is not None and plan.date == now.date() else None
        reason = f"today's plan: {block.activity}" if block is not None else "the moment"
        decide(mind, Decision(action.activity, action.address, reason, now))
    return action, new


def weigh(mind: "MindCore", seen: Seen, is_agent: bool, now: datetime, place: str, state: str) -> react.Reaction:
    """On an observation: go on, talk, or do something else, decided."""
    reaction = react.consider(mind, seen, is_agent, now, place, state)
    if reaction.talks:
        decide(mind, Decision(f"talk with {seen.subject}", seen.subject, seen.description, now, observed=True))
    elif reaction.acts:
        decide(mind, Decision(reaction.answer.reaction, seen.subject, seen.description, now, observed=True))
    return reaction


def decide(mind: "MindCore", d: Decision) -> None:
    """Record a decision and announce it (only with the broadcast on: off, the state is as before)."""
    if not mind.settings.controller_broadcast:
        return
    mind.state.decision = d
    target = pretty(d.target) if ":" in d.target else d.target
    mind.state.outbox.append(("decided", f"{mind.name} decides: {gerund(d.intent)}" + (f" ({target})" if target else ""),
                              {"intent": d.intent, "target": d.target, "reason": d.reason}))
