"""Who holds what in a world with an economy: the world file's starting inventories with a save's
ledger replayed over them, every row checked (nothing made from nothing: only a gather or a craft's
output has no giver; no holding below zero). The engine's `Economy` (sim/economy.py) is this with
the ops agents do and each transfer written to the tick's commit; the TUI and the measures replay a
save's ledger with it, so holdings have one arithmetic."""

from __future__ import annotations

from smalltown.store.errors import SaveError
from smalltown.store.validate import LEDGER_KINDS
from smalltown.world.economy import CHEST
from smalltown.world.model import World

MAKES = frozenset({"gather", "craft"})  # the kinds whose giver may be the world ("")
USES_UP = frozenset({"craft_in"})  # the kinds whose taker may be the world ("")


class Refused(Exception):
    """A transfer or an op that fails its check (the message says why)."""


class Ledger:
    """Holdings by holder (the agents and the chest), kept as the ledger moves them."""

    chest = CHEST

    def __init__(self, world: World):
        assert world.economy is not None
        self.world, self.spec = world, world.economy
        self.items = self.spec.items
        self._held: dict[str, dict[str, int]] = {a.name: {} for a in world.agents}
        self._held[CHEST] = {}
        for holder, inv in self.spec.starting().items():
            self._held[holder].update(inv)
        self.rows = 0  # ledger rows so far

    def holdings(self, holder: str) -> dict[str, int]:
        held = self._held.get(holder, {})
        return {i: held[i] for i in self.items if held.get(i, 0) > 0}

    def move(self, kind: str, giver: str, taker: str, item: str, qty: int) -> int:
        """Move `qty` of `item` from `giver` to `taker`; the ledger row's number. Refused (nothing
        moved) when it is not feasible."""
        why = self._problem(kind, giver, taker, item, qty)
        if why:
            raise Refused(why)
        if giver:
            self._held[giver][item] -= qty
        if taker:
            self._held[taker][item] = self._held[taker].get(item, 0) + qty
        self.rows += 1
        return self.rows

    def _problem(self, kind: str, giver: str, taker: str, item: str, qty: object) -> str:
        if kind not in LEDGER_KINDS:
            return f"unknown kind of transfer {kind!r}"
        if item not in self.items:
            return f"unknown item {item!r}"
        if not isinstance(qty, int) or isinstance(qty, bool) or qty < 1:
            return f"quantity {qty!r} is not a whole number of at least 1"
        for who, role, world_ok in ((giver, "giver", kind in MAKES), (taker, "taker", kind in USES_UP)):
            if who == "" and not world_ok:
                return f"a {kind} needs a {role}: nothing comes from nowhere" if role == "giver" \
                    else f"a {kind} needs a taker"
            if who and who not in self._held:
                return f"unknown {role} {who!r}"
        if giver and giver == taker:
            return f"{giver} cannot give to itself"
        if giver and self._held[giver].get(item, 0) < qty:
            return f"{giver} holds {self._held[giver].get(item, 0)} {item}, not {qty}"
        return ""

    def load(self, rows: list[tuple], where: str, tick: int) -> None:
        """The save's ledger replayed over the starting inventories: a row that could not have
        happened (an unknown item, more than was held, after the save's clock) refuses the save."""
        for rid, rtick, _time, kind, giver, taker, item, qty, _note in rows:
            if rtick > tick:
                raise SaveError(f"{where}: ledger row {rid}: at tick {rtick}, after the save's clock ({tick})")
            try:
                self.move(kind, giver, taker, item, qty)
            except Refused as e:
                raise SaveError(f"{where}: ledger row {rid}: {e} (the ledger does not add up: not this "
                                f"world's economy, or edited)") from None
