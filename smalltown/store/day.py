"""One game day of a save at a glance: for each agent, the spans of what it was doing, where and
with whom (the TUI's day view).

Built from the event log alone: a `started` event sets an agent's activity and the object it is at,
a `moved` one starts a walk there, an `arrived` one ends it; the conversations table says whom a
talk was with and where. The state at midnight is the last of those events before it. A span is
kept whole while its category and place stay the same (the activities within it are listed).
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field, replace
from datetime import date, datetime, time, timedelta
from typing import Iterable, Protocol

from smalltown.lang import ACTIVITY_KINDS, activity_kind
from smalltown.store.schema import TIME_FMT

# Every span is one of these: an activity's kind, or walking, a gathering, or something else.
CATEGORIES: tuple[str, ...] = (*(kind for kind, _, _ in ACTIVITY_KINDS), "walking", "gathering", "other")
WALKING, GATHERING, OTHER = "walking", "gathering", "other"
_KINDS = ("started", "moved", "arrived")


class GatheringLike(Protocol):
    """A world's gathering as this module needs it (world.model.Gathering is one)."""

    name: str
    start: datetime
    end: datetime

    def holds(self, arena_address: str | None) -> bool: ...


@dataclass(frozen=True)
class Span:
    agent: str
    start: datetime
    end: datetime
    category: str  # one of CATEGORIES
    place: str  # "sector:arena" it was in (walking: the one it walked to); "" when not known
    activities: tuple[str, ...] = ()  # what it did, in order, as the mind worded them
    others: tuple[str, ...] = ()  # whom it talked with, or who else was at the place meanwhile
    gathering: str = ""  # the gathering's name, for a span at one

    @property
    def minutes(self) -> float:
        return (self.end - self.start).total_seconds() / 60


@dataclass(frozen=True)
class Day:
    """What a save holds of one game day."""

    day: date
    start: datetime  # its midnight
    end: datetime  # the next midnight, or the save's clock if sooner
    first: date  # the first and the last day the save holds
    last: date
    began: datetime  # the save's first game time: nothing is recorded before it
    spans: dict[str, list[Span]] = field(default_factory=dict)  # agent -> its spans, in order, in the save's order


@dataclass
class _Doing:
    """An agent's state as the events bring it forward."""

    activity: str = ""
    address: str = ""
    walking: bool = False
    talk: tuple[str, str] | None = None  # (whom with, where) during a conversation


def _time(text: str) -> datetime:
    return datetime.strptime(text, TIME_FMT)


def _arena(address: str) -> str:
    """"sector:arena:object" -> "sector:arena" (a conversation's "sector: arena" too)."""
    return ":".join(p.strip() for p in address.split(":")[:2])


def _category(d: _Doing) -> str:
    if d.talk is not None:
        return "talking"
    if d.walking:
        return WALKING
    return activity_kind(d.activity) or OTHER


def _apply(d: _Doing, kind: str, data: dict, talk: tuple[str, str] | None) -> None:
    if kind == "started":
        d.activity, d.address = str(data.get("activity") or ""), str(data.get("address") or "")
        d.walking, d.talk = False, talk
    elif kind == "moved":
        d.walking = True
    elif kind == "arrived":
        d.walking = False


def _clock(conn: sqlite3.Connection) -> tuple[datetime, datetime]:
    """(the save's first game time, its clock now)."""
    now = json.loads(conn.execute("SELECT value FROM meta WHERE key='game_time'").fetchone()[0])
    first = conn.execute("SELECT time FROM events ORDER BY id LIMIT 1").fetchone()
    return _time(first[0]) if first else _time(now), _time(now)


def _talks(conn: sqlite3.Connection, start: str, end: str) -> dict[tuple[str, str], tuple[str, str]]:
    """(agent, time it began) -> (whom with, where): the conversations begun in [start, end)."""
    out: dict[tuple[str, str], tuple[str, str]] = {}
    rows = conn.execute("SELECT time, initiator, other, place FROM conversations WHERE time >= ? AND time < ?",
                        (start, end)) if conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type='table' AND name='conversations'").fetchone() else []
    for when, a, b, place in rows:
        out[(a, when)], out[(b, when)] = (b, place or ""), (a, place or "")
    return out


def _before(conn: sqlite3.Connection, start: str) -> list[tuple]:
    """Each agent's last started, moved and arrived event before `start`."""
    return conn.execute(
        "SELECT e.time, e.agent, e.kind, e.data FROM events e JOIN (SELECT max(id) AS id FROM events "
        "WHERE kind IN ('started', 'moved', 'arrived') AND time < ? GROUP BY agent, kind) m ON e.id = m.id "
        "ORDER BY e.id", (start,)).fetchall()


