"""The save's tables, and the migrations that bring an older save to them.

A save's version is the meta value `schema_version`; MIGRATIONS takes it from N to N + 1. (sqlite-utils'
`Migrations` records what it applied in a table of its own with the wall-clock time: every save
would gain a table and a timestamp, and an older smalltown would refuse the new table. The
version in meta is what saves have always carried, so it stays.)

Every table, index and column is made here, one way: sqlite-utils (`db[name].create`,
`create_index`, `add_column`). A save made before keeps the SQL it was made with (some tables
were once made by hand-written SQL); store/schema_check.py compares SQL token by token,
identifiers unquoted, so the two spellings of one table are alike.
"""

from __future__ import annotations

import sqlite3
from functools import cache

import sqlite_utils

from smalltown.store import calls as _calls
from smalltown.store import conversations as _conversations
from smalltown.store import packing as _packing

SCHEMA_VERSION = 11
TIME_FMT = "%Y-%m-%d %H:%M:%S"  # how a save writes game times


def create_schema(db: sqlite_utils.Database) -> None:
    """A new save's tables: schema 1's, then what each migration adds."""
    _create_v1(db)
    for step in MIGRATIONS.values():  # a new save has what each migration adds
        step(db)


def _create_v1(db: sqlite_utils.Database) -> None:
    """Schema 1's tables and indexes."""
    db["meta"].create({"key": str, "value": str}, pk="key")
    db["agents"].create(
        {"name": str, "x": int, "y": int, "dest": str, "action": str, "address": str, "state": str},
        pk="name",
    )
    db["objects"].create({"address": str, "state": str}, pk="address")
    db["memories"].create(
        {"id": int, "agent": str, "kind": str, "description": str, "created": str,
         "last_accessed": str, "importance": int, "embedding": bytes, "evidence": str},
        pk="id",
    )
    db["memories"].create_index(["agent", "id"])
    db["events"].create(
        {"id": int, "tick": int, "time": str, "agent": str, "kind": str, "text": str, "data": str},
        pk="id",
    )
    db["events"].create_index(["tick"])
    db["events"].create_index(["agent", "kind"])
    db["llm_calls"].create(
        {"id": int, "tick": int, "time": str, "agent": str, "task": str, "prompt": str,
         "raw_answer": str, "parsed_answer": str, "prompt_tokens": int, "completion_tokens": int,
         "cached_tokens": int, "ms": float, "backend": str, "model": str, "note": str},
        pk="id",
    )
    db["llm_calls"].create_index(["agent", "task"])


def _create_v2(db: sqlite_utils.Database) -> None:
    """Added in schema 2: the embedding cache and the retrieval log."""
    db["embeddings"].create({"text": str, "vector": bytes}, pk="text")  # texts that are not memories (queries)
    db["retrievals"].create(
        {"id": int, "tick": int, "time": str, "agent": str, "purpose": str, "query": str, "results": str},
        pk="id",
    )
    db["retrievals"].create_index(["agent", "id"])


def _create_v3(db: sqlite_utils.Database) -> None:
    """Added in schema 3: snapshots of the state (each game hour, and on demand), so a run can be
    rewound, forked and replayed. A save migrated from 2 has none until it is next run."""
    db["snapshots"].create({"tick": int, "time": str, "state": bytes}, pk="tick")


def _create_v4(db: sqlite_utils.Database) -> None:
    """Added in schema 4: conversations as rows of their own (rebuilt from the `said` events of an
    older save), and each model call's key and fallback reason."""
    db["conversations"].create(
        {"id": int, "tick": int, "time": str, "end_time": str, "place": str, "initiator": str, "other": str,
         "reason": str, "lines": str, "chats": str, "relationships": str},
        pk="id",
    )
    db["conversations"].create_index(["tick"])
    db["llm_calls"].add_column("key", str)  # the question's key (a hash of its typed inputs)
    db["llm_calls"].add_column("fallback", str, not_null_default="")  # the fallback's reason
    _calls.mark_old_fallbacks(db.conn)
    _conversations.rebuild_from_said(db.conn)


def _create_v5(db: sqlite_utils.Database) -> None:
    """Added in schema 5: agents' day plans apart from their states (store/plans.py), so an
    action change does not rewrite the plan. An older save's states keep their plans until each
    agent is next written."""
    db["plans"].create({"agent": str, "plan": str}, pk="agent", if_not_exists=True)


def _pack_v6(db: sqlite_utils.Database) -> None:
    """Schema 6: vectors packed (sparse when shorter, exact either way) and prompts and raw answers
    compressed when that is shorter (store/packing.py). Nothing is added: a new save has nothing to pack."""
    conn = db.conn
    conn.executemany("UPDATE memories SET embedding=? WHERE id=?",
                     [(_packing.pack_vector(_packing.unpack_vector(v, f"memories row {i}")), i) for i, v in
                      conn.execute("SELECT id, embedding FROM memories WHERE typeof(embedding) = 'blob'")])
    if "embeddings" in db.table_names():
        conn.executemany("UPDATE embeddings SET vector=? WHERE rowid=?",
                         [(_packing.pack_vector(_packing.unpack_vector(v, "embeddings")), i) for i, v in
                          conn.execute("SELECT rowid, vector FROM embeddings WHERE typeof(vector) = 'blob'")])
    conn.executemany("UPDATE llm_calls SET prompt=?, raw_answer=? WHERE id=?",
                     ((_packing.pack_text(p), _packing.pack_text(r), i) for i, p, r in conn.execute(
                         "SELECT id, prompt, raw_answer FROM llm_calls WHERE typeof(prompt) = 'text' "
                         "OR typeof(raw_answer) = 'text'").fetchall()))


