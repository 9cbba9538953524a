"""Social awareness packed into the conversation summary (mind/social.py): asked instead of
`SummarizeConversation` when the setting is on, the same one call, with the speaker's previous
feeling toward the other as input and its feeling after this talk in the answer."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from smalltown.llm.tasks.base import Feeling, Output
from smalltown.llm.tasks.talk import ConversationOut, SummarizeConversation

Tone = Literal["kind", "neutral", "rude"]


class SocialConversationOut(ConversationOut):
    sentiment: int = Field(ge=0, le=10, description="how the person feels toward the other after this talk: 0 hate .. 5 neutral .. 10 love")
    relationship: str = Field(min_length=1, max_length=200, description="the person's relationship with the other, in one sentence")


class SummarizeConversationSocial(SummarizeConversation):
    """The conversation summary with the feeling toward the other (its prompt is the summary's,
    with the social part filled in)."""

    name: ClassVar[str] = "summarize_conversation_social"
    template_name: ClassVar[str] = "summarize_conversation"
    output: ClassVar[type[Output]] = SocialConversationOut
    feeling: Feeling  # before this talk
    # for the stand-in (not shown: a model reads the lines themselves): the other's innate traits
    # (world-file text) and the world file's tone of each of the other's scripted lines
    other_traits: str = ""
    tones: list[Tone] = []
