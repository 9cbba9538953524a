"""Is the town plausible to watch? Measures of behaviour a run should not show, whatever answers
it: an agent restarting the same action over and over in a day, an action done at an object that
contradicts it (sleeping in the shower), the same news told to the same listener twice in a
day, a speaker naming itself in the third person in its own line.

Pure functions over what a save records (started actions, conversation lines); the words they
look for are generic English, true of any world.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import date, datetime
from typing import Iterable

from smalltown.state.agent import partner_of

# (what an action says, what its object's name must then say): each pairing is unambiguous
OBJECT_RULES: tuple[tuple[re.Pattern[str], tuple[str, ...]], ...] = tuple(
    (re.compile(p, re.I), objs) for p, objs in (
        (r"^sleeping$", ("bed",)),
        (r"\bshower", ("shower",)),
        (r"\btoilet\b", ("toilet",)),
        (r"\bmake (?:the|his|her|their|my) bed\b", ("bed",)),
    ))


@dataclass(frozen=True)
class Started:
    """An action an agent started (a `started` event)."""

    agent: str
    time: datetime
    activity: str
    address: str  # sector:arena:object ("" for a conversation)

    @property
    def talking(self) -> bool:
        return partner_of(self.activity) is not None


@dataclass
class Repeats:
    repeated: int  # actions whose activity the agent already started earlier that day
    actions: int  # non-talk actions started

    @property
    def share(self) -> float:
        return self.repeated / self.actions if self.actions else 0.0


def repeats(started: Iterable[Started]) -> dict[tuple[str, date], Repeats]:
    """Per agent and day: how many of its non-talk actions repeat an earlier action of that day.
    Going back to the action a conversation interrupted is not a repeat: it was not finished."""
    seen: dict[tuple[str, date], set[str]] = defaultdict(set)
    last: dict[str, tuple[str, bool]] = {}  # agent -> (its last non-talk activity, talked since)
    out: dict[tuple[str, date], Repeats] = {}
    for s in started:
        before, talked = last.get(s.agent, ("", False))
        if s.talking:
            last[s.agent] = (before, True)
            continue
        last[s.agent] = (s.activity, False)
        if talked and s.activity == before:
            continue  # resumed after a conversation
        key = (s.agent, s.time.date())
        r = out.setdefault(key, Repeats(0, 0))
        r.actions += 1
        if s.activity in seen[key]:
            r.repeated += 1
        seen[key].add(s.activity)
    return out


def mismatched(started: Iterable[Started]) -> list[tuple[Started, tuple[str, ...]]]:
    """Actions done at an object that contradicts them, with what the object should have been."""
    out = []
    for s in started:
        obj = s.address.rsplit(":", 1)[-1].lower() if s.address.count(":") == 2 else ""
        if not obj:
            continue
        for pattern, wanted in OBJECT_RULES:
            if pattern.search(s.activity) and not any(w in obj for w in wanted):
                out.append((s, wanted))
                break
    return out


@dataclass(frozen=True)
class Told:
    """A declared fact passed on in a conversation line."""

    time: datetime
    speaker: str
    listener: str
    fact: str


def told_twice(told: Iterable[Told]) -> list[Told]:
    """Each telling of a fact to a listener the speaker already told it the same day."""
    counts: Counter = Counter()
    out = []
    for t in sorted(told, key=lambda t: t.time):
        key = (t.speaker, t.listener, t.fact, t.time.date())
        counts[key] += 1
        if counts[key] > 1:
            out.append(t)
    return out


def self_named(lines: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """(speaker, line) where the speaker names itself by its full name: the third person."""
    return [(who, text) for who, text in lines if who and who in text]


def most_common_line(lines: Iterable[tuple[str, str]]) -> tuple[str, float]:
    """The line said most often, and its share of all lines (how templated the talk sounds)."""
    counts = Counter(text for _, text in lines)
    total = sum(counts.values())
    if not total:
        return "", 0.0
    text, n = counts.most_common(1)[0]
    return text, n / total
