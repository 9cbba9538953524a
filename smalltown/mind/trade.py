"""The mind's side of a world's economy: the decomposition asked with the ops feasible
where the activity happens, and the op an answer names attached to its action.

The engine hands the mind `Mind.market` (sim/economy.py's view of the town now): the mind never
moves an item. An op rides on its action (PlanItem.op, then Action.op) until the engine applies it
when the action ends, checking it again then; what came of it reaches the next decompositions
through action awareness (mind/awareness.py, when on)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from smalltown.llm.tasks import EconomyDecompose, Output
from smalltown.mind import awareness
from smalltown.state.plan import PlanItem

if TYPE_CHECKING:
    from smalltown.mind.core import MindCore


def decompose(mind: "MindCore", place: str, inputs: dict) -> EconomyDecompose:
    """The decomposition question with the ops feasible at `place` (a sector), the inventory and
    what came of the ops tried lately (action awareness: none when off)."""
    ops, inventory = mind.market(place)
    return EconomyDecompose(**inputs, ops=ops, inventory=inventory, need=mind.state.goal_need,
                            outcomes=awareness.op_outcomes(mind, inputs["now"]))


def attach(task: EconomyDecompose, answered: list[Output], actions: list[PlanItem]) -> None:
    """Each answered action's op on the action it became (fit_actions keeps them in order: the
    k-th answered action is the k-th fitted one, or was cut off)."""
    for a, item in zip(answered, actions):
        op = task.op(getattr(a, "op", ""))
        if op is not None:
            item.op = op.model_dump()
