"""Social measures (Project Sid §4's figures): feelings over time for chosen pairs,
perceived against true likeability, in-degree against extroversion, the asymmetry of feelings,
and say–do coherence, all from a save.

True likeability and extroversion are ratings of the agent's innate traits; perceived
likeability is the mean of the ratings its observers give it, each judging as itself from its
view of the agent: its relationship summary (social awareness), else its memories of their
talks. One task rates both (`rate_person`): a model reads the texts; the stand-in reads the
traits through a lexicon and, for an observer, only the feeling social awareness kept.
An observer of X: another agent with a relationship toward X or a memory of a talk with X.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from typing import Callable, Protocol

from smalltown.config import Settings
from smalltown.eval.fit import fit
from smalltown.eval.saydo import KINDS as PROMISE_KINDS, contradictions_of, rate_of
from smalltown.eval.town import read_town
from smalltown.llm.tasks import PersonaCard
from smalltown.llm.tasks.rate import RatePerson
from smalltown.state.social import NEUTRAL
from smalltown.store.reader import Reader
from smalltown.store.save import Save
from smalltown.store.schema import TIME_FMT

CHATS_SHOWN = 3  # without a relationship summary, the observer's last talks with X stand for its view


class Rater(Protocol):
    def persona(self, name: str) -> PersonaCard: ...

    def ask(self, name: str, task: RatePerson) -> int: ...


@dataclass
class SocialSave:
    """What the measures read from a save."""

    world: str
    agents: list[str]
    traits: dict[str, str]
    start: datetime
    end: datetime
    social_on: bool  # the run's social_awareness setting
    bonds: dict[str, dict[str, tuple[int, str]]]  # observer -> other -> (sentiment, summary), as last kept
    feelings: list[tuple[datetime, str, str, int]]  # "sentiment" events: (time, agent, other, value)
    started: dict[str, set[str]]  # agent -> who started a talk with it
    chats: dict[tuple[str, str], list[str]]  # (observer, other) -> its chat memories of their talks, in order
    promises: dict[str, int | float | None]  # made, kept, broken, rate; checked, contradicting, contradiction_rate


def read_social(db: Save) -> SocialSave:
    town = read_town(db)
    reader = db.reader()
    settings = Settings().saved(db.meta("settings"))
    bonds: dict[str, dict[str, tuple[int, str]]] = {}
    for row in reader.agent_rows():
        social = json.loads(row.state or "{}").get("social", {})
        bonds[row.name] = {o: (int(b["sentiment"]), b.get("summary", "")) for o, b in social.items()}
    feelings = [(datetime.strptime(e.time, TIME_FMT), e.agent, e.data["other"], int(e.data["value"]))
                for e in reader.events(kinds=("sentiment",))]
    started: dict[str, set[str]] = defaultdict(set)
    for c in reader.conversations():
        started[c.other].add(c.initiator)
    chats: dict[tuple[str, str], list[str]] = defaultdict(list)
    for m in town.memories:
        other = town.partner.get(m.id) if m.kind == "chat" else None
        if other and other != m.agent:
            chats[(m.agent, other)].append(m.description)
    promised = reader.events(kinds=PROMISE_KINDS)
    kept, said = rate_of(promised), contradictions_of(promised)
    return SocialSave(town.world.name, town.agents, {a.name: a.traits for a in town.world.agents}, town.start,
                      town.end, settings.social_awareness, bonds, feelings, dict(started), dict(chats),
                      {"made": kept.made, "kept": kept.kept, "broken": kept.broken, "rate": kept.rate,
                       "checked": said.statements, "contradicting": said.contradicting,
                       "contradiction_rate": said.rate})


def observers(s: SocialSave, name: str) -> list[str]:
    """Who has a view of `name`: a relationship toward it, or a memory of a talk with it."""
    return [a for a in s.agents if a != name and (name in s.bonds.get(a, {}) or (a, name) in s.chats)]


def in_degree(s: SocialSave, name: str) -> int:
    """Others with a relationship toward `name` or who started a talk with it."""
    return len({a for a in s.agents if a != name and name in s.bonds.get(a, {})} | s.started.get(name, set()))


def view_task(s: SocialSave, rater: Rater, observer: str, name: str) -> RatePerson:
    bond = s.bonds.get(observer, {}).get(name)
    text = bond[1] if bond and bond[1] else " ".join(s.chats.get((observer, name), [])[-CHATS_SHOWN:])
    return RatePerson(persona=rater.persona(observer), now=s.end, other=name, quality="likeable",
                      relationship=text[:1200], sentiment=bond[0] if bond else None)


def trait_task(s: SocialSave, rater: Rater, name: str, quality: str) -> RatePerson:
    return RatePerson(persona=rater.persona(name), now=s.end, other=name, quality=quality,
                      traits=s.traits[name] or "none given")


def measure_social(s: SocialSave, rater: Rater, pairs: list[tuple[str, str]] = (), min_observers: int = 5,
                   on_answer: Callable[[], None] = lambda: None) -> dict:
    """Every measure of one save, as JSON-ready data."""
    agents = []
    for name in s.agents:
        seen_by = observers(s, name)
        true = rater.ask(name, trait_task(s, rater, name, "likeable"))
        outgoing = rater.ask(name, trait_task(s, rater, name, "outgoing"))
        on_answer(), on_answer()
        views = {}
        if len(seen_by) >= min_observers:  # the others' views are asked only where they count
            for o in seen_by:
                views[o] = rater.ask(o, view_task(s, rater, o, name))
                on_answer()
        agents.append({"agent": name, "true": true, "extroversion": outgoing, "observers": len(seen_by),
                       "in_degree": in_degree(s, name), "views": views,
                       "perceived": sum(views.values()) / len(views) if views else None})
    counted = [a for a in agents if a["perceived"] is not None]
    like = fit([a["true"] for a in counted], [a["perceived"] for a in counted])
    social = fit([a["extroversion"] for a in agents], [a["in_degree"] for a in agents])
    return {"world": s.world, "start": s.start.strftime(TIME_FMT), "end": s.end.strftime(TIME_FMT),
            "social_awareness": s.social_on, "min_observers": min_observers, "agents": agents,
            "likeability": like.to_json() if like else None, "in_degree": social.to_json() if social else None,
            "asymmetry": asymmetry(s), "pairs": [curve(s, a, b) for a, b in (pairs or busiest_pairs(s))],
            "say_do": s.promises}


def asymmetry(s: SocialSave) -> dict:
    """|s(a→b) − s(b→a)| over the pairs where each has a feeling toward the other."""
    gaps = []
    for i, a in enumerate(s.agents):
        for b in s.agents[i + 1:]:
            ab, ba = s.bonds.get(a, {}).get(b), s.bonds.get(b, {}).get(a)
            if ab and ba:
                gaps.append(abs(ab[0] - ba[0]))
    counts = [gaps.count(k) for k in range(11)]
    return {"pairs": len(gaps), "mean": sum(gaps) / len(gaps) if gaps else None, "counts": counts}


def busiest_pairs(s: SocialSave, n: int = 3) -> list[tuple[str, str]]:
    """The pairs whose feelings changed most often (when none are chosen)."""
    count: dict[tuple[str, str], int] = defaultdict(int)
    for _, a, b, _ in s.feelings:
        count[(a, b)] += 1
    return [p for p, _ in sorted(count.items(), key=lambda kv: (-kv[1], kv[0]))[:n]]


def curve(s: SocialSave, a: str, b: str) -> dict:
    """a's feeling toward b over game time: neutral at the start, then each change."""
    points = [(s.start.strftime(TIME_FMT), NEUTRAL)] + \
        [(t.strftime(TIME_FMT), v) for t, x, y, v in s.feelings if (x, y) == (a, b)]
    return {"agent": a, "other": b, "points": points}
