"""Stance (Project Sid §5.2): how an agent's view of the tax forms in talk, packed into
the conversation summary in a world with civics (a typed desired rate in the same answer: no extra
call). It belongs to social awareness: with that module off (`architecture=baseline`) the summary
is the plain one and no stance forms, so everyone votes by the rate in force alone.

`Mind.civic` (set by the engine, sim/civics.py) answers, for a talk partner, a `CivicView`: the
rate and constitution in force, this agent's stance (None: none formed yet), its own side and
beliefs when it is an influencer, the partner's side when it is one, and the world's typed step
a talk with an influencer moves a listener by (for the stand-in).

Influencers argue their case (Appendix D: "approach other agents, explain ... and encourage them
to support your stance"): the talk questions (react, utterance) carry the constitution in force
and an influencer's beliefs, and an influencer's react question is `persuading` (a typed flag the
stand-in reads to start a talk with whomever it sees; the cooldowns still hold). The campaign ends
with the vote, and an influencer argues with each person once per constitution version (a talk
with them since the version began: `argued`); otherwise its react question is a constituent's (no
law, no persuading)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Callable

from smalltown.llm.tasks import SummarizeConversation
from smalltown.llm.tasks.civics import SummarizeConversationCivic, SummarizeConversationSocialCivic
from smalltown.llm.tasks.social import SummarizeConversationSocial
from smalltown.mind import social

if TYPE_CHECKING:
    from smalltown.mind.core import MindCore


@dataclass(frozen=True)
class CivicView:
    rate: int  # in force
    constitution: str  # in force
    stance: int | None  # this agent's desired rate (None: none formed)
    side: str  # this agent's side when it is an influencer ("" else)
    stance_text: str  # this agent's beliefs when it is an influencer (world-file text; "" else)
    other_side: str  # the partner's side when it is an influencer ("" else, or no partner)
    step: int  # percent a talk with an influencer moves a listener (the world's, typed)
    campaigning: bool = False  # the vote is still to come (an influencer's campaign ends with it)
    since: datetime | None = None  # when the constitution in force began (an influencer argues with each once)


View = Callable[[str, str], CivicView]  # (me, other) -> the view


@dataclass(frozen=True)
class StanceChange:
    other: str
    previous: int | None
    value: int


def summary_task(mind: "MindCore", other: str, task: SummarizeConversation) -> SummarizeConversation:
    """The summary question with the stance asked too (only in a world with civics, social awareness on)."""
    if mind.civic is None or not social.on(mind):
        return task
    v = mind.civic(mind.name, other)
    cls = SummarizeConversationSocialCivic if isinstance(task, SummarizeConversationSocial) else SummarizeConversationCivic
    return cls(**dict(task), rate=v.rate, stance=v.stance, other_side=v.other_side, step=v.step)


def talk_inputs(mind: "MindCore", react: bool = False, other: str = "") -> dict:
    """The civic inputs of a talk question ({} without civics: the question is as before); for a
    react question, about stopping for `other`."""
    if mind.civic is None:
        return {}
    if react and not persuading(mind, other):
        return {}  # whether to stop for someone: the law bears on it only for one still to argue it with them
    v = mind.civic(mind.name, "")
    return {"constitution": v.constitution, "stance_text": v.stance_text, **({"persuading": True} if react else {})}


def persuading(mind: "MindCore", other: str) -> bool:
    """Whether the agent is an influencer still campaigning that has not argued its case with `other`
    under the constitution in force (False without civics)."""
    if mind.civic is None:
        return False
    v = mind.civic(mind.name, "")
    return bool(v.side and v.campaigning and not argued(mind, other, v.since))


def argued(mind: "MindCore", other: str, since: datetime | None) -> bool:
    """Whether the agent has talked with `other` since the constitution in force began (canvassing:
    one argument per person per version)."""
    last = mind.state.talks.get(other)
    return last is not None and since is not None and last.time >= since


def took(task: SummarizeConversation, other: str, out: object) -> StanceChange | None:
    """The stance the answer gave, when the talk touched the tax and it changed."""
    value = getattr(out, "desired_rate", None)
    previous = getattr(task, "stance", None)
    if value is None or value == previous:
        return None
    return StanceChange(other, previous, value)
