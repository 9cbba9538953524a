"""The save file: one self-contained SQLite database per run, committed once per tick."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterable, Iterator

import sqlite_utils

SCHEMA_VERSION = 2
SQLITE_MAGIC = b"SQLite format 3\x00"


class SaveError(Exception):
    """A save that cannot be opened or written, with a message for the user."""


def is_save(path: str | Path) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(16) == SQLITE_MAGIC
    except OSError:
        return False


def _create_schema(db: sqlite_utils.Database) -> None:
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
    _create_v2(db)


def _create_v2(db: sqlite_utils.Database) -> None:
    """Added in schema 2: the embedding cache and the retrieval log."""
    db["embeddings"].create({"text": str, "vector": bytes}, pk="text")  # texts that are not memories (queries)
    db["retrievals"].create(
        {"id": int, "tick": int, "time": str, "agent": str, "purpose": str, "query": str, "results": str},
        pk="id",
    )
    db["retrievals"].create_index(["agent", "id"])


MIGRATIONS = {1: _create_v2}  # from version N to N + 1


class Save:
    def __init__(self, conn: sqlite3.Connection, path: Path):
        self.conn = conn
        self.path = path

    # --- opening ------------------------------------------------------------------------------

    @classmethod
    def create(cls, path: str | Path, meta: dict[str, Any], overwrite: bool = False) -> "Save":
        path = Path(path)
        if path.exists():
            if not overwrite:
                raise SaveError(f"{path}: a file is already there (continue it with "
                                f"`smalltown run {path}`, or pass --overwrite)")
            for suffix in ("", "-wal", "-shm"):
                Path(f"{path}{suffix}").unlink(missing_ok=True)
        path.parent.mkdir(parents=True, exist_ok=True)
        save = cls(cls._connect(path), path)
        db = sqlite_utils.Database(save.conn)
        with save.transaction():
            _create_schema(db)
            save.set_meta({"schema_version": SCHEMA_VERSION, **meta})
        return save

    @classmethod
    def open(cls, path: str | Path) -> "Save":
        path = Path(path)
        if not path.exists():
            raise SaveError(f"{path}: no such save")
        if not is_save(path):
            raise SaveError(f"{path}: not a smalltown save (not an SQLite database)")
        save = cls(cls._connect(path), path)
        try:
            version = save.meta("schema_version")
        except sqlite3.DatabaseError as e:
            raise SaveError(f"{path}: not a smalltown save ({e})") from None
        if version is None:
            raise SaveError(f"{path}: not a smalltown save (no schema version in meta)")
        if not isinstance(version, int) or version > SCHEMA_VERSION or (version < SCHEMA_VERSION and version not in MIGRATIONS):
            raise SaveError(f"{path}: save schema version {version}; this smalltown reads versions "
                            f"up to {SCHEMA_VERSION} (a newer smalltown wrote it?)")
        while version < SCHEMA_VERSION:
            with save.transaction():
                MIGRATIONS[version](sqlite_utils.Database(save.conn))
                version += 1
                save.set_meta({"schema_version": version})
        return save

    @staticmethod
    def _connect(path: Path) -> sqlite3.Connection:
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA journal_mode=WAL")
        # NORMAL in WAL mode: a killed process never corrupts the file or loses a commit
        conn.execute("PRAGMA synchronous=NORMAL")
        return conn

    def close(self) -> None:
        self.conn.close()

    # --- writing ------------------------------------------------------------------------------

    @contextmanager
    def transaction(self) -> Iterator[None]:
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    def set_meta(self, values: dict[str, Any]) -> None:
        self.conn.executemany(
            "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value=excluded.value",
            [(k, json.dumps(v)) for k, v in values.items()],
        )

    def meta(self, key: str, default: Any = None) -> Any:
        row = self.conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return json.loads(row[0]) if row else default

    def upsert_agents(self, rows: Iterable[tuple]) -> None:
        """rows: (name, x, y, dest, action, address, state)"""
        self.conn.executemany(
            "INSERT INTO agents(name, x, y, dest, action, address, state) VALUES (?,?,?,?,?,?,?) "
            "ON CONFLICT(name) DO UPDATE SET x=excluded.x, y=excluded.y, dest=excluded.dest, "
            "action=excluded.action, address=excluded.address, state=excluded.state", rows)

    def move_agents(self, rows: Iterable[tuple]) -> None:
        """rows: (x, y, name)"""
        self.conn.executemany("UPDATE agents SET x=?, y=? WHERE name=?", rows)

    def set_objects(self, rows: Iterable[tuple[str, str]]) -> None:
        self.conn.executemany(
            "INSERT INTO objects(address, state) VALUES (?, ?) "
            "ON CONFLICT(address) DO UPDATE SET state=excluded.state", rows)

    def add_events(self, rows: Iterable[tuple]) -> None:
        """rows: (tick, time, agent, kind, text, data-json)"""
        self.conn.executemany(
            "INSERT INTO events(tick, time, agent, kind, text, data) VALUES (?,?,?,?,?,?)", rows)

    def add_memories(self, rows: Iterable[tuple]) -> None:
        """rows: (id, agent, kind, description, created, last_accessed, importance, embedding, evidence)"""
        self.conn.executemany(
            "INSERT INTO memories(id, agent, kind, description, created, last_accessed, importance, "
            "embedding, evidence) VALUES (?,?,?,?,?,?,?,?,?)", rows)

    def touch_memories(self, rows: Iterable[tuple[str, int]]) -> None:
        """rows: (last_accessed, id): retrieval updates a record's last access."""
        self.conn.executemany("UPDATE memories SET last_accessed=? WHERE id=?", rows)

    def memories(self) -> Iterator[tuple]:
        """(id, agent, kind, description, created, last_accessed, importance, embedding, evidence)"""
        yield from self.conn.execute(
            "SELECT id, agent, kind, description, created, last_accessed, importance, embedding, "
            "evidence FROM memories ORDER BY id")

    def add_embeddings(self, rows: Iterable[tuple[str, bytes]]) -> None:
        self.conn.executemany("INSERT OR IGNORE INTO embeddings(text, vector) VALUES (?, ?)", rows)

    def embeddings(self) -> Iterator[tuple[str, bytes]]:
        yield from self.conn.execute("SELECT text, vector FROM embeddings")

    def add_retrievals(self, rows: Iterable[tuple]) -> None:
        """rows: (tick, time, agent, purpose, query, results-json)"""
        self.conn.executemany(
            "INSERT INTO retrievals(tick, time, agent, purpose, query, results) VALUES (?,?,?,?,?,?)", rows)

    def add_calls(self, rows: Iterable[tuple]) -> None:
        self.conn.executemany(
            "INSERT INTO llm_calls(tick, time, agent, task, prompt, raw_answer, parsed_answer, "
            "prompt_tokens, completion_tokens, cached_tokens, ms, backend, model, note) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)", rows)

    # --- reading ------------------------------------------------------------------------------

    def agents(self) -> list[sqlite3.Row]:
        cur = self.conn.execute("SELECT name, x, y, dest, action, address, state FROM agents")
        return cur.fetchall()

    def objects(self) -> dict[str, str]:
        return dict(self.conn.execute("SELECT address, state FROM objects"))

    def count(self, table: str) -> int:
        assert table in {"agents", "objects", "memories", "events", "llm_calls", "retrievals", "embeddings"}
        return self.conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]

    def digest(self) -> str:
        """A fingerprint of the simulation state: clock, agents, objects, memories. Not the call
        log (timings differ between runs) and not the event log (a record, not state)."""
        h = hashlib.sha256()
        queries = (
            "SELECT key, value FROM meta WHERE key IN ('tick', 'game_time') ORDER BY key",
            "SELECT name, x, y, dest, action, address, state FROM agents ORDER BY name",
            "SELECT address, state FROM objects ORDER BY address",
            "SELECT agent, kind, description, created, last_accessed, importance, hex(embedding), "
            "evidence FROM memories ORDER BY id",
        )
        for q in queries:
            for row in self.conn.execute(q):
                h.update(json.dumps(row).encode())
                h.update(b"\n")
        return h.hexdigest()
