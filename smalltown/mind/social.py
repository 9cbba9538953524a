"""Social awareness (PIANO's social module): how an agent feels toward each agent it
has talked with, 0 (hate) .. 10 (love), starting at 5, and their relationship in a sentence.

CLOCK: on an event: after each conversation, packed into that side's summary of it (no call of
its own: `SummarizeConversationSocial` is asked instead of the plain summary). READS the
feeling before the talk, the other's traits and the tones of the other's scripted lines; WRITES
`AgentState.social` (other -> Bond, state/social.py), kept in the save only when non-empty. USED
by reacting and talking: the react and utterance prompts carry the feeling toward the agent seen
or spoken to.
Setting: `social_awareness` (off: nothing is asked, shown or written).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from smalltown.llm.tasks import Feeling, SummarizeConversation
from smalltown.llm.tasks.social import SocialConversationOut, SummarizeConversationSocial
from smalltown.state.social import NEUTRAL, Bond

if TYPE_CHECKING:
    from smalltown.mind.core import MindCore


@dataclass(frozen=True)
class Change:
    """A feeling as one conversation moved it (the "sentiment" event)."""

    other: str
    previous: int
    value: int
    summary: str


def on(mind: "MindCore") -> bool:
    return mind.settings.social_awareness


def feeling(mind: "MindCore", other: str) -> Feeling | None:
    """The feeling toward `other` as a prompt carries it; None when the setting is off."""
    if not on(mind):
        return None
    bond = mind.state.social.get(other)
    return Feeling(other=other, sentiment=bond.sentiment if bond else NEUTRAL, summary=bond.summary if bond else "")


def summary_task(mind: "MindCore", other: "MindCore", plain: SummarizeConversation, tones: list[str]) -> SummarizeConversation:
    """The summary question to ask: the plain one when off, else the one that also asks the feeling."""
    if not on(mind):
        return plain
    return SummarizeConversationSocial(**dict(plain), feeling=feeling(mind, other.name),
                                       other_traits=other.persona.traits, tones=tones)


def update(mind: "MindCore", other: str, out: object, now: datetime) -> Change | None:
    """Keep the feeling the summary's answer gave (None: the setting is off, nothing asked)."""
    if not isinstance(out, SocialConversationOut):
        return None
    before = mind.state.social.get(other)
    summary = out.relationship.strip()[:200]
    mind.state.social[other] = Bond(out.sentiment, summary, now)
    return Change(other, before.sentiment if before else NEUTRAL, out.sentiment, summary)
