"""Social awareness as data: one agent's feeling toward another (`Bond`) with its JSON, and the
feeling toward someone never talked with. How it is asked and kept is the mind's (mind/social.py)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

NEUTRAL = 5  # the sentiment toward someone never talked with


@dataclass
class Bond:
    """One agent's feeling toward another, as last updated."""

    sentiment: int
    summary: str  # the relationship in a sentence (at most 200 characters)
    time: datetime  # when it was last updated

    def to_json(self) -> dict:
        return {"sentiment": self.sentiment, "summary": self.summary, "time": self.time.isoformat(" ")}

    @classmethod
    def from_json(cls, d: dict) -> "Bond":
        return cls(int(d["sentiment"]), d.get("summary", ""), datetime.fromisoformat(d["time"]))
