"""The stand-in's social goal: what a model plausibly answers from the question's
typed inputs (docs/architecture.md "Roles: the stand-in's goal choice"). Reads typed inputs and
world text (traits, needs) only, never the goal's text.

- Others known (their typed `need`): keep the current goal's need (`goal_need`), which others rely
  on, unless at least KEEP_MARGIN more of them work toward it than toward the least-served need;
  else pick among the least-served needs (hysteresis: no hourly churn).
- None known: a model's own preference over the listed needs (earlier-listed likelier, by
  POSITION_DECAY; a need the traits lean to, by TRAIT_BOOST) and its previous goal, shown to it,
  continued with probability CONTINUE; the draws are sampling noise per question, seeded by the
  person and the question's time (not the day).
The same preference and noise break ties among the least-served needs when others are known.
Heard needs (`heard`: what the people the person talked with, or overheard, lately work toward,
one for each) lean that preference, by HEARD_LEAN for each person heard working toward a need: talk
spreads a topic. They lean only the preference, never the two rules above it (keeping one's own
need, taking a least-served one): the roles' specialisation stands, and a heard topic is taken up
where the town leaves a choice, or by a person who knows of no one's work; with nothing heard the
choice is as it was.
A goal of one's own: a person who knows of no one's need and heard no one's (`others` without needs,
`heard` empty: someone out on its own, as Sid's rural agents are) takes up, at the chance OWN, its
own work or leisure instead of the community's phrase: its routine's typed items (the first of kind
"work", else of kind "leisure"; their activity, world text, used whole, never parsed), serving the
need chosen as above (the answer's need is one of the community's, as its check asks)."""

from __future__ import annotations

from collections import Counter
from datetime import datetime

from smalltown.llm.tasks import SocialGoal, SocialGoalOut
from smalltown.scripted.words import clip
from smalltown.scripted.registry import answers
from smalltown.seeded import stable_int

# needs a town commonly has, when its world declares none: what a goal is drawn from then
COMMON_NEEDS = ("company", "food", "knowledge", "tidiness", "safety", "tools")

KEEP_MARGIN = 2  # others known: the own need is left when this many more serve it than the least-served
CONTINUE = 0.75  # none known: the chance the previous goal's need, shown, is continued
POSITION_DECAY = 0.5  # none known: each later-listed need half as likely as the one before it
TRAIT_BOOST = 3.0  # a need a trait word leans to is this much likelier (per word)
OWN = 0.5  # knowing of no one's need and hearing none: the chance a goal is one's own work or leisure
HEARD_LEAN = 2.0  # each person heard working toward a need adds this to its weight's factor (1 + 2 per person)

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


def draw(seed: int, name: str, what: str, now: datetime) -> float:
    """A seeded draw in [0, 1): one question's sampling noise (the person and the question's time)."""
    return stable_int(seed, name, what, now.isoformat()) / 2.0 ** 64


def preferred(seed: int, task: SocialGoal, candidates: list[str]) -> str:
    """One need drawn from `candidates` by the model's own preference: the i-th listed of the
    community's needs weighs POSITION_DECAY ** i, times TRAIT_BOOST per trait word leaning to it,
    times 1 + HEARD_LEAN per person heard working toward it."""
    order = list(task.needs) or list(COMMON_NEEDS)
    lean = _leaning(task.persona.traits)
    heard = Counter(task.heard)  # (one entry per person heard: a need many spoke of leans more)
    weights = [POSITION_DECAY ** order.index(n) * TRAIT_BOOST ** lean.get(n.lower(), 0) * (1.0 + HEARD_LEAN * heard[n])
               for n in candidates]
    u = draw(seed, task.persona.name, "need", task.now) * sum(weights)
    for need, w in zip(candidates, weights):
        if u < w:
            return need
        u -= w
    return candidates[-1]


def choose(seed: int, task: SocialGoal) -> str:
    """The need the new subgoal serves (the rules above)."""
    candidates = list(task.needs) or list(COMMON_NEEDS)
    mine = task.goal_need if task.goal_need in candidates else ""  # (the mind sends it only with a goal)
    if any(o.need for o in task.others):
        covered = {n: 0 for n in candidates}
        for o in task.others:
            if o.need in covered:
                covered[o.need] += 1
        least = min(covered.values())
        if mine and covered[mine] - least < KEEP_MARGIN:
            return mine
        return preferred(seed, task, [n for n in candidates if covered[n] == least])
    if mine and draw(seed, task.persona.name, "continue", task.now) < CONTINUE:
        return mine
    return preferred(seed, task, candidates)


def phrase(need: str) -> str:
    """What working toward `need` looks like, in the stand-in's words (its goals' and its lines')."""
    return PHRASES.get(need.lower(), f"do something for the community's {need}")


def own_goal(seed: int, task: SocialGoal) -> str:
    """The person's own goal ("" none: it knows of others' needs, heard some, has no work or leisure
    in its routine, or the draw says the community's): its work's activity, else its leisure's."""
    if task.heard or any(o.need for o in task.others) or draw(seed, task.persona.name, "own", task.now) >= OWN:
        return ""
    items = task.persona.routine
    return next((i.activity for kind in ("work", "leisure") for i in items if i.kind == kind and i.activity), "")


def social_goal(seed: int, task: SocialGoal) -> SocialGoalOut:
    need = choose(seed, task)
    goal = own_goal(seed, task) or phrase(need)
    return SocialGoalOut(goal=clip(goal, 120), need=need if task.needs else "")


# the stand-in's answers (scripted/registry.py): the task, the run's seed
answers(SocialGoal)(lambda t, seed: social_goal(seed, t))
