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
    # each transfer's place in the tick's canonical order: (the phase's, its actor's); `actor` is the
    # agent whose op or payment is being applied (the tick's systems set it, agent by agent)
    ledger_at: list[tuple[int, str]] = field(default_factory=list)
    actor: str = ""
    phase: int = 0  # the tick phase running (sim/phases.py `run` sets it)
    memes: list[MemeRow] = field(default_factory=list)  # the meme summaries answered (mind/memes.py)

    def __post_init__(self) -> None:
        self.stamp = self.time.strftime(TIME_FMT)

    def ledger_rows(self, order: dict[str, int]) -> list[Transfer]:
        """The transfers in the canonical order (phase, actor's agent order, as made): the same whether
        the tick ran over the whole town or group by group (sim/groups.py)."""
        if not self.ledger_at:
            return list(self.ledger)
        keys = [(p, order.get(a, -1), i) for i, (p, a) in enumerate(self.ledger_at)]
        return [self.ledger[k[2]] for k in sorted(keys)]

    def emit(self, agent: str | None, kind: str, text: str, **data: object) -> None:
        self.events.append(Event(self.tick, self.stamp, agent, kind, text, {**data, **self.tag}))
