"""The Reader's reads for `save check` (a base of store/reader.py's Reader): SQLite's own check
of the file, what opening refuses (store/checks.py), and the queries that judge rows against
the world the save holds (store/validate.py); the judging itself is the engine's (sim/check.py)."""

from __future__ import annotations

import sqlite3
from typing import Iterator

from smalltown.store import checks as _checks
from smalltown.store import conversations as _conversations
from smalltown.store import snapshots as _snapshots
from smalltown.store import validate as _validate
from smalltown.store.errors import guarded


@guarded
class CheckReads:
    conn: sqlite3.Connection  # (the Reader's)

    def integrity(self, limit: int = 50) -> list[str]:
        """SQLite's own check of the file, page by page: ["ok"], or what it found."""
        return [r[0] for r in self.conn.execute(f"PRAGMA integrity_check({int(limit)})")]

    def row_problems(self, version: int, limit: int = 20) -> Iterator[str]:
        """What opening the save refuses on, every problem of it (store/checks.py)."""
        yield from _checks.row_problems(self.conn, version, limit)

    def events_off_map(self, width: int, height: int) -> list[tuple[int, str]]:
        """(id, kind) of events whose tiles are outside a map of this size (store/validate.py)."""
        return _validate.events_off_map(self.conn, width, height)

    def embedding_dims(self) -> list[tuple[int, int]]:
        """(numbers, how many) of the saved vectors (store/validate.py)."""
        return _validate.embedding_dims(self.conn)

    def memory_agents(self) -> list[tuple[str, int]]:
        """(agent, how many memories) of every owner of memories."""
        return _validate.memory_agents(self.conn)

    def memories_after(self, stamp: str) -> list[tuple[int, str, str]]:
        """(id, column, time) of memories made or accessed after the game time `stamp`."""
        return _validate.memories_after(self.conn, stamp)

    def missing_evidence(self) -> list[tuple[int, int]]:
        """(memory id, cited id) of evidence citing no memory."""
        return _validate.missing_evidence(self.conn)

    def snapshot_rows(self) -> Iterator[tuple[int, bytes]]:
        """(tick, compressed state) of every snapshot, oldest first."""
        yield from _snapshots.snapshot_rows(self.conn)

    def raw_conversations(self) -> Iterator[tuple]:
        """Every conversations row as stored, JSON unparsed (store/conversations.py)."""
        yield from _conversations.raw_conversations(self.conn)
