"""The stand-in's social goal (issue 16): the community's need least served by the goals of the
others the person knows of (their typed `need`), ties broken by the person's traits through a
small lexicon, then by a seeded hash. Reads typed inputs and world text (traits, needs) only."""

from __future__ import annotations

from smalltown.llm.tasks import SocialGoal, SocialGoalOut
from smalltown.scripted.words import clip
from smalltown.seeded import stable_int

# needs a town commonly has, when its world declares none: what a goal is drawn from then
COMMON_NEEDS = ("company", "food", "knowledge", "tidiness", "safety", "tools")

# trait words -> the needs such a person leans to (world text read through a lexicon)
TRAIT_NEEDS: dict[str, tuple[str, ...]] = {
    "friendly": ("company",), "kind": ("company", "food"), "warm": ("company",), "outgoing": ("company",),
    "social": ("company",), "cheerful": ("company",), "generous": ("food", "company"), "caring": ("food", "safety"),
    "hardworking": ("food", "tools"), "practical": ("tools",), "handy": ("tools",), "patient": ("knowledge",),
    "curious": ("knowledge",), "studious": ("knowledge",), "thoughtful": ("knowledge",), "creative": ("company",),
    "careful": ("safety",), "responsible": ("safety",), "cautious": ("safety",), "organized": ("tidiness",),
    "organised": ("tidiness",), "tidy": ("tidiness",), "diligent": ("tidiness", "tools"), "helpful": ("food", "tools"),
}

# what working toward a need looks like (a need the lexicon lacks gets the plain phrasing)
PHRASES: dict[str, str] = {
    "company": "bring neighbours together for a chat and a meal",
    "food": "make or gather extra food to share with others",
    "knowledge": "share something useful I know with a neighbour",
    "tidiness": "tidy up a shared place so everyone can use it",
    "safety": "check on neighbours and make sure everyone is safe",
    "tools": "mend or lend tools that others need",
    "shelter": "help fix up a home that needs repairs",
    "water": "make sure there is clean water for everyone",
}


def _leaning(traits: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for word in traits.lower().replace(",", " ").replace(";", " ").split():
        for need in TRAIT_NEEDS.get(word.strip(".!-"), ()):
            out[need] = out.get(need, 0) + 1
    return out


def social_goal(seed: int, task: SocialGoal) -> SocialGoalOut:
    candidates = list(task.needs) or list(COMMON_NEEDS)
    covered = {n: 0 for n in candidates}
    for o in task.others:
        if o.need in covered:
            covered[o.need] += 1
    lean = _leaning(task.persona.traits)
    day = task.now.date().isoformat()
    need = min(candidates, key=lambda n: (covered[n], -lean.get(n.lower(), 0),
                                          stable_int(seed, task.persona.name, n, day)))
    text = PHRASES.get(need.lower(), f"do something for the community's {need}")
    return SocialGoalOut(goal=clip(text, 120), need=need if task.needs else "")
