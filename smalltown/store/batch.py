"""Commits gathered into one transaction while a run goes flat out (`Save.batched`).

A headless run on the stand-in makes thousands of ticks a minute, and a commit each (5,000 in a
25-agent day): the commits themselves, and the log pages they rewrite again and again (an
agent's row, the clock), were a tenth of the run's CPU. In a batch, a tick's rows are written
at once but committed with the next ones: a commit is due when it holds model calls (a call is
never held back: asking again costs a model's time), a snapshot, or `seconds` after the last
commit; the batch's end commits the rest.

What a batch changes is only when the rows reach the file: the rows are the same, in the same
order, with the same ids. A process killed in a batch leaves the save at its last commit, a
whole tick at most `seconds` of ticks that asked no model earlier than without batches, and a
resumed run makes those ticks again exactly, as it does the ticks that changed nothing (which
are never written at all). A write that fails rolls the batch back: the save stays as it was at
its last commit.
"""

from __future__ import annotations

import sqlite3
import time
from contextlib import contextmanager
from typing import Iterator

from smalltown.store import writer
from smalltown.store.errors import guarded
from smalltown.store.records import TickChanges

BATCH_SECONDS = 0.05  # of wall time a batch holds ticks that asked no model


@guarded
class Batching:
    """The batch half of Save (store/save.py): `batched`, and the commit inside one."""

    _batch_seconds: float | None = None  # in a batch: how long a commit may wait
    _batch_since = 0.0  # (monotonic) the batch's last commit
    _gathered = False  # a batch's transaction is open, with rows not yet committed

    @contextmanager
    def batched(self, seconds: float = BATCH_SECONDS) -> Iterator[None]:
        """Gather commits until the block ends (then all of them are committed, however it ends)."""
        self._batch_seconds, self._batch_since = seconds, time.monotonic()
        try:
            yield
        finally:
            self._batch_seconds = None
            self.settle()

    def settle(self) -> None:
        """Commit what the batch gathered, if anything."""
        if not self._gathered:
            return
        self._gathered = False
        try:
            self.conn.execute("COMMIT")
        except BaseException as e:
            self._abort(e)
        self._batch_since = time.monotonic()
        self._committed()

    def _abort(self, e: BaseException) -> None:
        """Roll back after `e` (a failed write or commit, an interrupt) and raise it (an SQLite
        error as the SaveError naming the file)."""
        self._gathered = False
        if self.conn.in_transaction:  # SQLite may have rolled back already (a full disk)
            try:
                self.conn.execute("ROLLBACK")
            except sqlite3.Error:
                pass
        if isinstance(e, sqlite3.Error):
            raise self._sqlite_error(e) from None
        raise e

    def _batch_commit(self, changes: TickChanges, snapshot: bool) -> list[int]:
        """`commit` inside a batch: written now, committed when due (see above)."""
        if not self._gathered:
            try:
                self.conn.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as e:
                raise self._sqlite_error(e) from None
            self._gathered = True
        try:
            ids = writer.write(self.conn, changes)
            if snapshot:
                self._write_snapshot(changes.tick, changes.time)
        except BaseException as e:
            self._abort(e)
        if snapshot or changes.calls or time.monotonic() - self._batch_since >= self._batch_seconds:
            self.settle()
        return ids
