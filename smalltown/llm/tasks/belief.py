"""Belief's typed inputs to a talk question (mind/belief.py): what the speaker holds of a doctrine
(world data: its keywords by level, the priests' persona lines) and what it has heard."""

from __future__ import annotations

from smalltown.llm.tasks.base import _Data


class Faith(_Data):
    """The speaker's standing in one doctrine, as its talk question carries it."""

    doctrine: str
    level: int  # 0: not converted; len(levels): the top
    levels: list[list[str]]  # the doctrine's keywords of level 1, 2, ... (lowest first)
    level_names: list[str]
    priest: bool = False
    persona: list[str] = []  # a priest's persona lines (world data)
    exposures: int = 0  # lines naming the doctrine the speaker has heard (kept)
    heard_level: int = 0  # the highest level among them
    listener_level: int = 0  # the level the speaker has heard the listener (a react question: the one seen) speak at
