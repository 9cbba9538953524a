"""The stand-in's meme summary (mind/memes.py), from typed inputs only: the goals' typed `need`s
counted (never the goals' text). Each need shared by at least SHARED goals (else the commonest one)
is a topic, most common first (ties in order of first appearance), at most MAX_TOPICS; its keywords
are the words the stand-in's own goals use for that need (scripted/goals.py PHRASES: its lexicon,
so the memes it names are found in the goals it wrote), else the need itself."""

from __future__ import annotations

from collections import Counter

from smalltown.llm.tasks.memes import MAX_KEYWORDS, MAX_TOPICS, MemeSummary, MemeSummaryOut, Topic
from smalltown.scripted.registry import answers

SHARED = 2
# the keywords of each need's topic: words of its phrase in scripted/goals.py (a test keeps them there)
KEYWORDS: dict[str, tuple[str, ...]] = {
    "company": ("chat", "meal", "neighbours"), "food": ("food", "share", "gather"),
    "knowledge": ("useful", "know", "neighbour"), "tidiness": ("tidy", "shared"), "safety": ("safe", "check"),
    "tools": ("tools", "mend", "lend"), "shelter": ("home", "repairs"), "water": ("water", "clean"),
}


def keywords(need: str) -> list[str]:
    """The words the stand-in's goal for `need` uses (a need without a phrase: its goal says the need)."""
    return list(KEYWORDS.get(need.lower(), (need,)))[:MAX_KEYWORDS]


def meme_summary(task: MemeSummary) -> MemeSummaryOut:
    counts = Counter(g.need for g in task.goals if g.need)
    if not counts:
        return MemeSummaryOut(topics=[])
    order = sorted(counts, key=lambda n: -counts[n])  # (stable: ties keep their first appearance)
    shared = [n for n in order if counts[n] >= SHARED] or order[:1]
    return MemeSummaryOut(topics=[Topic(topic=n[:40], keywords=keywords(n)) for n in shared[:MAX_TOPICS]])


# the stand-in's answers (scripted/registry.py): the task, the run's seed
answers(MemeSummary)(lambda t, seed: meme_summary(t))