def _pack_v7(db: sqlite_utils.Database) -> None:
    """Schema 7: parsed answers compressed as prompts are, and retrievals' scores packed
    (store/packing.py). Nothing is added: a new save has nothing to pack."""
    conn = db.conn
    conn.executemany("UPDATE llm_calls SET parsed_answer=? WHERE id=?",
                     ((_packing.pack_text(p), i) for i, p in conn.execute(
                         "SELECT id, parsed_answer FROM llm_calls WHERE typeof(parsed_answer) = 'text'").fetchall()))
    if "retrievals" in db.table_names():
        conn.executemany("UPDATE retrievals SET results=? WHERE id=?",
                         ((_packing.pack_scores(_packing.unpack_scores(r, f"retrievals row {i}")), i) for i, r in
                          conn.execute("SELECT id, results FROM retrievals WHERE typeof(results) = 'text'").fetchall()))


def _create_v8(db: sqlite_utils.Database) -> None:
    """Added in schema 8: the economy's ledger, every transfer of an item, written in its
    tick's commit. An older save gets it empty (its world has no economy, or none moved yet)."""
    if "ledger" in db.table_names():  # (a save whose version was set back by hand: it has it)
        return
    db["ledger"].create({"id": int, "tick": int, "time": str, "kind": str, "giver": str, "taker": str,
                         "item": str, "qty": int, "note": str}, pk="id")
    db["ledger"].create_index(["tick"])


def _create_v9(db: sqlite_utils.Database) -> None:
    """Added in schema 9: each model call's attempts (`llm_calls.attempts`, JSON, NULL when the
    first attempt answered): number, tokens, milliseconds and why each failed. An older save's
    calls have none (it summed its attempts' tokens and kept no more)."""
    if not _calls.has_attempts_column(db.conn):  # (a save whose version was set back by hand: it has it)
        db["llm_calls"].add_column("attempts", str)


def _text_v10(db: sqlite_utils.Database) -> None:
    """Schema 10: the call log's prompts and answers as text (those schemas 6 to 9 compressed are
    unpacked), so that any SQLite tool reads them. Nothing is added: a new save has nothing to unpack.
    A window of rows at a time, so a large save's log is never all in memory."""
    conn, after = db.conn, 0
    while True:
        rows = conn.execute("SELECT id, prompt, raw_answer, parsed_answer FROM llm_calls WHERE id > ? AND "
                            "(typeof(prompt) = 'blob' OR typeof(raw_answer) = 'blob' OR typeof(parsed_answer) = 'blob') "
                            "ORDER BY id LIMIT 1000", (after,)).fetchall()
        if not rows:
            return
        conn.executemany("UPDATE llm_calls SET prompt=?, raw_answer=?, parsed_answer=? WHERE id=?",
                         [(*(_packing.unpack_text(v, f"llm_calls row {i}") for v in texts), i) for i, *texts in rows])
        after = rows[-1][0]


def _create_v11(db: sqlite_utils.Database) -> None:
    """Added in schema 11: the meme summaries, one row per town (and the rural area, town "") each
    period the `memes` module asks: the topics and keywords its answer gave, and the call's key. An
    older save gets it empty (its run asked none)."""
    if "memes" in db.table_names():  # (a save whose version was set back by hand: it has it)
        return
    db["memes"].create({"id": int, "tick": int, "time": str, "town": str, "topics": str, "call": str}, pk="id")
    db["memes"].create_index(["tick"])


MIGRATIONS = {1: _create_v2, 2: _create_v3, 3: _create_v4, 4: _create_v5, 5: _pack_v6, 6: _pack_v7,
              7: _create_v8, 8: _create_v9, 9: _text_v10, 10: _create_v11}  # from version N to N + 1


# (type, name, table, SQL) of one entry of sqlite_master: a table, an index (its SQL None for
# the one SQLite makes for a PRIMARY KEY or UNIQUE column), a trigger or a view
Entry = tuple[str, str, str, "str | None"]


@cache
def reference(version: int = SCHEMA_VERSION) -> tuple[Entry, ...]:
    """What a save at schema `version` holds as smalltown makes it, each table and index with the
    SQL SQLite stores for it: schema 1's, then what each migration before `version` adds (a new
    save's, SCHEMA_VERSION, is what create_schema makes; an older one's is what its smalltown wrote,
    or what migrating to it made). Built in an empty database in memory."""
    conn = sqlite3.connect(":memory:")
    try:
        db = sqlite_utils.Database(conn)
        _create_v1(db)
        for v in range(1, version):
            MIGRATIONS[v](db)
        return tuple(conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name"))
    finally:
        conn.close()
