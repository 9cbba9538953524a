"""The controller's record in an agent's state as data: its current Decision and the agent's open
Commitments (promises made in conversations), with their JSON. Made by the mind
(mind/commitments.py, mind/controller.py), checked by the engine (sim/commitments.py), read back
by the measures (eval/saydo.py)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass
class Decision:
    intent: str  # what the agent does next: an activity, "talk with X", a reaction
    target: str  # an address, or the agent observed
    reason: str  # the plan's block, or what was observed
    time: datetime
    observed: bool = False  # decided on an observation (a reaction, a talk), not by the plan's next action

    def to_json(self) -> dict:
        out = {"intent": self.intent, "target": self.target, "reason": self.reason, "time": self.time.isoformat(" ")}
        return {**out, "observed": True} if self.observed else out

    @classmethod
    def from_json(cls, d: dict) -> "Decision":
        return cls(d["intent"], d.get("target", ""), d.get("reason", ""), datetime.fromisoformat(d["time"]),
                   bool(d.get("observed", False)))


@dataclass
class Commitment:
    what: str
    to: str  # to whom it was promised
    by: datetime  # when, today
    where: str  # a sector the agent knows
    made: datetime  # when it was said

    def to_json(self) -> dict:
        return {"what": self.what, "to": self.to, "by": self.by.isoformat(" "), "where": self.where,
                "made": self.made.isoformat(" ")}

    @classmethod
    def from_json(cls, d: dict) -> "Commitment":
        return cls(d["what"], d["to"], datetime.fromisoformat(d["by"]), d["where"], datetime.fromisoformat(d["made"]))
