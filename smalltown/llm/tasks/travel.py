"""What a day plan is told about the other towns (a world of several towns, `travel` on): the
towns the person knows, with how far each is from home, and today's reasons to go to one of
them. Each reason is typed (a market's hours, the people known who live there, a doctrine's
gathering the person believes in, another town's square to preach a doctrine the person seeks to
spread in): the stand-in plans a trip from these fields alone, and a
model reads the same ones in its prompt."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from smalltown.llm.tasks.base import HHMM, _Data

Why = Literal["market", "people", "gathering", "preaching"]


class TownSeen(_Data):
    """A town as a person knows it: its name, its square (a sector everyone knows: where a trip to
    the town goes) and the walk there from home, in minutes (0 for the person's own town)."""

    name: str
    square: str
    minutes: int = Field(ge=0)
    own: bool = False  # the person's own town


class Trip(_Data):
    """A reason to go to another town today, and when: `place` is the sector the trip goes to
    (the town's square, or a doctrine's gathering place), open or held from `start` to `end`."""

    town: str
    place: str
    why: Why
    start: str = Field(pattern=HHMM)
    end: str = Field(pattern=HHMM)
    minutes: int = Field(ge=0)  # the walk there from home
    people: list[str] = []  # why == "people": those known who live in the town
    doctrine: str = ""  # why == "gathering": the doctrine whose believers meet there; "preaching": the one preached
