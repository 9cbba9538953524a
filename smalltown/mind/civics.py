"""Stance (issue 17; Project Sid §5.2): how an agent's view of the tax forms in talk, packed into
the conversation summary in a world with civics (a typed desired rate in the same answer: no extra
call). It belongs to social awareness: with that module off (`architecture=baseline`) the summary
is the plain one and no stance forms, so everyone votes by the rate in force alone.

`Mind.civic` (set by the engine, sim/civics.py) answers, for a talk partner: the rate in force,
this agent's stance (None: none formed yet) and the partner's side when it is an influencer."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from smalltown.llm.tasks import SummarizeConversation
from smalltown.llm.tasks.civics import SummarizeConversationCivic, SummarizeConversationSocialCivic
from smalltown.llm.tasks.social import SummarizeConversationSocial
from smalltown.mind import social

if TYPE_CHECKING:
    from smalltown.mind.agent import Mind

View = Callable[[str, str], tuple[int, "int | None", str]]  # (me, other) -> (rate, my stance, other's side)


@dataclass(frozen=True)
class StanceChange:
    other: str
    previous: int | None
    value: int


def summary_task(mind: "Mind", other: str, task: SummarizeConversation) -> SummarizeConversation:
    """The summary question with the stance asked too (only in a world with civics, social awareness on)."""
    if mind.civic is None or not social.on(mind):
        return task
    rate, stance, side = mind.civic(mind.name, other)
    cls = SummarizeConversationSocialCivic if isinstance(task, SummarizeConversationSocial) else SummarizeConversationCivic
    return cls(**dict(task), rate=rate, stance=stance, other_side=side)


def took(task: SummarizeConversation, other: str, out: object) -> StanceChange | None:
    """The stance the answer gave, when the talk touched the tax and it changed."""
    value = getattr(out, "desired_rate", None)
    previous = getattr(task, "stance", None)
    if value is None or value == previous:
        return None
    return StanceChange(other, previous, value)
