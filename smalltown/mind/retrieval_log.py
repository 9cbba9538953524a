"""A memory stream's log of the retrievals it made (drained by the engine each tick, written at
that tick), and the part of it a slow module's question takes along: the retrievals made for the
question when it is asked are logged with its calls, at the tick it is applied (sim/later.py)."""

from __future__ import annotations

from smalltown.store.records import Retrieval


class RetrievalLog:
    _retrievals: list[Retrieval]  # (the stream's: since its last drain)

    def mark(self) -> int:
        """Where the retrievals made from now on begin in the log (for `take_retrievals`)."""
        return len(self._retrievals)

    def take_retrievals(self, mark: int) -> list[Retrieval]:
        """The retrievals made since `mark`, taken out of the log (to be logged later: `put_retrievals`)."""
        taken, self._retrievals = self._retrievals[mark:], self._retrievals[:mark]
        return taken

    def put_retrievals(self, retrievals: list[Retrieval]) -> None:
        """Retrievals taken out earlier, logged now (drained at this tick)."""
        self._retrievals.extend(retrievals)
