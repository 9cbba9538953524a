"""A save's memories as a stream loads them: one agent's rows at a time, in id order (the index on
(agent, id)), never the whole table. Times come as whole seconds since 2000-01-01 (SQLite parses
them: no Python datetime per row; a save's times are whole seconds, validate.py checks their
form), evidence parsed only where a row cites some, and each vector as stored (store/packing.py
unpacks it only for a text the stream does not hold yet)."""

from __future__ import annotations

import json
import sqlite3
from typing import Iterator

EPOCH_UNIX = 946_684_800  # 2000-01-01 00:00:00 UTC in Unix seconds (mind.memory.EPOCH)
_SECONDS = "CAST(strftime('%s', {0}) AS INTEGER) - " + str(EPOCH_UNIX)


def agent_memories(conn: sqlite3.Connection, agent: str) -> Iterator[tuple]:
    """(id, kind, description, created, last_accessed, importance, evidence, embedding) of the
    agent's memories, oldest first: times in seconds since 2000-01-01, evidence a tuple of ids (None: none)."""
    rows = conn.execute(
        f"SELECT id, kind, description, {_SECONDS.format('created')}, {_SECONDS.format('last_accessed')}, "
        "importance, CASE WHEN evidence IS NULL OR evidence = '[]' THEN NULL ELSE evidence END, embedding "
        "FROM memories WHERE agent = ? ORDER BY id", (agent,))
    for r in rows:
        yield r if r[6] is None else (*r[:6], tuple(json.loads(r[6])), r[7])


def memory_extent(conn: sqlite3.Connection) -> tuple[int, int]:
    """(the highest memory id or 0, how many records a schema-1 save kept without a rating or a
    vector: those are completed as the save opens, from every agent's records at once)."""
    top, legacy = conn.execute("SELECT coalesce(max(id), 0), coalesce(sum(embedding IS NULL OR importance IS NULL), 0) "
                               "FROM memories").fetchone()
    return top, legacy
