"""Reflection (SPEC 3): questions from recent records, retrieval per question, insights that cite
the records they rest on (which may themselves be reflections: a tree).

CLOCK: rare, when the importance filed since the last reflection passes `reflection_threshold`
(and, with `reflection_every_minutes`, not sooner than that after the newest reflection).
Inline (the default), both calls are made in the tick's reflection phase. With `slow_reflection`
it is a SLOW module in two steps (sim/later.py, driven by sim/slow.py): the questions are asked at
tick t with their inputs fixed then and applied at t + lag, where the retrievals are made and the
insights asked, applied at t + 2 lag; so a tick never waits on either. READS: the recent records
and those waiting, the memory stream (retrieval). WRITES: reflection records, the importance
ratings packed into the questions' answer, `since_reflection`. Setting: `reflection` (on), and
`slow_reflection`."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from smalltown.llm.tasks import (Record, ReflectionInsights, ReflectionInsightsOut, ReflectionQuestions,
                                 ReflectionQuestionsOut)
from smalltown.mind import importance
from smalltown.mind.memory import Memory
from smalltown.mind.records import record

if TYPE_CHECKING:
    from smalltown.mind.core import MindCore

QUESTIONS, INSIGHTS = "reflection", "insights"  # the slow steps' module names (AgentState.slow)


def _over(mind: "MindCore", now: datetime) -> bool:
    """Over the threshold, and (with `reflection_every_minutes`) the newest reflection in the stream
    at least that long ago: read from the stream, so a resumed run sees the same."""
    s = mind.settings
    if not (s.reflection and mind.state.since_reflection > s.reflection_threshold):
        return False
    if s.reflection_every_minutes:
        newest = mind.memory.latest("reflection")
        return newest is None or now - newest >= timedelta(minutes=s.reflection_every_minutes)
    return True


def due(mind: "MindCore", now: datetime) -> bool:
    """Inline reflection: checked every tick; counts only settled records, so it costs nothing in
    between."""
    return not mind.settings.slow_reflection and _over(mind, now)


def due_slow(mind: "MindCore", now: datetime) -> bool:
    """Slow reflection: due (`_over`), and no step of an earlier one still out."""
    return mind.settings.slow_reflection and _over(mind, now) and \
        not any(q.module in (QUESTIONS, INSIGHTS) for q in mind.state.slow)


def questions(mind: "MindCore", now: datetime) -> ReflectionQuestions:
    """The statements are the most recent records, those still waiting among them: the ones not
    rated yet are to be rated in the questions' answer (packed)."""
    s = mind.settings
    rate = importance.unrated(mind)
    unrated = {r.text for r in rate}
    waiting = [importance.waiting(mind.lore, p) for p in mind.state.pending]
    known = [r.model_copy(update={"importance": mind.state.ratings.get(r.text, 0)})
             for r in waiting if r.text not in unrated]  # waiting, rated before (the same text)
    filed = mind.memory.recent(max(0, s.reflection_recent - len(known) - len(rate)))
    recent = [record(mind.lore, m) for m in filed] + known
    # the most recent first to stay when a window is small: the score is the recency order
    statements = [r.model_copy(update={"score": round(i / len(recent), 6)}) for i, r in enumerate(recent, 1)]
    return ReflectionQuestions(persona=mind.persona, now=now, statements=statements, rate=rate)


def _cited(mind: "MindCore", asked: list[str], now: datetime) -> list[Record]:
    """The records retrieved for the questions, each once at its best score."""
    cited: dict[int, Record] = {}
    for q in asked:
        for r in mind.retrieve(q, now, mind.settings.reflection_k, "reflection"):
            if r.id not in cited or cited[r.id].score < r.score:
                cited[r.id] = r
    return list(cited.values())


def keep(mind: "MindCore", answer: ReflectionInsightsOut, shown: list[Record], now: datetime) -> list[Memory]:
    """Store the insights that rest on statements the prompt showed (`shown`, numbered as there),
    each once, rated in the same answer (packed)."""
    insights = []
    for ins in answer.insights:
        evidence = [shown[i - 1].id for i in dict.fromkeys(ins.because) if 1 <= i <= len(shown)]
        if len(evidence) < len(set(ins.because)):
            mind.note(f"insight {ins.insight[:40]!r} cited statements that do not exist; dropped them")
        if not evidence:
            continue  # an insight resting on nothing is not kept
        if mind.memory.has(ins.insight, "reflection") or any(ins.insight == t for t, _, _ in insights):
            continue  # an insight the agent already holds is not stored again
        insights.append((ins.insight, evidence, ins.importance))
    out = []
    for text, evidence, rating in insights:
        out += importance.remember(mind, "reflection", [text], now, evidence, ratings=[rating])
    return out


def reflect(mind: "MindCore", now: datetime) -> list[Memory]:
    """Inline: both calls now; the count towards the next reflection starts again."""
    out = mind.ask(questions(mind, now))
    asked = mind.asker.last_task.rate  # those the prompt had room for
    if not importance.packed(mind, asked, out.ratings) and asked:
        mind.note(f"{len(out.ratings)} ratings for {len(asked)} memories; they are asked again")
    importance.settle(mind)  # (asks only for what the answer did not rate)
    mind.state.since_reflection = 0
    cited = _cited(mind, out.questions, now)
    if not cited:
        return []  # nothing retrieved to rest an insight on
    answer = mind.ask(ReflectionInsights(persona=mind.persona, now=now, questions=out.questions, statements=cited))
    return keep(mind, answer, mind.asker.last_task.statements, now)  # numbered as shown (after fitting)


# --- slow: two steps, each asked with its inputs fixed at its tick ---------------------------------

def ask_questions(mind: "MindCore", now: datetime) -> ReflectionQuestions:
    """The first step's question; the count towards the next reflection starts again now."""
    task = questions(mind, now)
    mind.state.since_reflection = 0
    return task


def take_questions(mind: "MindCore", out: ReflectionQuestionsOut, shown: ReflectionQuestions,
                   now: datetime) -> ReflectionInsights | None:
    """The questions' answer, `lag` ticks on: its ratings kept for the records still unrated (a
    settle meanwhile may have rated some), then the retrievals; the insights' question, or None
    when nothing was retrieved."""
    if len(out.ratings) == len(shown.rate):
        for r, x in zip(shown.rate, out.ratings):
            if importance.rating(mind, r.text) is None:  # (filed: rated already)
                mind.state.ratings[r.text] = x
    elif shown.rate:
        mind.note(f"{len(out.ratings)} ratings for {len(shown.rate)} memories; they are asked again")
    importance.settle(mind)  # everything waiting filed before the retrievals
    cited = _cited(mind, out.questions, now)
    if not cited:
        return None
    return ReflectionInsights(persona=mind.persona, now=now, questions=out.questions, statements=cited)
