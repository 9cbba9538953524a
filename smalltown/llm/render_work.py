"""Prompts of issue 17's tasks (the economy's decomposition, role inference, civics), kept apart
from render.py's size: each renderer fills its template's extra placeholders and registers itself
in render's tables, which render.py imports this module to fill."""

from __future__ import annotations

from smalltown.llm import tasks as T
from smalltown.llm.render import EXAMPLES, NONE, _EXTRA, _decompose, _social_goal, quote


def _decompose_economy(t: T.EconomyDecompose) -> dict[str, str]:
    """Decompose in a world with an economy: the ops feasible there and what the person holds."""
    ops = "\n".join(f"- {quote(o.label)}" + (f" (takes at least {o.minutes} minutes)" if o.minutes else "") for o in t.ops)
    held = ", ".join(f"{h.qty} {quote(h.item)}" for h in t.inventory) or "nothing"
    need = f"\n{t.persona.name} is working toward: {quote(t.need)}" if t.need else ""
    return {**_decompose(t), "economy_part": f'{t.persona.name} holds: {held}{need}\nWhat {t.persona.name} can do here '
            f'with goods (give an action "op": one of these, spelled exactly (without the quotes), when the action '
            f'does it; else leave it empty):\n{ops or NONE}'}


_EXTRA["decompose_economy"] = _decompose_economy
EXAMPLES["decompose_economy"] = {"actions": [{"activity": "bake the loaves", "minutes": 10, "object": "<an object>",
                                              "state": "baking bread", "op": "<one of the ops listed, or empty>"}], "ratings": [2, 6]}


def _infer_role(t: T.InferRole) -> dict[str, str]:
    goals = "\n".join(f"- {quote(g.goal)}" + (f" (for the community's {quote(g.need)})" if g.need else "")
                      for g in t.goals)
    return {"goals": goals or NONE, "community_goal": quote(t.community_goal) if t.community_goal else NONE,
            "role": quote(t.role) if t.role else "none yet"}


_EXTRA["infer_role"] = _infer_role
EXAMPLES["infer_role"] = {"role": "farmer"}


def _social_goal_need(t: T.SocialGoal) -> dict[str, str]:
    """The goal question, its current subgoal followed by the need it serves when it has one (a
    goal without a need, or a world that declares none, reads as before)."""
    v = _social_goal(t)
    if t.goal and t.goal_need:
        v["goal"] += f" (for the community's {quote(t.goal_need)})"
    return v


_EXTRA["social_goal"] = _social_goal_need
