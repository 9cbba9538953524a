"""Reflection (SPEC 3): questions from recent records, retrieval per question, insights that cite
the records they rest on (which may themselves be reflections: a tree)."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from smalltown.llm.tasks import Record, ReflectionInsights, ReflectionQuestions
from smalltown.mind import importance
from smalltown.mind.memory import Memory
from smalltown.mind.records import record

if TYPE_CHECKING:
    from smalltown.mind.agent import Mind


def due(mind: "Mind") -> bool:
    """Checked every tick; counts only settled records, so it costs nothing in between."""
    return mind.settings.reflection and mind.state.since_reflection > mind.settings.reflection_threshold


def reflect(mind: "Mind", now: datetime) -> list[Memory]:
    """The statements are the most recent records, those still waiting among them: the ones not
    rated yet are rated in the questions' answer (packed), then everything waiting is filed
    before the retrievals; the count towards the next reflection starts again."""
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
    out = mind.ask(ReflectionQuestions(persona=mind.persona, now=now, statements=statements, rate=rate))
    asked = mind.asker.last_task.rate  # those the prompt had room for
    if not importance.packed(mind, asked, out.ratings) and asked:
        mind.note(f"{len(out.ratings)} ratings for {len(asked)} memories; they are asked again")
    mind.settle()  # (asks only for what the answer did not rate)
    mind.state.since_reflection = 0
    questions = out.questions
    cited: dict[int, Record] = {}
    for q in questions:
        for r in mind.retrieve(q, now, s.reflection_k, "reflection"):
            if r.id not in cited or cited[r.id].score < r.score:
                cited[r.id] = r
    if not cited:
        return []  # nothing retrieved to rest an insight on
    answer = mind.ask(ReflectionInsights(persona=mind.persona, now=now, questions=questions,
                                         statements=list(cited.values())))
    shown = mind.asker.last_task.statements  # numbered as the prompt showed them (after fitting)
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
    for text, evidence, rating in insights:  # each rated in the same answer (packed)
        out += mind.remember("reflection", [text], now, evidence, ratings=[rating])
    return out
