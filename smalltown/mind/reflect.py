"""Reflection (SPEC 3): questions from recent records, retrieval per question, insights that cite
the records they rest on (which may themselves be reflections: a tree)."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from smalltown.llm.tasks import ReflectionInsights, ReflectionQuestions
from smalltown.mind.memory import Memory

if TYPE_CHECKING:
    from smalltown.mind.agent import Mind


def reflect(mind: "Mind", now: datetime) -> list[Memory]:
    s = mind.settings
    recent = mind.memory.recent(s.reflection_recent)
    questions = mind.ask(ReflectionQuestions(persona=mind.persona,
                                             statements=[m.description for m in recent])).questions
    cited: dict[int, Memory] = {}
    for q in questions:
        for scored in mind.memory.retrieve(q, now, s.reflection_k, purpose="reflection").results:
            cited.setdefault(scored.memory.id, scored.memory)
    statements = list(cited.values())
    answer = mind.ask(ReflectionInsights(persona=mind.persona, questions=questions,
                                         statements=[m.description for m in statements]))
    insights = []
    for ins in answer.insights:
        evidence = [statements[i - 1].id for i in dict.fromkeys(ins.because) if 1 <= i <= len(statements)]
        if len(evidence) < len(set(ins.because)):
            mind.note(f"insight {ins.insight[:40]!r} cited statements that do not exist; dropped them")
        if not evidence:
            continue  # an insight resting on nothing is not kept
        insights.append((ins.insight, evidence, ins.importance))
    out = []
    for text, evidence, rating in insights:  # each rated in the same answer (packed)
        out += mind.remember("reflection", [text], now, evidence, ratings=[rating])
    return out
