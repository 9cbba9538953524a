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
    goals = goals_of(minds)
    if not goals:
        return None
    card = PersonaCard(name=asker(town), age=0, traits="", description="", home=town)
    return MemeSummary(persona=card, now=now, town=town, goals=goals)


def topics(out: MemeSummaryOut) -> list[dict]:
    """The answer as the save keeps it: each topic with its keywords, stripped; keywords without a
    letter (SmolLM2 gives "," as one), empty topics and a topic named again left out (a small model
    repeats itself up to the cap)."""
    rows, seen = [], set()
    for t in out.topics:
        words = list(dict.fromkeys(k.strip() for k in t.keywords if any(c.isalpha() for c in k)))
        if t.topic.strip() and words and t.topic.strip().lower() not in seen:
            seen.add(t.topic.strip().lower())
            rows.append({"topic": t.topic.strip(), "keywords": words})
    return rows


MODULE = Module(
    "memes", "mind/memes.py", Clock("every N minutes", "one question per town, not per agent",
                                    "meme_every_minutes"), "memes",
    "the goals windows of a town's people", "the save's memes rows", tasks=(MemeSummary,))
