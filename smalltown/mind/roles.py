"""Role inference (Project Sid §5.1): the role an agent has taken up, inferred from a
rolling window of its last social goals (mind/goals.py keeps 5) and the needs they served.

CLOCK: when the window changed since the role was last asked (a goal taken up that is not a
repeat of a full window of the same), at most every `role_every_minutes` of game time, with no
role question of its own still out. A SLOW module like goals: asked at one tick with the window
fixed then, applied `slow_lag_ticks` later (sim/later.py), resumable. READS: the goals window and
the needs kept beside it, the community goal, the role before. WRITES: `goal_needs` (kept beside
`goals` while on), `role`, `role_due`, `role_asked`. The engine emits a "role" event (agent, role,
previous) when the role changes, the first one included. Setting: `roles` (needs goal generation)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from smalltown.llm.tasks import GoalSeen, InferRole, InferRoleOut
from smalltown.mind.goals import HISTORY

if TYPE_CHECKING:
    from smalltown.mind.core import MindCore

MODULE = "role"  # its slow questions' module name (AgentState.slow)


def window(mind: "MindCore") -> list[GoalSeen]:
    """The goals window, oldest first, each with its need (needs are aligned with goals from the
    end: a run that turned roles on late has fewer needs than goals, the older ones unknown)."""
    s = mind.state
    pad = [""] * max(0, len(s.goals) - len(s.goal_needs))
    needs = (pad + s.goal_needs)[-len(s.goals):] if s.goals else []
    return [GoalSeen(goal=g, need=n) for g, n in zip(s.goals, needs)]


def took_goal(mind: "MindCore", need: str, before: list[GoalSeen]) -> None:
    """After a goal is taken up: keep its need beside it, and mark the role due when the window
    is not what it was."""
    if not mind.settings.roles:
        return
    s = mind.state
    s.goal_needs = (s.goal_needs + [need])[-HISTORY:]
    if window(mind) != before:
        s.role_due = True


def due(mind: "MindCore", now: datetime) -> bool:
    s = mind.state
    if not mind.settings.roles or not s.role_due or any(q.module == MODULE for q in s.slow):
        return False
    return s.role_asked is None or now - s.role_asked >= timedelta(minutes=mind.settings.role_every_minutes)


def question(mind: "MindCore", now: datetime) -> InferRole:
    """The role question, its window fixed now."""
    s = mind.state
    s.role_asked, s.role_due = now, False
    return InferRole(persona=mind.persona, now=now, community_goal=mind.spec.community_goal, goals=window(mind),
                     role=s.role)


def apply(mind: "MindCore", out: InferRoleOut) -> str | None:
    """Take the answer's role: the role before when it changed (\"\" for the first), else None."""
    role = " ".join(out.role.split())
    s = mind.state
    if not role or role == s.role:
        return None
    previous, s.role = s.role, role
    return previous
