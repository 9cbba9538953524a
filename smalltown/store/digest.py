"""A save's digest: a fingerprint of the simulation state (clock, agents, objects, memories,
the ledger). Not the call log (timings differ between runs) and not the event log (a record, not
state). Two runs that agree have the same digest, however their saves were packed or migrated."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from typing import Iterable

from smalltown.store import plans as _plans
from smalltown.store.packing import unpack_vector


def _vector_hex(blob: bytes | None) -> str:
    """A vector as SQLite's hex() wrote its float32 bytes before schema 6 packed them: the digest
    is of the numbers, so packing (or migrating) a save leaves it as it was."""
    return "" if blob is None else unpack_vector(blob, "memories: embedding").tobytes().hex().upper()


def digest(conn: sqlite3.Connection, ledger: Iterable[tuple]) -> str:
    """The digest of the save on `conn`, with its economy's `ledger` rows (Reader.ledger)."""
    h = hashlib.sha256()
    queries = (
        "SELECT key, value FROM meta WHERE key IN ('tick', 'game_time') ORDER BY key",
        None,  # the agents rows, each state whole (whether its plan is kept apart or not)
        "SELECT address, state FROM objects ORDER BY address",
    )
    for q in queries:
        for row in conn.execute(q) if q else _plans.agent_rows(conn, "name"):
            h.update(json.dumps(row).encode())
            h.update(b"\n")
    for row in conn.execute("SELECT agent, kind, description, created, last_accessed, importance, "
                            "embedding, evidence FROM memories ORDER BY id"):
        h.update(json.dumps((*row[:6], _vector_hex(row[6]), row[7])).encode())
        h.update(b"\n")
    for row in ledger:  # (no rows: the digest is as before the ledger)
        h.update(json.dumps(row[1:]).encode())
        h.update(b"\n")
    return h.hexdigest()
