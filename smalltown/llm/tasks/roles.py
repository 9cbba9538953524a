"""Role inference (Project Sid §5.1 and Appendix C): the role a person has taken up,
inferred from a rolling window of its last social goals. A slow module's question (mind/roles.py)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from smalltown.llm.tasks.base import Output, Task, _Data

ROLE_MAX = 30  # a short noun phrase: one to three words


class GoalSeen(_Data):
    """One social goal of the window, with the community's need it served ("" when none declared)."""

    goal: str
    need: str = ""


class InferRoleOut(Output):
    role: str = Field(min_length=1, max_length=ROLE_MAX, description="a role, one to three words, e.g. farmer")


class InferRole(Task):
    """Sid's role inference: which role the person's recent goals add up to."""

    name: ClassVar[str] = "infer_role"
    output: ClassVar[type[Output]] = InferRoleOut
    community_goal: str = ""
    goals: list[GoalSeen] = []  # the window, oldest first
    role: str = ""  # the role inferred last time ("" = none yet)

    def check(self, out: Output) -> str:
        words = getattr(out, "role", "").split()
        return "" if 1 <= len(words) <= 3 else "a role is one to three words"
