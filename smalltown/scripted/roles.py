"""The stand-in's role inference: the need the window's goals served most often (ties:
the newest of them), named through a small lexicon of need -> role noun, with a plain fallback
("<need> worker") for a need the lexicon lacks. Reads the goals' typed needs only, never their text."""

from __future__ import annotations

from smalltown.llm.tasks import InferRole, InferRoleOut
from smalltown.llm.tasks.roles import ROLE_MAX
from smalltown.scripted.registry import answers

ROLES: dict[str, str] = {
    "food": "farmer", "tools": "blacksmith", "safety": "guard", "knowledge": "scholar", "shelter": "builder",
    "company": "host", "tidiness": "caretaker", "water": "water carrier", "wood": "woodcutter",
    "stone": "miner", "ore": "miner", "minerals": "miner", "health": "healer", "medicine": "healer",
    "art": "artist", "trade": "merchant", "clothing": "tailor", "exploration": "explorer", "defence": "guard",
    "defense": "guard", "fish": "fisher", "animals": "herder", "music": "musician", "order": "guard",
}
NO_NEED = "helper"  # a window whose goals named no need (a world that declares none)


def role_of(need: str) -> str:
    """The role noun for a need: the lexicon's, else "<need> worker" (at most three words)."""
    words = need.lower().split()
    if not words:
        return NO_NEED
    known = ROLES.get(" ".join(words))
    return known if known else " ".join(words[:2] + ["worker"])[:ROLE_MAX].strip()


def infer_role(task: InferRole) -> InferRoleOut:
    needs = [g.need for g in task.goals if g.need]
    if not needs:
        return InferRoleOut(role=NO_NEED)
    counts: dict[str, int] = {}
    for n in needs:
        counts[n] = counts.get(n, 0) + 1
    newest = {n: i for i, n in enumerate(needs)}  # the last place each need appears
    need = max(counts, key=lambda n: (counts[n], newest[n]))
    return InferRoleOut(role=role_of(need))


# the stand-in's answers (scripted/registry.py): the task, the run's seed
answers(InferRole)(lambda t, seed: infer_role(t))
