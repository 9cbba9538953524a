"""Rating a person, scripted (llm/tasks/rate.py), from typed inputs only.

From traits (world-file text): a lexicon of general English, warm against cold words for
likeable, outgoing against reserved words for outgoing (both lexicons in scripted/social.py); each word
moves the rating two steps from 5. From an observer's view: the feeling social awareness kept
(`sentiment`), else 5, neutral: the relationship text is the mind's and is not read.
"""

from __future__ import annotations

from smalltown.llm.tasks.rate import RatePerson, RatePersonOut
from smalltown.scripted.social import COLD, OUTGOING, RESERVED, WARM, balance
from smalltown.scripted.registry import answers

LEXICON = {"likeable": (WARM, COLD), "outgoing": (OUTGOING, RESERVED)}


def from_traits(traits: str, quality: str) -> int:
    return max(0, min(10, 5 + 2 * balance(traits, *LEXICON[quality])))


def rate_person(task: RatePerson) -> RatePersonOut:
    if task.traits:
        return RatePersonOut(rating=from_traits(task.traits, task.quality))
    return RatePersonOut(rating=max(0, min(10, task.sentiment)) if task.sentiment is not None else 5)


# the stand-in's answers (scripted/registry.py): the task, the run's seed
answers(RatePerson)(lambda t, seed: rate_person(t))
