"""What the cognitive controller (mind/controller.py) broadcasts to the talking and acting prompts,
as typed inputs: its current decision and the agent's open promises. Both are extra inputs of
existing tasks, present only when their settings are on: `Quiet` (tasks/base.py) leaves them out
of a task's identity while empty, so a run with them off is what it was."""

from __future__ import annotations

from pydantic import Field

from smalltown.llm.tasks.base import HHMM, Output, _Data


class Decided(_Data):
    """The controller's decision: what the agent does next, with whom or where, and why."""

    intent: str
    target: str = ""  # an agent's name or a place/object address ("" none)
    reason: str = ""
    time: str = Field(pattern=HHMM)  # when it was decided


class Promise(_Data):
    """A commitment the agent made in a conversation: to do `what` at `where` by `by` today."""

    what: str
    to: str  # to whom
    by: str = Field(pattern=HHMM)
    where: str  # a sector the agent knows


class PromiseOut(Output):
    what: str = Field(min_length=1, max_length=60, description="what the speaker promises to do")
    by: str = Field(pattern=HHMM, description="when, today: HH:MM, later than now")
    where: str = Field(min_length=1, max_length=200, description="where: one of the places listed, spelled exactly")
