"""Rating a person (the social measures, `smalltown eval social`): how likeable or how
outgoing someone is, 0..10, judged from one text about them: their innate traits (the "true"
figure) or what an observer thinks of them (the "perceived" one, judged as that observer).
Asked by the measurement only, never during a run."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from smalltown.llm.tasks.base import Output, Task

Quality = Literal["likeable", "outgoing"]


class RatePersonOut(Output):
    rating: int = Field(ge=0, le=10, description="0 not at all .. 5 average .. 10 extremely")


class RatePerson(Task):
    """How `quality` the person `other` is: from `traits` when given (an impartial judgement),
    else from `relationship`, what the asking person thinks of them."""

    name: ClassVar[str] = "rate_person"
    output: ClassVar[type[Output]] = RatePersonOut
    other: str  # the person rated
    quality: Quality
    traits: str = ""  # the person's innate traits (world-file text)
    relationship: str = ""  # the asker's view of them: its relationship summary, else its memories of their talks
    # for the stand-in only (not shown: a model reads `relationship`): the asker's feeling toward
    # them, 0..10, kept by social awareness (None: no feeling kept)
    sentiment: int | None = None
