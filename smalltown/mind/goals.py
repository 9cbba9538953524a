"""Goal generation (issue 16; Project Sid's social goals, its Appendix C): one subgoal toward the
community's goal, from the agent's traits, the community's needs and what the others it knows
of are doing, renewed on the hour.

CLOCK: every `goal_every_minutes` of game time (60 by default), for an awake agent, with no goal
question of its own still out. It is a SLOW module: the question is asked at one tick with its
inputs fixed then and applied `slow_lag_ticks` later (sim/later.py), so the tick never waits on it.
READS: the persona (traits, the community goal), the world's needs, the state's goal; the others'
activities and goals' needs (handed in by the engine). WRITES: the state's `goal`, `goal_need`,
`goals` (the last HISTORY, newest last) and `goal_asked`. Setting: `goal_generation`."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from smalltown.llm.tasks import Other, SocialGoal, SocialGoalOut

if TYPE_CHECKING:
    from smalltown.mind.agent import Mind

MODULE = "goal"  # its slow questions' module name (AgentState.slow)
HISTORY = 5  # goals kept: issue 17's roles read a rolling window of 5


def due(mind: "Mind", now: datetime) -> bool:
    """Whether the agent asks for a goal now: awake, none out, the last asked long enough ago."""
    s = mind.state
    if not mind.settings.goal_generation or s.action is None or s.action.asleep:
        return False
    if any(q.module == MODULE for q in s.slow):
        return False
    return s.goal_asked is None or now - s.goal_asked >= timedelta(minutes=mind.settings.goal_every_minutes)


def known(mind: "Mind", names: list[str]) -> list[str]:
    """The others (of `names`, in that order) the agent knows of: named in its description, or
    talked with."""
    named = set(mind.lore.tags(mind.spec.description)[0]) | set(mind.state.last_chat) | set(mind.state.talks)
    return [n for n in names if n in named and n != mind.name]


def question(mind: "Mind", now: datetime, needs: tuple[str, ...], others: list[Other]) -> SocialGoal:
    """The goal question, its inputs fixed now (the clock restarts when it is asked)."""
    mind.state.goal_asked = now
    return SocialGoal(persona=mind.persona, now=now, community_goal=mind.spec.community_goal, needs=list(needs),
                      goal=mind.state.goal, others=others)


def apply(mind: "Mind", out: SocialGoalOut) -> bool:
    """Take the answer's goal up (False: an empty one, which changes nothing)."""
    goal = " ".join(out.goal.split())
    if not goal:
        return False
    s = mind.state
    s.goal, s.goal_need = goal, out.need
    s.goals = (s.goals + [goal])[-HISTORY:]
    return True