def read_day(conn: sqlite3.Connection, agents: list[str], day: date | None = None,
             gatherings: Iterable[GatheringLike] = ()) -> Day:
    """The spans of `day` (default: the save's last) for each of `agents`."""
    first, now = _clock(conn)
    day = day or now.date()
    start = datetime.combine(day, time())
    end = min(start + timedelta(days=1), max(now, start))
    lo, hi = start.strftime(TIME_FMT), end.strftime(TIME_FMT)
    talks = _talks(conn, lo, hi)
    doing = {a: _Doing() for a in agents}
    for _, agent, kind, data in _before(conn, lo):
        if agent in doing:
            _apply(doing[agent], kind, json.loads(data or "{}"), None)  # a talk ends before midnight
    raw: dict[str, list[Span]] = {a: [] for a in agents}
    since = {a: start for a in agents}
    rows = conn.execute("SELECT time, agent, kind, data FROM events WHERE kind IN ('started', 'moved', 'arrived') "
                        "AND time >= ? AND time < ? ORDER BY id", (lo, hi))
    for stamp, agent, kind, data in rows:
        if agent not in doing:
            continue
        when = _time(stamp)
        _close(raw[agent], agent, doing[agent], since[agent], when)
        since[agent] = when
        _apply(doing[agent], kind, json.loads(data or "{}"), talks.get((agent, stamp)))
    for agent in agents:
        _close(raw[agent], agent, doing[agent], since[agent], end)
    spans = _at_gatherings(raw, list(gatherings))
    spans = _with_others({a: _merged(v) for a, v in spans.items()})
    return Day(day, start, end, first.date(), now.date(), first, spans)


def _close(spans: list[Span], agent: str, d: _Doing, start: datetime, end: datetime) -> None:
    """End what `d` was doing at `end`, as a span."""
    if end <= start or (not d.activity and d.talk is None):
        return
    place = _arena(d.talk[1]) if d.talk and d.talk[1] else _arena(d.address)
    activity = f"talking with {d.talk[0]}" if d.talk else d.activity
    spans.append(Span(agent, start, end, _category(d), place, (activity,), (d.talk[0],) if d.talk else ()))


def _merged(spans: list[Span]) -> list[Span]:
    """Adjacent spans of one category at one place as one, their activities listed once each."""
    out: list[Span] = []
    for s in spans:
        last = out[-1] if out else None
        if last and last.end == s.start and (last.category, last.place, last.others, last.gathering) == \
                (s.category, s.place, s.others, s.gathering):
            out[-1] = replace(last, end=s.end, activities=tuple(dict.fromkeys(last.activities + s.activities)))
        else:
            out.append(s)
    return out


def _at_gatherings(raw: dict[str, list[Span]], gatherings: list[GatheringLike]) -> dict[str, list[Span]]:
    """The time spent at a gathering's place during it, when others were there too, as a span of
    its own (category "gathering")."""
    for g in gatherings:
        there = {a for a, spans in raw.items()
                 if any(s.category != WALKING and g.holds(s.place) and s.start < g.end and s.end > g.start
                        for s in spans)}
        if len(there) < 2:
            continue
        for agent in there:
            out: list[Span] = []
            for s in raw[agent]:
                if s.category == WALKING or not g.holds(s.place) or not (s.start < g.end and s.end > g.start):
                    out.append(s)
                    continue
                a, b = max(s.start, g.start), min(s.end, g.end)
                if s.start < a:
                    out.append(replace(s, end=a))
                out.append(replace(s, start=a, end=b, category=GATHERING, gathering=g.name))
                if b < s.end:
                    out.append(replace(s, start=b))
            raw[agent] = out
    return raw


def _with_others(raw: dict[str, list[Span]]) -> dict[str, list[Span]]:
    """Who else was at a span's place while it lasted (a talk keeps its partner only)."""
    by_place: dict[str, list[Span]] = {}
    for spans in raw.values():
        for s in spans:
            if s.category not in (WALKING, "talking") and s.place:
                by_place.setdefault(s.place, []).append(s)
    out: dict[str, list[Span]] = {}
    for agent, spans in raw.items():
        out[agent] = [s if s.category in (WALKING, "talking") or not s.place else replace(s, others=tuple(dict.fromkeys(
            o.agent for o in by_place[s.place] if o.agent != agent and o.start < s.end and o.end > s.start)))
            for s in spans]
    return out
