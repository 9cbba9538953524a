"""Say–do coherence (Project Sid §2): how often what an agent says contradicts its own
state, beside how often it does what it said (the kept rate of the promises sim/commitments.py checks), both read from a
save's event log, model-free.

A statement here is a typed claim about the speaker itself: a promise made in talk ("committed":
what, to whom, by HH:MM, where). At the moment it is said, the mind records where the speaker's
own plan has it at that time (`planned`, a sector; "" when the plan says nothing of it). The
promise CONTRADICTS the speaker's state when the plan has it somewhere else then; a promise the
plan is silent about is counted apart (neither agrees nor contradicts). Sid's example is the agent
that says "sure, here's a pickaxe" while its action module explores: with the controller's
broadcast the talking prompt is given the plan, so the rate should drop when it is on.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from smalltown.store.records import EventRow
from smalltown.store.save import open_reader

KINDS = ("committed", "kept", "broken")  # a promise's events (sim/commitments.py emits them)


@dataclass(frozen=True)
class Rate:
    made: int
    kept: int
    broken: int

    @property
    def rate(self) -> float | None:
        """Kept of those decided (None: none decided yet)."""
        done = self.kept + self.broken
        return self.kept / done if done else None


def rate_of(events: Iterable[EventRow]) -> Rate:
    kinds = [e.kind for e in events]
    return Rate(kinds.count("committed"), kinds.count("kept"), kinds.count("broken"))


def rate_of_save(path: str | Path) -> Rate:
    """The kept-promise rate of a save, from its event log (through the store's reader)."""
    reader = open_reader(path)
    try:
        return rate_of(reader.events(kinds=KINDS))
    finally:
        reader.close()


@dataclass(frozen=True)
class Contradictions:
    statements: int  # promises whose speaker's plan said where it would be then
    contradicting: int  # of those, the plan had it elsewhere
    unplanned: int  # promises the speaker's plan was silent about (or from before `planned` was recorded)

    @property
    def rate(self) -> float | None:
        """Contradicting of the statements that could be checked (None: none could)."""
        return self.contradicting / self.statements if self.statements else None


@dataclass(frozen=True)
class SayDo:
    kept: Rate
    contradictions: Contradictions


def contradictions_of(events: Iterable[EventRow]) -> Contradictions:
    checked = wrong = silent = 0
    for e in events:
        if e.kind != "committed":
            continue
        planned = e.data.get("planned", "")
        if not isinstance(planned, str) or not planned:
            silent += 1
            continue
        checked += 1
        wrong += planned != e.data.get("where")
    return Contradictions(checked, wrong, silent)


def saydo_of_save(path: str | Path) -> SayDo:
    """The kept rate and the contradiction rate of a save, from its events."""
    reader = open_reader(path)
    try:
        events = reader.events(kinds=KINDS)
    finally:
        reader.close()
    return SayDo(rate_of(events), contradictions_of(events))


def describe(s: SayDo) -> str:
    """One line for a report."""
    def pct(x: float | None) -> str:
        return "n/a" if x is None else f"{100 * x:.0f}%"

    c = s.contradictions
    return (f"promises {s.kept.made}: kept {pct(s.kept.rate)} ({s.kept.kept} kept, {s.kept.broken} broken); "
            f"contradicting the speaker's plan {pct(c.rate)} ({c.contradicting} of {c.statements}; "
            f"{c.unplanned} the plan was silent about)")
