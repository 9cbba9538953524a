"""Asking agents questions for a measurement, on a copy of the save: the questions and their
answers as data, and reading a yes or a no. The agents are asked through `Subjects` (the command
line hands it sim/interviews.py's `Interviews`, the run opened on the copy): each question is put
to the agent as it was before the first one, by the normal interview path, every call logged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Protocol

from smalltown.eval.conditions import MEMORY_KINDS
from smalltown.store.records import Retrieval


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


class Subjects(Protocol):
    def interview(self, name: str, question: str, persona: str, kinds: frozenset[str],
                  summary: bool = True) -> tuple[str, Retrieval]:
        """The agent's answer from only the memories of `kinds` (`summary` False: without its
        summary description), and the retrieval it drew on; the agent as it was before the first
        question."""
        ...


class Interviewer:
    def __init__(self, subjects: Subjects, persona: str = "the interviewer",
                 on_answer: Callable[[Answer], None] | None = None):
        self.subjects = subjects
        self.persona = persona
        self.on_answer = on_answer

    def ask(self, name: str, question: str, condition: str = "full") -> Answer:
        """`condition`: an ablation of SPEC 9; the agent answers from only the kinds of memory it keeps
        (and, with no memory, without the summary description that was made from memories)."""
        text, retrieval = self.subjects.interview(name, question, self.persona, MEMORY_KINDS[condition],
                                                  summary=condition != "no-memory")
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
