"""Memes (Project Sid §5.3): what a town's people have on their minds, as topics with keywords.

Not a question of one agent's: each `meme_every_minutes` of game time the engine's "memes" phase
(sim/memes.py) asks one question per town (and one for the rural area, the people whose homes are in
no town) made here from the recent goals of those who live there (each one's goals window, mind/goals.py),
and keeps the answer as a row of the save's `memes` table (a town whose goals are as they were at its
last summary is not asked again: sim/memes.py). A meme is a keyword of a topic; eval
counts them in each agent's goals and speech (world/doctrines.py `keywords_in`). The call log names
the question's asker "town <name>" (the rural area's "rural area"): no agent asked it."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Iterable

from smalltown.llm.tasks import PersonaCard
from smalltown.llm.tasks.memes import MAX_GOALS, MemeSummary, MemeSummaryOut, TownGoal
from smalltown.mind.module import Clock, Module

if TYPE_CHECKING:
    from smalltown.mind.core import MindCore
    from smalltown.world.model import World

RURAL = "rural area"


def asker(town: str) -> str:
    """The call log's name for a town's question (its `agent` column)."""
    return f"town {town}" if town else RURAL


def goals_of(minds: Iterable["MindCore"]) -> list[TownGoal]:
    """The goals windows of `minds` (each its goals with their needs: the roles' window's needs,
    aligned from the end, else only the current goal's), the newest MAX_GOALS in agent order."""
    out: list[TownGoal] = []
    for m in minds:
        s = m.state
        if not s.goals:
            continue
        known = list(s.goal_needs[-len(s.goals):]) if s.goal_needs else [s.goal_need]
        needs = [""] * (len(s.goals) - len(known)) + known
        pairs = [(g, n) for i, (g, n) in enumerate(zip(s.goals, needs)) if i == 0 or (g, n) != (s.goals[i - 1], needs[i - 1])]
        out += [TownGoal(agent=m.name, goal=g, need=n) for g, n in pairs]  # (a goal kept on is shown once)
    return out[-MAX_GOALS:]


def question(town: str, minds: list["MindCore"], now: datetime) -> MemeSummary | None:
    """The town's question (None when no one there has a goal yet: nothing to summarise)."""
    return summary(town, goals_of(minds), now)


def summary(town: str, goals: list[TownGoal], now: datetime) -> MemeSummary | None:
    """The town's question from its people's goals (`goals_of`; None when there are none)."""
    goals = goals[-MAX_GOALS:]
    if not goals:
        return None
    card = PersonaCard(name=asker(town), age=0, traits="", description="", home=town)
    return MemeSummary(persona=card, now=now, town=town, goals=goals)


# words that mark no topic on their own: a keyword made only of these is left out (SmolLM2 gives
# "in", "by", "each other"); English grammar, not any world's words
FUNCTION_WORDS = frozenset(
    "a an the in on at by of for to from with and or but not no is are was be it its this that these "
    "those each other every all some any their his her our my your we they he she you i me us them "
    "do does did don't can will would should could as so up out into about over more most very just".split())


def _keyword(k: str, names: frozenset[str]) -> str:
    """`k` stripped, or "" when it marks no topic: no letter (SmolLM2 gives ","), more than two
    words (a keyword is a word or a two-word name), a word repeated or cut ("kettleby-kettleby-kett"),
    or only function words and `names` (the world's towns and people: a town's people name their
    town and each other, so a name counts who lives where, not what they think: "in Kettleby")."""
    k = " ".join(k.replace("_", " ").split()).strip(" .,;:!?\"'")
    words = [w for w in k.lower().replace("-", " ").split()]
    if not any(c.isalpha() for c in k) or len(k.split()) > 2 or len(set(words)) < len(words):
        return ""
    if all(w in FUNCTION_WORDS or w in names for w in words):
        return ""
    return k


def names_of(world: "World") -> frozenset[str]:
    """The words of the world's town and agent names, lower case (`_keyword`'s `names`)."""
    return frozenset(w for n in [*(t.name for t in world.towns), *(a.name for a in world.agents)]
                     for w in n.lower().replace("-", " ").split())


def topics(out: MemeSummaryOut, names: frozenset[str] = frozenset()) -> list[dict]:
    """The answer as the save keeps it: each topic with its keywords (`_keyword`: stripped, those
    marking no topic left out), empty topics and a topic named again left out (a small model
    repeats itself up to the cap)."""
    rows, seen = [], set()
    for t in out.topics:
        words = list(dict.fromkeys(w for k in t.keywords if (w := _keyword(k, names))))
        if t.topic.strip() and words and t.topic.strip().lower() not in seen:
            seen.add(t.topic.strip().lower())
            rows.append({"topic": t.topic.strip(), "keywords": words})
    return rows


MODULE = Module(
    "memes", "mind/memes.py", Clock("every N minutes", "one question per town, not per agent",
                                    "meme_every_minutes"), "memes",
    "the goals windows of a town's people (as the last tick ended)", "the save's memes rows", tasks=(MemeSummary,))
