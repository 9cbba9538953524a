"""Asking agents questions for a measurement, through the normal interview path (the agent's
retrieval, the interview task, every call logged), on a copy of the save.

Each question is put to the agent as it was before the first one: the record an interview leaves
(the question and its answer) is taken out of the agent's stream again, so no question leaks into
the next one's retrieval ("Who is Kane Martinez?" must not teach the agent who Kane is).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Callable

import numpy as np

from smalltown.eval.conditions import MEMORY_KINDS
from smalltown.mind.memory import Memory
from smalltown.sim.simulation import Simulation


@dataclass
class Answer:
    agent: str
    question: str
    condition: str
    answer: str
    memories: list[dict]  # what the answer drew on: id, kind, description, score

    def to_json(self) -> dict:
        return {"agent": self.agent, "question": self.question, "condition": self.condition,
                "answer": self.answer, "memories": self.memories}


class Interviewer:
    def __init__(self, sim: Simulation, persona: str = "the interviewer",
                 on_answer: Callable[[Answer], None] | None = None):
        self.sim = sim
        self.persona = persona
        self.on_answer = on_answer
        self._before: dict[str, tuple[list[Memory], np.ndarray]] = {}

    def _snapshot(self, name: str) -> tuple[list[Memory], np.ndarray]:
        """The agent's stream before any question (what it noted but had not filed, filed first)."""
        if name not in self._before:
            stream = self.sim.agent(name).mind.memory
            self.sim.agent(name).mind.settle()
            mems = list(stream)
            embs = np.vstack([stream.embedding(m.id) for m in mems]) if mems else \
                np.zeros((0, stream.embedder.dim), np.float32)
            self._before[name] = (mems, embs)
        return self._before[name]

    def ask(self, name: str, question: str, condition: str = "full") -> Answer:
        """`condition`: an ablation of SPEC 9; the agent answers from only the kinds of memory it keeps."""
        mind = self.sim.agent(name).mind
        mems, embs = self._snapshot(name)
        keep = [i for i, m in enumerate(mems) if m.kind in MEMORY_KINDS[condition]]
        persona = mind.persona
        try:
            # fresh copies: a retrieval marks what it returns accessed, and the next question must not see that
            mind.memory.load([replace(mems[i]) for i in keep], embs[keep])
            if condition == "no-memory":  # the summary description was made from memories
                mind.persona = persona.model_copy(update={"summary": ""})
            text, retrieval = self.sim.interview(name, question, self.persona)
        finally:  # the agent as it was: without this question's record
            mind.persona = persona
            mind.memory.load([replace(m) for m in mems], embs)
        answer = Answer(name, question, condition, text, [
            {"id": s.memory.id, "kind": s.memory.kind, "description": s.memory.description,
             "score": round(s.total, 3)} for s in retrieval.results])
        if self.on_answer:
            self.on_answer(answer)
        return answer


# --- reading a yes or a no -------------------------------------------------------------------------

_YES = re.compile(r"^\W*(yes|yeah|yep|of course|sure|certainly|indeed|absolutely|definitely|i do|i did)\b", re.I)
_NO = re.compile(r"^\W*(no|nope)\b|\b(don't|do not|didn't|did not|haven't|have not|never|not sure|no idea|"
                 r"not aware|unaware|can't recall|cannot recall|can't remember|cannot remember|sorry)\b", re.I)


def claims(answer: str, about: Callable[[str], bool], speaker: str | None = None) -> bool:
    """Whether an answer says yes: its first sentence says yes, or (not saying no there) the answer
    speaks of the subject, the speaker's "I" standing for its name ("I am running for the council",
    from Ann Lee, speaks of Ann Lee running). "I'm sorry, I don't know who Kane is." is a no."""
    text = answer.replace("\u2019", "'").strip()
    first = re.split(r"(?<=[.!?])\s+", text, maxsplit=1)[0]
    if _YES.search(first):
        return True
    if _NO.search(first):
        return False
    return about(text) or (speaker is not None and about(_FIRST_PERSON.sub(speaker, text)))


_FIRST_PERSON = re.compile(r"\b(?:I|me|myself)\b")


def names_person(name: str) -> Callable[[str], bool]:
    """A test for answers about a person: the full name, or the first name as a word."""
    first = re.compile(rf"\b{re.escape(name.split()[0])}\b")
    return lambda text: name in text or bool(first.search(text))
