"""What `eval culture` reads of a save (eval/culture.py reads it; eval/culture_memes.py and
eval/culture_faith.py measure it): the lines said with who heard them, the goals, the meme
summaries and the agents' tiles at each game hour's end."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from smalltown.world.model import Doctrine, Tile


@dataclass(frozen=True)
class Said:
    """A line said, in the order of the run: (tick, conversation, index)."""

    tick: int
    time: datetime
    conversation: int
    index: int
    speaker: str
    listener: str
    text: str
    overheard: tuple[str, ...] = ()  # the others within hearing of the speaker then

    @property
    def hearers(self) -> tuple[str, ...]:
        return (self.listener, *self.overheard)


@dataclass
class CultureSave:
    world: str
    start: datetime
    end: datetime
    step: int  # seconds a tick
    settings: dict
    agents: list[str]
    town: dict[str, str]  # agent -> its home's town ("" rural)
    towns: list[str]  # the world's towns, in its order
    doctrines: list[Doctrine]
    hearing_radius: int
    size: tuple[int, int]  # the map's width and height, in tiles
    goals: list[tuple[datetime, str, str]]  # (time, agent, goal), oldest first
    lines: list[Said]
    memes: list[dict]  # {"tick", "time", "town", "topics"} as the save holds the summaries
    hours: list[tuple[int, datetime, dict[str, Tile]]] = field(default_factory=list)  # (tick, time, tiles)


def hour_of(s: CultureSave, t: datetime) -> int:
    """The game hour (1 = the first) a time falls in; the start itself is hour 1."""
    return max(1, -(-int((t - s.start).total_seconds()) // 3600))


def hours(s: CultureSave) -> int:
    return hour_of(s, s.end) if s.end > s.start else 0
