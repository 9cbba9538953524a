"""The event log: what happened, tick by tick (the timeline a replay scrubs through)."""

from __future__ import annotations

from dataclasses import dataclass, field

KINDS = ("started", "moved", "arrived", "entered", "object", "perceived", "said", "reflected",
         "reacted", "replanned", "whispered", "interviewed")


@dataclass
class Event:
    tick: int
    time: str  # "YYYY-MM-DD HH:MM:SS"
    agent: str | None
    kind: str  # one of KINDS
    text: str
    data: dict = field(default_factory=dict)
