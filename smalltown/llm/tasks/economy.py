"""The economy's part of the seam: the ops an agent may do where it will act, typed,
and the decomposition that may attach one to an action.

Only a world with an [economy] asks `EconomyDecompose` (name "decompose_economy", the decompose
prompt with the ops and the inventory added): every other world asks `Decompose` as before, its
prompt and schema unchanged. Each action may name one op by its `label`, narrowed by the schema to
the ops listed (as `object` is narrowed to the objects); the engine applies it when the action
ends (sim/economy.py), checking it again then."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from smalltown.llm.tasks.base import Output, _Data, _count, _enum, _schema
from smalltown.llm.tasks.plan import Decompose, DecomposeOut, SubAction

OpKind = Literal["gather", "craft", "give", "trade", "deposit"]


class Op(_Data):
    """One feasible op: `qty` of `item` gathered, crafted (the output), given, traded away or
    deposited; `other` is whom with (give, trade); a trade gets `get_qty` of `get` back;
    `minutes` is the least an action doing it takes (a craft's recipe)."""

    op: OpKind
    item: str
    qty: int = Field(ge=1)
    other: str = ""
    get: str = ""
    get_qty: int = 0
    minutes: int = 0

    @property
    def label(self) -> str:
        """How the prompt lists it and an answer names it: "craft 1 bread", "give 1 bread to Ann"."""
        if self.op == "give":
            return f"give {self.qty} {self.item} to {self.other}"
        if self.op == "trade":
            return f"trade {self.qty} {self.item} with {self.other} for {self.get_qty} {self.get}"
        if self.op == "deposit":
            return f"deposit {self.qty} {self.item} in the town chest"
        return f"{self.op} {self.qty} {self.item}"


class OpOutcome(_Data):
    """What came of an op the agent tried, as action awareness kept it (mind/awareness.py): `done`,
    or not, with the engine's reason `why` (its text: "Ann Lee is not here"), `minutes_ago` before
    the question's time. Only with the setting on: without it the agent does not know."""

    op: Op
    done: bool
    why: str = ""
    minutes_ago: int = Field(ge=0)


class Holding(_Data):
    item: str
    qty: int


class OpSubAction(SubAction):
    op: str = Field(default="", max_length=200, description="an op done by this action: one of the ops listed, or empty")


class EconomyDecomposeOut(DecomposeOut):
    actions: list[OpSubAction] = Field(min_length=1, max_length=10)


class EconomyDecompose(Decompose):
    """Decompose, in a world with an economy: with the ops feasible at `place` now and the agent's
    inventory, `need` (its goal's need word, when goal generation is on) and `outcomes` (what came
    of the ops it tried lately, newest last: action awareness, when on)."""

    name: ClassVar[str] = "decompose_economy"
    template_name: ClassVar[str] = "decompose"
    output: ClassVar[type[Output]] = EconomyDecomposeOut
    shrinkable: ClassVar[tuple[str, ...]] = ("ops", "promises")  # the last ops are gives and trades
    ops: list[Op] = []
    inventory: list[Holding] = []
    need: str = ""
    outcomes: list[OpOutcome] = []
    # (left out of the dump, so of the question's key, when empty: a run without action awareness
    # asks the same questions as before it was carried)
    quiet: ClassVar[tuple[str, ...]] = (*Decompose.quiet, "outcomes")

    def schema(self) -> dict:
        s = _schema(self.output)  # (Decompose's narrowing, on this output's action, then the ops)
        if self.objects:
            s = _enum(s, ("$defs", "OpSubAction", "properties", "object"), self.objects)
        s = _count(s, ("properties", "ratings"), len(self.rate), len(self.rate))
        return _enum(s, ("$defs", "OpSubAction", "properties", "op"), ["", *self.labels()])

    def labels(self) -> list[str]:
        return [o.label for o in self.ops]

    def op(self, label: str) -> Op | None:
        return next((o for o in self.ops if o.label == label), None) if label else None

    def check(self, out: Output) -> str:
        bad = [a.op for a in out.actions if a.op and self.op(a.op) is None]
        return f"op {bad[0]!r} is not one of the ops listed" if bad else super().check(out)
