"""The town's economy as the TUI shows it: who holds what, and the ledger, read from the
save through a `SaveReader` (bounded in replay: up to the tick shown), and the civics' events.

Holdings are the world file's starting inventories with the save's ledger replayed over them by
the engine's own arithmetic (state/ledger.py's `Ledger`: the same checks, so a ledger that does
not add up is said, not shown as counts). The replay is kept between reads and only the new rows
are applied while the reader's bound does not go back, so a live screen re-reading after each tick
costs one small query."""

from __future__ import annotations

from dataclasses import dataclass, field

from smalltown.state.ledger import Ledger
from smalltown.store.errors import SaveError
from smalltown.store.records import EventRow
from smalltown.tui.reader import SaveReader

CIVICS_KINDS = ("constitution", "tally")  # the civics' events the town screen shows the latest of


@dataclass
class TownGoods:
    """The economy at the reader's bound: holdings by holder (the chest among them) and the ledger."""
    items: tuple[str, ...]
    holders: tuple[str, ...]  # the chest first, then the agents in the world file's order
    chest: str
    holdings: dict[str, dict[str, int]] = field(default_factory=dict)
    rows: list[tuple] = field(default_factory=list)  # the ledger, oldest first
    problem: str = ""  # why the holdings are not shown (the ledger does not add up)


class EconomyView:
    """Reads a save's economy for one screen; `read()` again after each tick is cheap."""

    def __init__(self, reader: SaveReader):
        self.reader = reader
        world = reader.world()
        self.world = world
        self.on = world is not None and world.economy is not None
        self._economy: Ledger | None = None
        self._rows: list[tuple] = []
        self._tick: int | None = None  # the bound the replay was made at (None: the save's end)
        self._problem = ""

    def read(self) -> TownGoods | None:
        """The economy now (None: the world has none)."""
        if not self.on or self.world is None:
            return None
        bound = self.reader.until.tick if self.reader.until is not None else None
        going_back = self._economy is None or (bound is not None and (self._tick is None or bound < self._tick))
        if going_back:
            self._economy, self._rows, self._problem = Ledger(self.world), [], ""
        self._tick = bound
        new = self.reader.ledger(self._rows[-1][0] if self._rows else 0)
        if new and not self._problem:
            try:
                assert self._economy is not None
                self._economy.load(new, str(self.reader.path), bound if bound is not None else new[-1][1])
            except SaveError as e:
                self._problem = str(e)
        self._rows += new
        economy = self._economy
        assert economy is not None
        holders = (economy.chest, *(a.name for a in self.world.agents))
        return TownGoods(tuple(economy.items), holders, economy.chest,
                         {} if self._problem else {h: economy.holdings(h) for h in holders},
                         self._rows, self._problem)


def latest(reader: SaveReader, kind: str) -> EventRow | None:
    """The newest event of `kind` up to the reader's bound (a civics' kind may be one this
    version's event list does not name: the save is asked for it as it is)."""
    rows = reader.events(None, (kind,), limit=1)
    return rows[0] if rows else None
