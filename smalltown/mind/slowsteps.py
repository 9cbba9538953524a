"""The slow modules' declarations (mind/module.py): goal generation, role inference and, with
`slow_reflection`, reflection, each with the functions the engine calls (sim/slow.py) around its
own file's (mind/goals.py, mind/roles.py, mind/reflect.py). Goals and roles meet here: a goal
taken up moves the roles' window."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from smalltown.llm.tasks import (InferRole, InferRoleOut, Output, ReflectionInsights, ReflectionInsightsOut,
                                 ReflectionQuestions, ReflectionQuestionsOut, SocialGoal, SocialGoalOut, Task)
from smalltown.mind import goals, reflect, roles
from smalltown.mind.memory import Memory
from smalltown.mind.module import Applied, Clock, Emit, Module, SlowStep, TownView

if TYPE_CHECKING:
    from smalltown.mind.core import MindCore


def reflected(name: str, insights: list[Memory]) -> Emit:
    """The event a reflection ends with (inline or slow)."""
    return Emit("reflected", f"{name} reflects: " + " / ".join(m.description for m in insights),
                {"memories": [m.id for m in insights]})


# --- goal generation -------------------------------------------------------------------------------

def _goal_question(mind: "MindCore", now: datetime, town: TownView) -> SocialGoal:
    return goals.question(mind, now, town.needs, [town.other(n) for n in goals.known(mind, town.names)])


def _goal(mind: "MindCore", out: Output, shown: Task, now: datetime) -> Applied:
    assert isinstance(out, SocialGoalOut)
    before = roles.window(mind) if mind.settings.roles else []
    if not goals.apply(mind, out, now):
        return Applied([])
    s = mind.state
    roles.took_goal(mind, s.goal_need, before)
    return Applied([Emit("goal", f"{mind.name}'s goal: {s.goal}", {"goal": s.goal, "need": s.goal_need})])


def _goal_outcome(mind: "MindCore", now: datetime, kinds: set[str]) -> list[Emit]:
    """At the end of the tick: the goal whose block ended so, a success or a failure (a new goal
    is asked at the next tick)."""
    goal = mind.state.goal
    result = goals.outcome(mind, now, kinds)
    if result is None:
        return []
    return [Emit("goal_ended", f"{mind.name}'s goal {result}: {goal}", {"goal": goal, "outcome": result})]


GOALS = Module(
    "goal generation", "mind/goals.py",
    Clock("every N minutes", "and at once when a goal succeeds or fails", "goal_every_minutes"),
    "goal_generation", "traits, the community's needs, the others' goals", "goal, goals, goal_until, slow",
    slow="always", tasks=(SocialGoal,), due=lambda mind, now, town: goals.due(mind, now), question=_goal_question,
    steps=(SlowStep(goals.MODULE, _goal),), outcome=_goal_outcome,
    events={"goal": "takes up a new goal", "goal_ended": ""})


# --- role inference --------------------------------------------------------------------------------

def _role(mind: "MindCore", out: Output, shown: Task, now: datetime) -> Applied:
    assert isinstance(out, InferRoleOut)
    previous = roles.apply(mind, out)
    if previous is None:
        return Applied([])
    role = mind.state.role
    return Applied([Emit("role", f"{mind.name}'s role: {role}" + (f" (was {previous})" if previous else ""),
                         {"role": role, "previous": previous})])


ROLES = Module(
    "role inference", "mind/roles.py",
    Clock("every N minutes", "when the goals window changed", "role_every_minutes"),
    "roles", "the goals window and their needs, the community goal, the role before", "goal_needs, role, slow",
    slow="always", tasks=(InferRole,), due=lambda mind, now, town: roles.due(mind, now),
    question=lambda mind, now, town: roles.question(mind, now), steps=(SlowStep(roles.MODULE, _role),),
    on=lambda s: s.roles and s.goal_generation,  # (its window is the goals')
    events={"role": "takes up a new role"})


# --- reflection, slow: two steps, each asked with its inputs fixed at its tick ---------------------

def _questions(mind: "MindCore", out: Output, shown: Task, now: datetime) -> Applied:
    """The first step back: retrieve, and ask for the insights now."""
    assert isinstance(out, ReflectionQuestionsOut) and isinstance(shown, ReflectionQuestions)
    task = reflect.take_questions(mind, out, shown, now)
    if task is None:
        return Applied([reflected(mind.name, [])])  # nothing retrieved to rest an insight on
    return Applied([], then=task)


def _insights(mind: "MindCore", out: Output, shown: Task, now: datetime) -> Applied:
    assert isinstance(out, ReflectionInsightsOut) and isinstance(shown, ReflectionInsights)
    return Applied([reflected(mind.name, reflect.keep(mind, out, shown.statements, now))])


REFLECTION = Module(
    "reflection", "mind/reflect.py",
    Clock("rare", "when importance since the last passes reflection_threshold, at most every "
                  "reflection_every_minutes (piano: 480)"),
    "reflection, slow_reflection", "recent records, retrievals", "reflections, since_reflection, slow",
    slow="with `slow_reflection`", tasks=(ReflectionQuestions, ReflectionInsights),
    due=lambda mind, now, town: reflect.due_slow(mind, now),
    question=lambda mind, now, town: reflect.ask_questions(mind, now),
    steps=(SlowStep(reflect.QUESTIONS, _questions), SlowStep(reflect.INSIGHTS, _insights)),
    on=lambda s: s.slow_reflection)  # (its event, "reflected", is the engine's: inline reflection's too)
