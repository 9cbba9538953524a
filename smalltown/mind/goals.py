"""Goal generation (Project Sid's social goals, its Appendix C): one subgoal toward the
community's goal, from the agent's traits, the community's needs and what the others it knows
of are doing, renewed on the hour, or at once when the goal succeeds or fails.

CLOCK: every `goal_every_minutes` of game time (60 by default), and on the event of the goal's
outcome, for an awake agent, with no goal question of its own still out. A goal is pursued in the
plan block (the activity's span) it is taken up in: that block reaching its planned end is its
success; the agent finding its place taken or closed ("blocked"), or breaking a promise, while
the block lasts is its failure. Either makes a new goal due at once (checked every tick,
model-free: `outcome`). It is a SLOW module: the question is asked at one tick with its
inputs fixed then and applied `slow_lag_ticks` later (sim/later.py), so the tick never waits on it.
READS: the persona (traits, the community goal), the world's needs, the state's goal; the others'
activities and goals' needs (handed in by the engine); the needs it heard others work toward
(`hear`: typed, from the speaker's goal, for each line said to it or overheard). WRITES: the
state's `goal`, `goal_need`, `goals` (the last HISTORY, newest last), `goal_asked` and
`goal_until` (the goal's block's end); the heard needs in its own state
(`AgentState.modules["goal generation"]["heard"]`); the talk question's goal (`talk_inputs`).
Setting: `goal_generation`."""

from __future__ import annotations

from datetime import datetime, time, timedelta
from typing import TYPE_CHECKING

from smalltown.llm.tasks import Other, SocialGoal, SocialGoalOut

if TYPE_CHECKING:
    from smalltown.mind.core import MindCore

MODULE = "goal"  # its slow questions' module name (AgentState.slow)
STATE = "goal generation"  # its own saved state (AgentState.modules: the module's name)
HISTORY = 5  # goals kept: the roles read a rolling window of 5
OTHERS_SHOWN = 5  # others the goal question shows: those on the agent's mind, not everyone it knows
FAILURES = frozenset({"blocked", "broken"})  # the agent's events that end its goal as failed
HEARD_KEPT = 8  # heard needs kept (newest last): one per speaker, the latest
HEARD_HOURS = 4  # a need heard longer ago than this is no longer on the agent's mind


def due(mind: "MindCore", now: datetime) -> bool:
    """Whether the agent asks for a goal now: awake, none out, the last asked long enough ago."""
    s = mind.state
    if not mind.settings.goal_generation or s.action is None or s.action.asleep:
        return False
    if any(q.module == MODULE for q in s.slow):
        return False
    return s.goal_asked is None or now - s.goal_asked >= timedelta(minutes=mind.settings.goal_every_minutes)


def known(mind: "MindCore", names: list[str]) -> list[str]:
    """The others (of `names`, in that order) the agent knows of and has in mind: at most
    OTHERS_SHOWN of those named in its description or talked with, the most recently talked with
    first, then the named (a town of many the agent has met is not all on its mind at once).
    Without social awareness none: the agent forms no picture of others (Sid's ablation;
    docs/architecture.md "Roles")."""
    if not mind.settings.social_awareness:
        return []
    s, order = mind.state, {n: i for i, n in enumerate(names)}
    named = set(mind.lore.tags(mind.spec.description)[0]) | set(s.last_chat) | set(s.talks)
    named = {n for n in named if n in order and n != mind.name}
    recent = sorted(named, key=lambda n: (n not in s.last_chat, -s.last_chat[n].timestamp() if n in s.last_chat else 0,
                                          order[n]))[:OTHERS_SHOWN]
    return sorted(recent, key=order.__getitem__)


def hear(mind: "MindCore", speaker: str, need: str, now: datetime) -> bool:
    """A line said to the agent, or overheard, by `speaker` working toward `need` (typed: the
    speaker's goal's need, never read from the line); True when kept. One entry per speaker (its
    latest), at most HEARD_KEPT."""
    if not need or speaker == mind.name:
        return False
    kept = [h for h in mind.state.modules.setdefault(STATE, {}).get("heard", []) if h["from"] != speaker]
    kept.append({"need": need, "from": speaker, "time": now.isoformat(" ")})
    mind.state.modules[STATE]["heard"] = kept[-HEARD_KEPT:]
    return True


def heard(mind: "MindCore", now: datetime) -> list[str]:
    """The needs the people the agent heard within HEARD_HOURS work toward, one for each person
    (its latest), newest last: a need several people spoke of is there several times."""
    since = now - timedelta(hours=HEARD_HOURS)
    return [h["need"] for h in mind.state.modules.get(STATE, {}).get("heard", [])
            if since <= datetime.fromisoformat(h["time"]) <= now]


def talk_inputs(mind: "MindCore") -> dict:
    """The talk question's goal inputs ({} without a goal: the question is as before)."""
    s = mind.state
    if not mind.settings.goal_generation or not s.goal:
        return {}
    return {"goal": s.goal, "goal_need": s.goal_need}


def question(mind: "MindCore", now: datetime, needs: tuple[str, ...], others: list[Other]) -> SocialGoal:
    """The goal question, its inputs fixed now (the clock restarts when it is asked)."""
    mind.state.goal_asked = now
    return SocialGoal(persona=mind.persona, now=now, community_goal=mind.spec.community_goal, needs=list(needs),
                      goal=mind.state.goal, others=others, goal_need=mind.state.goal_need if mind.state.goal else "",
                      heard=heard(mind, now))


def apply(mind: "MindCore", out: SocialGoalOut, now: datetime) -> bool:
    """Take the answer's goal up, pursued in the block in progress (False: an empty one, which
    changes nothing)."""
    goal = " ".join(out.goal.split())
    if not goal:
        return False
    s = mind.state
    s.goal, s.goal_need = goal, out.need
    s.goals = (s.goals + [goal])[-HISTORY:]
    s.goal_until = block_end(mind, now)
    return True


def block_end(mind: "MindCore", now: datetime) -> datetime | None:
    """When the plan's activity in progress ends as planned (its span of blocks); without one,
    the action's end; None when neither is ahead."""
    plan, action = mind.state.plan, mind.state.action
    block = plan.block_during(now, now) if plan is not None else None
    if block is not None:
        midnight = datetime.combine(plan.date, time(), tzinfo=now.tzinfo)
        end = midnight + timedelta(minutes=plan.span(block)[-1].end)
        if end > now:
            return end
    return action.end if action is not None and action.end > now else None


def outcome(mind: "MindCore", now: datetime, kinds: set[str]) -> str | None:
    """Every tick, model-free, given the kinds of the agent's events this tick: "failure" or
    "success" when the goal's block ended so (a new goal is due at once), else None."""
    s = mind.state
    if not mind.settings.goal_generation or s.goal_until is None:
        return None
    if kinds & FAILURES:
        result = "failure"
    elif now >= s.goal_until:
        result = "success"
    else:
        return None
    s.goal_until = s.goal_asked = None  # (the hourly clock starts again with the next question)
    return result
