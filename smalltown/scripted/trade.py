"""The stand-in's economy: the decomposition of an economy world, with at most one op,
chosen from the typed inputs only (the ops listed, the inventory, the goal's need word).

Which op: one whose item is the need (a craft first), else a craft (bakers bake), else a gather
(people gather where they work), else a seeded choice among deposits, gifts and trades. It goes
on the last action long enough for it: by then the person has walked there.
What came of the ops tried lately (`outcomes`: action awareness, when on) steers it: an op that did
not happen is not tried again while it is listed there, nor a give or trade with the same person
while someone else can be offered one (another partner, or other goods), and the next give or
trade is made on the first action, before the partner walks off, not the last. Without the
outcomes (the setting off) nothing is known of it, and the same offer may well be made again."""

from __future__ import annotations

import hashlib

import smalltown.scripted.memory as memory
from smalltown.scripted.registry import answers
from smalltown.llm.tasks import EconomyDecompose, EconomyDecomposeOut, Op
import smalltown.scripted.steps as steps

ORDER = ("craft", "gather")  # what work makes, before what is handed on


def decompose(task: EconomyDecompose, rate) -> EconomyDecomposeOut:
    base = steps.decompose(task, rate)
    actions = [a.model_dump() for a in base.actions]
    op = choose(task)
    if op is not None:
        fits = [i for i, a in enumerate(actions) if a["minutes"] >= op.minutes]
        if fits:
            actions[fits[_when(task, op)]]["op"] = op.label
    return EconomyDecomposeOut(actions=actions, ratings=base.ratings)


def choose(task: EconomyDecompose) -> Op | None:
    ops = untried(task)
    if not ops:
        return None
    need = task.need.strip().lower()
    wanted = [o for o in ops if need and o.item.lower() == need and o.op in ORDER]
    if wanted:
        return min(wanted, key=lambda o: ORDER.index(o.op))
    for kind in ORDER:
        mine = [o for o in ops if o.op == kind]
        if mine:
            return mine[0]
    kinds = sorted({o.op for o in ops})  # deposit, give, trade: a kind, then one of its ops, seeded
    seed = int.from_bytes(hashlib.sha256(f"{task.persona.name}\x1f{task.start}\x1f{task.now}".encode()).digest()[:8], "big")
    kind = kinds[seed % len(kinds)]
    mine = [o for o in ops if o.op == kind]
    return mine[(seed // len(kinds)) % len(mine)]


def _when(task: EconomyDecompose, op: Op) -> int:
    """Which of the actions long enough does the op: the last (by then the person has walked
    there), but a give or trade the first when an offer lately did not happen (the partners listed
    are here now: the person offers before they walk off, having seen one do so)."""
    if op.other and any(not o.done and o.op.other for o in task.outcomes):
        return 0
    return -1


def untried(task: EconomyDecompose) -> list[Op]:
    """The ops listed less those that did not happen lately, and, while another partner is
    listed, less the gives and trades with someone an offer to did not happen (all listed: none
    did not happen, or the outcomes are not known)."""
    failed = [o.op for o in task.outcomes if not o.done]
    if not failed:
        return task.ops
    ops = [o for o in task.ops if o.label not in {f.label for f in failed}]
    shunned = {f.other for f in failed if f.other}
    others = [o for o in ops if o.other not in shunned]
    return others if any(o.other for o in others) else ops  # (no one else listed: other goods with them)


# the stand-in's answers (scripted/registry.py): the task, the run's seed
answers(EconomyDecompose)(lambda t, seed: decompose(t, memory.rate))
