"""Memes (Project Sid §5.3): one question per town (and one for the rural area) each
`meme_every_minutes`, summarising its people's recent goals into common topics, each with the
keywords that mark it (a meme is such a keyword). Asked by the engine's "memes" phase
(sim/memes.py), not by an agent."""

from __future__ import annotations

from typing import Annotated, ClassVar

from pydantic import Field

from smalltown.llm.examples import EXAMPLES, slot
from smalltown.llm.tasks.base import Output, Task, _Data

MAX_TOPICS = 5
MAX_KEYWORDS = 4
MAX_GOALS = 60  # the goals a question shows at most (the newest): a town of 33 has a window each


class TownGoal(_Data):
    """One recent social goal of someone living in the town, with the need it served ("" none)."""

    agent: str
    goal: str
    need: str = ""


# a keyword is short (a word, or a name of two: "Spaghetti Monster"). (A pattern for "at most two
# words" left SmolLM2's answers unconstrained by the grammar: runaway lists; the lengths cap them.)
Keyword = Annotated[str, Field(min_length=1, max_length=24)]


class Topic(_Data):
    topic: str = Field(min_length=1, max_length=40, description="a short name for the common idea")
    keywords: list[Keyword] = Field(min_length=1, max_length=MAX_KEYWORDS,
                                description="one-word keywords that mark it in what people say or plan")


class MemeSummaryOut(Output):
    topics: list[Topic] = Field(default=[], max_length=MAX_TOPICS,
                                description="the common topics, most common first, each named once")


class MemeSummary(Task):
    """Sid's meme summary, for a town: the common ideas, themes, memes and group names in the goals."""

    name: ClassVar[str] = "meme_summary"
    output: ClassVar[type[Output]] = MemeSummaryOut
    town: str  # "" for the rural area
    goals: list[TownGoal] = []  # oldest first


EXAMPLES[MemeSummary.name] = {"topics": [
    {"topic": "<a common idea, in a few words>", "keywords": ["<a one-word keyword>", slot("...")]}, slot("...")]}
