"""Goal generation (Project Sid's social goal, its Appendix C): one subgoal toward the
community's goal, from the person's traits, the community's needs and what others it knows of
are doing. A slow module's question: asked at one tick, applied some ticks later (sim/later.py)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from smalltown.llm.tasks.base import Output, Quiet, Task, _Data, _enum

GOAL_MAX = 120


class Other(_Data):
    """Someone the person knows of, as the goal question shows them: what they are doing now and
    which of the community's needs their own goal serves ("" when unknown or none declared)."""

    name: str
    activity: str
    need: str = ""


class SocialGoalOut(Output):
    goal: str = Field(min_length=1, max_length=GOAL_MAX, description="one subgoal, in a short sentence")
    need: str = Field(default="", max_length=30, description="which of the community's needs it serves")


class SocialGoal(Quiet, Task):
    """Sid's social goal: one subgoal aligned with the community's goal, for this person now."""

    name: ClassVar[str] = "social_goal"
    output: ClassVar[type[Output]] = SocialGoalOut
    community_goal: str = ""
    needs: list[str] = []  # the community's needs, as the world declares them
    goal: str = ""  # the person's current subgoal ("" = none yet)
    others: list[Other] = []
    goal_need: str = ""  # the need the current subgoal serves (left out while "")
    heard: list[str] = []  # the needs people it talked with (or overheard) lately work toward, newest last
    quiet: ClassVar[tuple[str, ...]] = ("goal_need", "heard")

    def schema(self) -> dict:
        return _enum(super().schema(), ("properties", "need"), self.needs) if self.needs else super().schema()

    def check(self, out: Output) -> str:
        need = getattr(out, "need", "")
        if self.needs and need not in self.needs:
            return f"need {need!r} is not one of the community's needs"
        return ""
