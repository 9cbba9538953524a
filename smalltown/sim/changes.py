"""What one tick (or one intervention) changed: the systems record it, the engine commits it."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from smalltown.mind.talk import Conversation
from smalltown.store.records import Event, MemeRow, Transfer
from smalltown.store.schema import TIME_FMT


@dataclass
class Changes:
    tick: int
    time: datetime
    tag: dict = field(default_factory=dict)  # data every event carries (an intervention's "by")
    events: list[Event] = field(default_factory=list)
    changed: set[str] = field(default_factory=set)  # agents whose whole row is written
    moved: set[str] = field(default_factory=set)  # agents of which only the tile changed
    objects: set[str] = field(default_factory=set)  # objects whose state changed
    conversations: list[Conversation] = field(default_factory=list)
    ledger: list[Transfer] = field(default_factory=list)  # the economy's transfers (sim/economy.py)
    memes: list[MemeRow] = field(default_factory=list)  # the meme summaries answered (mind/memes.py)

    def __post_init__(self) -> None:
        self.stamp = self.time.strftime(TIME_FMT)

    def emit(self, agent: str | None, kind: str, text: str, **data: object) -> None:
        self.events.append(Event(self.tick, self.stamp, agent, kind, text, {**data, **self.tag}))
