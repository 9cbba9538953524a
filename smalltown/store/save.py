"""The save file: one self-contained SQLite database per run, committed once per tick."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import struct
import zlib
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any, Iterable, Iterator

import sqlite_utils

from smalltown.store import calls as _calls
from smalltown.store import conversations as _conversations
from smalltown.store import validate as _validate
from smalltown.store.conversations import Conversation
from smalltown.store.lock import SaveBusy, WriterLock, lock_file
from smalltown.store.reading import connect_reader, writable

SCHEMA_VERSION = 4
SQLITE_MAGIC = b"SQLite format 3\x00"


class SaveError(Exception):
    """A save that cannot be opened or written, with a message for the user."""


TIME_FMT = "%Y-%m-%d %H:%M:%S"  # how a save writes game times


def copy_save(src: str | Path, dst: str | Path) -> Path:
    """Copy a save through SQLite's backup API, reading the original through a read-only
    connection: consistent even while the original is being run, which it never changes. The copy
    is built aside and moved into place whole (see Aside): a copy killed half-way leaves `dst` as
    it was. Replaces a file at `dst` (the callers ask first)."""
    src, dst = Path(src), Path(dst)
    aside = Aside(dst)
    try:
        copy_pages(src, aside.tmp)
        aside.place()
    finally:
        aside.close()
    return dst


def copy_pages(src: Path, dst: Path) -> None:
    """The pages of the save `src`, as of its last commit, into the new file `dst`."""
    try:
        a = connect_reader(src)
    except sqlite3.DatabaseError as e:
        raise SaveError(f"{src}: cannot be copied ({e})") from None
    try:
        b = sqlite3.connect(dst)
        try:
            a.backup(b)
        finally:
            b.close()
    except sqlite3.DatabaseError as e:
        raise SaveError(f"{src}: cannot be copied ({e})") from None
    finally:
        a.close()


# --- making a save file: one writer, and whole or not at all -------------------------------------

SIDECARS = ("-wal", "-shm", "-journal")  # SQLite's files beside a database
PARTIAL = ".partial"  # a save being built, beside where it will be


def remove_db(path: Path) -> None:
    """A database file and SQLite's files beside it."""
    for suffix in ("", *SIDECARS):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def take_lock(path: Path) -> WriterLock:
    """The save's writer lock (store/lock.py), or a SaveError naming the process that holds it."""
    try:
        return WriterLock.take(path)
    except SaveBusy as e:
        raise SaveError(f"{path}: another process is writing this save: {e.holder}. One writer at a time: "
                        f"wait for it to end (or stop it), then try again; reading the save (inspect, "
                        f"save info, replay) works meanwhile") from None
    except OSError as e:
        if read_only(path):  # read-only media: say so, as opening it to write would
            raise SaveError(_read_only_message(path)) from None
        raise SaveError(f"{path}: cannot take the writer lock {lock_file(path).name} ({e.strerror or e}): "
                        f"is its folder writable?") from None


class Aside:
    """A new save built under a temporary name beside `dst` (NAME.partial: the same folder, so
    the same file system) and moved into place by one rename once it is complete. Whatever stops
    the build (a kill, a full disk, an error), `dst` is as it was or the whole new file, never a
    part of one. The writer lock of `dst` is held from the start: nobody else writes or builds
    it meanwhile. A killed build leaves NAME.partial behind; the next build at NAME removes it."""

    def __init__(self, dst: str | Path):
        self.dst = Path(dst)
        self.tmp = self.dst.with_name(self.dst.name + PARTIAL)
        self.placed = False
        try:
            self.dst.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise SaveError(f"{self.dst}: cannot make its folder ({e.strerror or e})") from None
        self.lock = take_lock(self.dst)
        try:
            remove_db(self.tmp)
        except BaseException:
            self.lock.release()
            raise

    def place(self) -> None:
        """Move the finished file into place; every connection to it must be closed (a write-ahead
        log still beside it would be left behind)."""
        if any(Path(f"{self.tmp}{s}").exists() and Path(f"{self.tmp}{s}").stat().st_size
               for s in ("-wal", "-journal")):
            raise SaveError(f"{self.dst}: the new save is not complete (its log was not folded in)")
        Path(f"{self.tmp}-shm").unlink(missing_ok=True)
        try:
            _fsync(self.tmp)
            for suffix in SIDECARS:  # the old file's log must never be applied to the new one
                Path(f"{self.dst}{suffix}").unlink(missing_ok=True)
            os.replace(self.tmp, self.dst)
            _fsync(self.dst.parent)
        except OSError as e:
            raise SaveError(f"{self.dst}: cannot be written ({e.strerror or e})") from None
        self.placed = True

    def close(self) -> None:
        """Done: an unplaced build is removed, and the lock let go."""
        if not self.placed:
            remove_db(self.tmp)
        self.lock.release()


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def is_save(path: str | Path) -> bool:
    try:
        if not Path(path).is_file():  # a named pipe or a device would be waited on, not read
            return False
        with open(path, "rb") as f:
            return f.read(16) == SQLITE_MAGIC
    except OSError:
        return False


# A save from a stranger is data. Its meta values are bounded (the world and map texts as their
# files are, see world/load.py), and it may hold only the tables and indexes smalltown makes.
META_MAX_CHARS = {"world_text": 1_000_000, "map_text": 4_000_000}
META_MAX_OTHER = 1_000_000
META_MAX_ROWS = 10_000


def read_only(path: Path) -> bool:
    """The save cannot be written: the file or its folder (where SQLite keeps its log) is
    read-only, or marked so (honoured even for root, who may write anything)."""
    return path.exists() and not writable(path)


def _read_only_message(path: Path) -> str:
    what = "the save file is" if not writable(path, folder=False) else \
        "its folder is read-only (SQLite writes its log beside the save), so the save is"
    return (f"{path}: {what} read-only; make it writable, or continue it into a new file with "
            f"`smalltown run {path} --save NEW.sqlite`")


def explain(path: Path, e: sqlite3.Error) -> str:
    """An SQLite error as a message that names the save and says what to do."""
    msg = str(e)
    if "disk is full" in msg or "database or disk is full" in msg:
        return (f"{path}: cannot write: the disk is full (or the save reached its size limit); the tick "
                f"in flight was not saved, and the save is intact up to its last committed tick. "
                f"Free some space and continue it with `smalltown run {path}`")
    if "readonly" in msg or "read-only" in msg:
        return (f"{path}: cannot write: the save is read-only; make it writable, or continue it into "
                f"a new file with `smalltown run {path} --save NEW.sqlite`")
    if "unable to open" in msg:
        return (f"{path}: cannot open ({msg}): is its folder writable? SQLite keeps its write-ahead "
                f"log ({path.name}-wal) next to the save")
    if "locked" in msg or "busy" in msg:
        return f"{path}: another process is writing this save ({msg})"
    if "malformed" in msg or "not a database" in msg:
        return f"{path}: the save is damaged ({msg}); `smalltown save check {path}` says more"
    return f"{path}: {msg}"


def _check_header(path: Path) -> None:
    """A save cut short (a partial download or copy): the header says how long it should be."""
    with open(path, "rb") as f:
        header = f.read(100)
    if len(header) < 100:
        raise SaveError(f"{path}: truncated: {len(header)} bytes, shorter than an SQLite header")
    page = struct.unpack(">H", header[16:18])[0]
    page = 65536 if page == 1 else page
    change, pages, valid_for = (struct.unpack(">I", header[i:i + 4])[0] for i in (24, 28, 92))
    for side in (Path(f"{path}-wal"), Path(f"{path}-journal")):
        if side.exists() and side.stat().st_size > 0:
            return  # a log SQLite will apply (or roll back) first: the file alone is not the save
    size = path.stat().st_size
    if change == valid_for and pages and pages * page > size:
        raise SaveError(f"{path}: truncated: its header says {pages * page:,} bytes, the file has "
                        f"{size:,} (an interrupted copy or download?)")


@cache
def known_schema() -> frozenset[tuple[str, str]]:
    """(type, name) of every table and index a new save has: what an opened save may hold."""
    conn = sqlite3.connect(":memory:")
    try:
        _create_schema(sqlite_utils.Database(conn))
        return frozenset(conn.execute("SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'"))
    finally:
        conn.close()


def _check_contents(conn: sqlite3.Connection, path: Path) -> None:
    """Refuse what smalltown never writes: triggers and views (code that would run when the save
    is read or written), unknown tables, oversized or non-JSON meta values."""
    known = known_schema()
    for kind, name, table in conn.execute("SELECT type, name, tbl_name FROM sqlite_master"):
        if kind in ("trigger", "view"):
            raise SaveError(f"{path}: refusing to open: it holds a {kind} {name!r}, and smalltown saves "
                            f"never do (a {kind} runs code stored in the file)")
        if name.startswith("sqlite_") or (kind, name) in known:
            continue
        # an index someone added is refused too: a UNIQUE one makes a run's writes fail
        article = "an" if kind == "index" else "a"
        raise SaveError(f"{path}: refusing to open: it holds {article} {kind} {name!r} that smalltown does not make")
    if "meta" not in {name for _, name, _ in conn.execute("SELECT type, name, tbl_name FROM sqlite_master")}:
        raise SaveError(f"{path}: not a smalltown save (no meta table)")
    rows = conn.execute("SELECT count(*) FROM meta").fetchone()[0]
    if rows > META_MAX_ROWS:
        raise SaveError(f"{path}: refusing to open: meta has {rows:,} rows (at most {META_MAX_ROWS:,})")
    for key, value in conn.execute("SELECT key, value FROM meta"):
        limit = META_MAX_CHARS.get(key, META_MAX_OTHER)
        if not isinstance(key, str) or not isinstance(value, str):
            raise SaveError(f"{path}: meta {key!r}: not text")
        if len(value) > limit:
            raise SaveError(f"{path}: refusing to open: meta {key!r} is {len(value):,} characters "
                            f"(at most {limit:,})")
        try:
            json.loads(value)
        except (ValueError, RecursionError):
            raise SaveError(f"{path}: meta {key!r} is not valid JSON (or nested too deep)") from None


def meta_values(conn: sqlite3.Connection) -> dict[str, Any]:
    """Every meta value, parsed (after _check_contents: each is JSON)."""
    return {k: json.loads(v) for k, v in conn.execute("SELECT key, value FROM meta")}


def row_problems(conn: sqlite3.Connection, version: int, limit: int = 20) -> Iterator[str]:
    """What is wrong in the meta values and rows of a save (store/validate.py), first to last."""
    for problem in _validate.meta_problems(meta_values(conn)):
        yield problem
    for problem in _validate.problems(conn, version, limit):
        yield str(problem)
    sizes = _validate.embedding_sizes(conn)
    if len(sizes) > 1:
        yield "memories and embeddings: vectors of different lengths: " + ", ".join(
            f"{n // 4} numbers ({k:,})" for n, k in sizes)


def _check_rows(conn: sqlite3.Connection, path: Path, version: int) -> None:
    """Refuse on the first problem in the rows: a command reads them as the simulation wrote them."""
    for problem in row_problems(conn, version, limit=1):
        raise SaveError(f"{path}: refusing to open: {problem}; `smalltown save check {path}` lists "
                        f"every problem")


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
    _create_v3(db)
    _create_v4(db)


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
    _conversations.create_table(db.conn)
    _calls.add_call_columns(db.conn)
    _conversations.rebuild_from_said(db.conn)


MIGRATIONS = {1: _create_v2, 2: _create_v3, 3: _create_v4}  # from version N to N + 1


class Save:
    # The writer lock this Save holds (an open to write, a new save), and a new save's build
    # (Aside) until it is published at its path.
    _lock: WriterLock | None = None
    _aside: Aside | None = None

    def __init__(self, conn: sqlite3.Connection, path: Path):
        self.conn = conn
        self.path = path

    # --- opening ------------------------------------------------------------------------------

    @classmethod
    def create(cls, path: str | Path, meta: dict[str, Any], overwrite: bool = False,
               publish: bool = True) -> "Save":
        """A new save at `path`, built aside (see Aside) and put there complete: at once when
        `publish` (the schema and meta are then the whole save), else by `publish()` once the
        caller has written the rest of its first state (Simulation.create: the agents and the
        first snapshot). Until then nothing is at `path`, and closing the Save leaves nothing."""
        path = Path(path)
        aside = Aside(path)
        try:
            if path.exists() and not overwrite:
                raise SaveError(f"{path}: a file is already there (continue it with "
                                f"`smalltown run {path}`, or pass --overwrite)")
            save = cls(cls._connect(aside.tmp), path)
        except BaseException:
            aside.close()
            raise
        save._aside, save._lock = aside, aside.lock
        try:
            with save.transaction():
                _create_schema(sqlite_utils.Database(save.conn))
                save.set_meta({"schema_version": SCHEMA_VERSION, **meta})
            if publish:
                save.publish()
        except BaseException:
            save.close()
            raise
        return save

    def publish(self) -> None:
        """Put a new save (built aside by `create`) at its path, whole; it stays open there."""
        if self._aside is None:
            return
        # Closed, its write-ahead log is folded into the file (Aside.place checks it was): the file
        # alone is the save, still in WAL mode, so opening it at its path never writes its header
        # (a change of journal mode killed half-way would leave a journal a reader cannot undo).
        self.conn.close()
        self._aside.place()
        self._aside = None  # (its lock is this Save's now)
        self.conn = self._connect(self.path)

    @classmethod
    def open(cls, path: str | Path, readonly: bool = False, rows: bool = True) -> "Save":
        """Open a save to continue it, holding its writer lock (one writer at a time, see
        store/lock.py), or only to read it (`readonly`: `save info`, `save check`, `inspect`; no
        lock). Nothing in the file is run: it is checked before use (see _check_contents), and
        so are its rows (store/validate.py) unless `rows` is False (`save check`, which lists
        every problem instead of refusing on the first)."""
        path = Path(path)
        if readonly or not path.exists():
            return cls._open(path, readonly, rows)
        if read_only(path) and is_save(path):  # (before the lock, which is a file beside it)
            raise SaveError(_read_only_message(path))
        lock = take_lock(path)
        try:
            save = cls._open(path, readonly, rows)
        except BaseException:
            lock.release()
            raise
        save._lock = lock
        return save

    @classmethod
    def _open(cls, path: Path, readonly: bool, rows: bool = True) -> "Save":
        if not path.exists():
            raise SaveError(f"{path}: no such save")
        if not is_save(path):
            raise SaveError(f"{path}: not a smalltown save (not an SQLite database)")
        _check_header(path)
        save = cls(cls._connect(path, readonly=True), path)  # nothing is written before it is checked
        try:
            _check_contents(save.conn, path)
            version = save.meta("schema_version")
        except sqlite3.DatabaseError as e:
            save.close()
            raise SaveError(f"{path}: not a smalltown save ({e})") from None
        except SaveError:
            save.close()
            raise
        if version is None:
            save.close()
            raise SaveError(f"{path}: not a smalltown save (no schema version in meta)")
        if not isinstance(version, int) or isinstance(version, bool):
            save.close()
            raise SaveError(f"{path}: not a smalltown save (schema version {version!r} is not a number)")
        if version > SCHEMA_VERSION:
            save.close()
            raise SaveError(f"{path}: written by a newer smalltown (save schema version {version}; this "
                            f"smalltown reads versions up to {SCHEMA_VERSION}): update smalltown to open it")
        if version < SCHEMA_VERSION and version not in MIGRATIONS:
            save.close()
            raise SaveError(f"{path}: save schema version {version} is too old: this smalltown migrates "
                            f"versions {min(MIGRATIONS, default=SCHEMA_VERSION)} to {SCHEMA_VERSION}")
        if rows:
            try:
                _check_rows(save.conn, path, version)
            except BaseException as e:
                save.close()
                if isinstance(e, sqlite3.DatabaseError):
                    raise SaveError(explain(path, e)) from None
                raise
        if readonly:
            return save  # read as it is: migrating would write to it
        save.conn.close()
        save.conn = cls._connect(path)
        save._migrate()
        return save

    def _migrate(self) -> None:
        version = self.meta("schema_version")
        while version < SCHEMA_VERSION:
            with self.transaction():
                MIGRATIONS[version](sqlite_utils.Database(self.conn))
                version += 1
                self.set_meta({"schema_version": version})

    def hold_still(self) -> "Save":
        """Read from now on as of one moment (a read transaction, until `close`), even while
        another process runs the save: a short-lived reader's rows then agree with each other
        (`save check`, inspect). Not for a reader that follows a run (it would see no new tick)."""
        if not self.conn.in_transaction:
            self.conn.execute("BEGIN")
            self.conn.execute("SELECT count(*) FROM meta").fetchone()  # (the moment is the first read)
        return self

    def let_go(self) -> None:
        """End what hold_still began: read the latest commit from now on."""
        if self.conn.in_transaction:
            self.conn.execute("ROLLBACK")  # (a read transaction: nothing to undo)

    def current(self) -> "Save":
        """This save (opened read-only) at the current schema, held still (see hold_still): itself,
        or for an older save a copy in memory migrated there. What a reader then writes (a
        migration, a first snapshot) never reaches the file."""
        if self.meta("schema_version") == SCHEMA_VERSION:
            return self.hold_still()
        mem = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        mem.execute("PRAGMA trusted_schema=OFF")
        self.conn.backup(mem)
        self.close()
        copy = Save(mem, self.path)
        copy._migrate()
        return copy

    @staticmethod
    def _connect(path: Path, readonly: bool = False) -> sqlite3.Connection:
        try:
            if readonly:  # read-only media too, and nothing made beside the save (store/reading.py)
                conn = connect_reader(path)
            else:
                conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            # a save may come from a stranger: functions with side effects may not run from its schema
            conn.execute("PRAGMA trusted_schema=OFF")
            conn.execute("PRAGMA cell_size_check=ON")  # a damaged page is an error, not a crash
            if not readonly:
                conn.execute("PRAGMA journal_mode=WAL")
                # NORMAL in WAL mode: a killed process never corrupts the file or loses a commit
                conn.execute("PRAGMA synchronous=NORMAL")
        except sqlite3.Error as e:
            raise SaveError(explain(path, e)) from None
        return conn

    def close(self) -> None:
        """Close it and let go of its writer lock; a new save never published is removed."""
        self.conn.close()
        if self._aside is not None:
            self._aside.close()
            self._aside = None
        elif self._lock is not None:
            self._lock.release()
        self._lock = None

    # --- writing ------------------------------------------------------------------------------

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """All or nothing. A write that fails (a full disk, a read-only file) rolls back and raises
        SaveError naming the file: the save stays as it was at its last commit."""
        try:
            self.conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as e:
            raise SaveError(explain(self.path, e)) from None
        try:
            yield
            self.conn.execute("COMMIT")
        except BaseException as e:
            if self.conn.in_transaction:  # SQLite may have rolled back already (a full disk)
                try:
                    self.conn.execute("ROLLBACK")
                except sqlite3.Error:
                    pass
            if isinstance(e, sqlite3.OperationalError):
                raise SaveError(explain(self.path, e)) from None
            raise

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

    def memory_owners(self) -> dict[int, str]:
        """Memory id -> the agent whose memory it is."""
        return dict(self.conn.execute("SELECT id, agent FROM memories"))

    def add_embeddings(self, rows: Iterable[tuple[str, bytes]]) -> None:
        self.conn.executemany("INSERT OR IGNORE INTO embeddings(text, vector) VALUES (?, ?)", rows)

    def embeddings(self) -> Iterator[tuple[str, bytes]]:
        yield from self.conn.execute("SELECT text, vector FROM embeddings")

    def add_retrievals(self, rows: Iterable[tuple]) -> None:
        """rows: (tick, time, agent, purpose, query, results-json)"""
        self.conn.executemany(
            "INSERT INTO retrievals(tick, time, agent, purpose, query, results) VALUES (?,?,?,?,?,?)", rows)

    def add_calls(self, rows: Iterable[tuple]) -> None:
        """rows: (tick, time, agent, task, prompt, raw_answer, parsed_answer, prompt_tokens,
        completion_tokens, cached_tokens, ms, backend, model, note, key, fallback); `fallback`
        is why another backend answered ("too long", "cut off", "invalid", "failed"), '' if none."""
        self.conn.executemany(
            "INSERT INTO llm_calls(tick, time, agent, task, prompt, raw_answer, parsed_answer, "
            "prompt_tokens, completion_tokens, cached_tokens, ms, backend, model, note, key, fallback) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", rows)

    def add_conversations(self, rows: Iterable[tuple]) -> list[int]:
        """rows: (tick, time, end_time, place, initiator, other, reason, lines_json, chats_json,
        relationships_json); lines: [{"speaker", "text", "tells": [memory ids], "facts": [fact
        names]}], chats: {agent: its chat memory's id}, relationships: {agent: its summary of the
        other}. Returns the ids given to the rows, in order (a said event's data names its row)."""
        return _conversations.add_conversations(self.conn, rows)

    # --- reading ------------------------------------------------------------------------------

    def agents(self) -> list[sqlite3.Row]:
        cur = self.conn.execute("SELECT name, x, y, dest, action, address, state FROM agents")
        return cur.fetchall()

    def objects(self) -> dict[str, str]:
        return dict(self.conn.execute("SELECT address, state FROM objects"))

    def events_since(self, tick: int, kinds: Iterable[str]) -> list[tuple[str, str | None, str, dict]]:
        """(time, agent, kind, data) of the events of these kinds at ticks after `tick`, oldest first."""
        kinds = list(kinds)
        rows = self.conn.execute(f"SELECT time, agent, kind, data FROM events WHERE tick > ? AND kind IN "
                                 f"({','.join('?' * len(kinds))}) ORDER BY id", [tick, *kinds])
        return [(t, a, k, json.loads(d or "{}")) for t, a, k, d in rows]

    def conversations(self, until: int | None = None, since: int | None = None, agent: str | None = None,
                      limit: int | None = None) -> list[Conversation]:
        """Conversations held at ticks in (since, until], with `agent` on either side, oldest first
        (the newest `limit`); see store/conversations.py."""
        return _conversations.read_conversations(self.conn, until, since, agent, limit)

    def conversation_count(self) -> int:
        return _conversations.count_conversations(self.conn)

    def call_figures(self, after_id: int = 0) -> dict:
        """How many model calls, how many a fallback answered, by task and reason (store/calls.py)."""
        return _calls.call_figures(self.conn, after_id)

    def last_call_id(self) -> int:
        """The newest model call's id (0 when none): the calls after it are those made since."""
        return _calls.last_call_id(self.conn)

    def count(self, table: str) -> int:
        """Rows of `table`; 0 for a table an older save does not have."""
        assert table in {"agents", "objects", "memories", "events", "llm_calls", "retrievals", "embeddings",
                         "snapshots", "conversations"}
        if not has_table(self.conn, table):
            return 0
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

    # --- snapshots (schema 3): rewinding and forking ------------------------------------------

    # (tick, {agent: parsed state}) of the last snapshot this Save wrote: the next one stores only
    # what changed in each agent's state since then (see the format below)
    _last_snapshot: tuple[int, dict[str, dict]] | None = None

    def write_snapshot(self, tick: int, time: str) -> int:
        """Record the state as it is now as the snapshot at `tick` (replacing one already there);
        call it inside the transaction that committed the tick. Returns its size in bytes."""
        blob, states = build_snapshot(self.conn, tick, time, self._last_snapshot)
        self.conn.execute("INSERT OR REPLACE INTO snapshots(tick, time, state) VALUES (?, ?, ?)",
                          (tick, time, blob))
        self._last_snapshot = (tick, states)
        return len(blob)

    def snapshots(self) -> list[tuple[int, str]]:
        """(tick, game time) of every snapshot, oldest first."""
        return snapshot_list(self.conn)

    def snapshot(self, tick: int) -> dict | None:
        """The snapshot at exactly `tick`, decoded (see the format below), or None."""
        return read_snapshot(self.conn, tick)

    def rewind(self, tick: int) -> dict[str, int]:
        """Cut the save back to its snapshot at `tick`: what happened after it (events, calls,
        retrievals, conversations, memories, later snapshots) is deleted, and the agents, objects,
        clock and memories' last access are as they were then. Returns how many rows were dropped, by table.
        Use it on a copy (see smalltown/sim/fork.py): the future it deletes is gone."""
        snap = read_snapshot(self.conn, tick)
        if snap is None:
            raise SaveError(f"{self.path}: no snapshot at tick {tick}")
        agents = agent_rows_at(self.conn, tick)
        accessed = accessed_at(self.conn, tick)
        dropped: dict[str, int] = {}
        self._last_snapshot = None
        with self.transaction():
            for table in SNAPSHOT_LOGS:
                if table in snap["last_ids"]:
                    cur = self.conn.execute(f"DELETE FROM {table} WHERE id > ?", (snap["last_ids"][table],))
                else:  # a snapshot from before the table: its rows are written in their tick's transaction
                    cur = self.conn.execute(f"DELETE FROM {table} WHERE tick > ?", (tick,))
                dropped[table] = cur.rowcount
            kept = snap["memory_ids"]  # per agent: ids grow within an agent's stream
            n = self.conn.execute("DELETE FROM memories WHERE agent NOT IN (SELECT value FROM json_each(?))",
                                  (json.dumps(list(kept)),)).rowcount
            for agent, last in kept.items():
                n += self.conn.execute("DELETE FROM memories WHERE agent = ? AND id > ?", (agent, last)).rowcount
            dropped["memories"] = n
            self.conn.execute("UPDATE memories SET last_accessed = created")
            self.conn.executemany("UPDATE memories SET last_accessed = ? WHERE id = ?",
                                  ((t, i) for i, t in accessed.items()))
            self.conn.execute("DELETE FROM agents")
            self.conn.executemany("INSERT INTO agents(name, x, y, dest, action, address, state) "
                                  "VALUES (?,?,?,?,?,?,?)", agents)
            self.conn.execute("DELETE FROM objects")
            self.conn.executemany("INSERT INTO objects(address, state) VALUES (?, ?)", snap["objects"])
            self.set_meta(snap["meta"])
            dropped["snapshots"] = self.conn.execute("DELETE FROM snapshots WHERE tick > ?", (tick,)).rowcount
            # the embedding cache keeps query texts: only those of retrievals still in the log
            dropped["embeddings"] = self.conn.execute(
                "DELETE FROM embeddings WHERE text NOT IN (SELECT query FROM retrievals) "
                "AND text NOT IN (SELECT description FROM memories)").rowcount
        return dropped


# --- snapshots: the format ---------------------------------------------------------------------
#
# One row per snapshot: (tick, game time, zlib-compressed JSON). The JSON holds what
# Simulation.open reads and a run changes after the fact:
#   meta        the clock and settings (SNAPSHOT_META)
#   agents      [name, x, y, dest, action, address, activity] of every agent
#   states      each agent's state text (the agents table's `state` column), as
#                 {"full": parsed} or {"text": verbatim} in a states base (`states_base`: the
#                 first snapshot a Save object writes: a new run's, a resumed run's first), else
#                 {"set": {key: value}, "drop": [key]} against the previous snapshot's, for the
#                 agents whose state changed (a diff is used only when it re-creates the text
#                 exactly; `hash` checks it when read)
#   objects     every objects row
#   memory_ids  per agent, its highest memory id then (ids only grow within an agent's stream)
#   last_ids    the highest id of each log table (events, llm_calls, retrievals, and since schema 4
#               conversations) then; a rewind to a snapshot without one cuts that log by tick
#   accessed    [id, last_accessed] of memories whose last access is not their creation time:
#               all of them in the save's first snapshot (`since` null), else only those
#               accessed at or after the previous snapshot's time `since` (a memory's last access
#               only moves forward to the current time, so the rest are as the previous snapshot
#               had them, or as created)
# Memories themselves are not copied: they are immutable once written, except their last access
# (and, before the first snapshot, a schema-1 save's importance and vector, completed on opening).

SNAPSHOT_FORMAT = 1
SNAPSHOT_META = ("tick", "game_time", "settings")  # the meta that changes as a run goes
SNAPSHOT_LOGS = ("events", "llm_calls", "retrievals", "conversations")  # append-only logs, cut back by id
SNAPSHOT_MAX_BYTES = 256 * 1024 * 1024  # decompressed: a hostile file cannot be a zip bomb


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def build_snapshot(conn: sqlite3.Connection, tick: int, time: str,
                   last: tuple[int, dict[str, dict]] | None) -> tuple[bytes, dict[str, dict]]:
    """The snapshot at `tick` (compressed) and the agents' parsed states (for the next one's diff).
    `last`: the previous snapshot's parsed states, if this process wrote it."""
    prev = conn.execute("SELECT tick, time FROM snapshots WHERE tick < ? ORDER BY tick DESC LIMIT 1",
                        (tick,)).fetchone()
    since = prev[1] if prev else None
    base = prev is None or last is None or last[0] != prev[0]
    meta = {k: json.loads(v) for k, v in conn.execute(
        f"SELECT key, value FROM meta WHERE key IN ({','.join('?' * len(SNAPSHOT_META))})", SNAPSHOT_META)}
    if since is None:
        accessed = conn.execute("SELECT id, last_accessed FROM memories WHERE last_accessed IS NOT created "
                                "ORDER BY id")
    else:
        accessed = conn.execute("SELECT id, last_accessed FROM memories WHERE last_accessed >= ? ORDER BY id",
                                (since,))
    agents, states, parsed, hashes = [], {}, {}, {}
    for name, x, y, dest, action, address, text in conn.execute(
            "SELECT name, x, y, dest, action, address, state FROM agents ORDER BY name"):
        try:
            now = json.loads(text)
        except (TypeError, ValueError):
            now = None
        activity = (now.get("action") or {}).get("activity") if isinstance(now, dict) else None
        agents.append([name, x, y, dest, action, address, activity])
        hashes[name] = _hash(text or "")
        if not isinstance(now, dict):
            states[name] = {"text": text}
            continue
        parsed[name] = now
        before = None if base else last[1].get(name)
        if before is None:
            states[name] = {"full": now} if json.dumps(now) == text else {"text": text}
            continue
        if before == now:
            continue
        diff = {"set": {k: v for k, v in now.items() if k not in before or before[k] != v},
                "drop": [k for k in before if k not in now]}
        states[name] = diff if json.dumps(_apply(before, diff)) == text else {"text": text}
    state = {
        "format": SNAPSHOT_FORMAT, "tick": tick, "time": time, "since": since, "meta": meta,
        "agents": agents, "states_base": base, "states": states, "hash": hashes,
        "objects": conn.execute("SELECT address, state FROM objects ORDER BY address").fetchall(),
        "memory_ids": dict(conn.execute("SELECT agent, max(id) FROM memories GROUP BY agent ORDER BY agent")),
        "last_ids": {t: conn.execute(f"SELECT coalesce(max(id), 0) FROM {t}").fetchone()[0]
                     for t in SNAPSHOT_LOGS},
        "accessed": accessed.fetchall(),
    }
    return zlib.compress(json.dumps(state, separators=(",", ":")).encode(), 9), parsed


def _apply(before: dict, diff: dict) -> dict:
    """A state re-created from the previous one and a diff, keys in the same order as a fresh
    `json.dumps` of the state would have them (changed keys keep their place)."""
    out = {k: v for k, v in before.items() if k not in diff["drop"]}
    out.update(diff["set"])
    return out


def decode_snapshot(blob: bytes, where: str = "save") -> dict:
    """A snapshot row's state, checked against the format above: a damaged or hostile one is a
    SaveError naming `where` (the save, the row), never a KeyError later."""
    try:
        d = zlib.decompressobj()
        raw = d.decompress(blob, SNAPSHOT_MAX_BYTES)
        if d.unconsumed_tail:
            raise SaveError(f"{where}: a snapshot is larger than {SNAPSHOT_MAX_BYTES:,} bytes")
        state = json.loads(raw)
    except (zlib.error, ValueError, TypeError, RecursionError) as e:
        raise SaveError(f"{where}: a snapshot is damaged ({e})") from None
    if not isinstance(state, dict) or state.get("format") != SNAPSHOT_FORMAT:
        raise SaveError(f"{where}: a snapshot in an unknown format")
    problem = _validate.snapshot_problem(state)
    if problem:
        raise SaveError(f"{where}: a snapshot is damaged: {problem}")
    return state


def snapshot_rows(conn: sqlite3.Connection) -> Iterator[tuple[int, bytes]]:
    """(tick, compressed state) of every snapshot, oldest first (for `save check`)."""
    if has_snapshots(conn):
        yield from conn.execute("SELECT tick, state FROM snapshots ORDER BY tick")


def has_table(conn: sqlite3.Connection, name: str) -> bool:
    """Whether the save has a table: a read-only reader may meet older (or stripped) saves."""
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (name,)).fetchone() is not None


def has_snapshots(conn: sqlite3.Connection) -> bool:
    """The save has a snapshots table (schema 3)."""
    return has_table(conn, "snapshots")


def snapshot_list(conn: sqlite3.Connection) -> list[tuple[int, str]]:
    if not has_snapshots(conn):
        return []
    return conn.execute("SELECT tick, time FROM snapshots ORDER BY tick").fetchall()


def read_snapshot(conn: sqlite3.Connection, tick: int) -> dict | None:
    if not has_snapshots(conn):
        return None
    row = conn.execute("SELECT state FROM snapshots WHERE tick = ?", (tick,)).fetchone()
    return decode_snapshot(row[0], f"snapshots row {tick}") if row else None


def snapshot_at_or_before(conn: sqlite3.Connection, tick: int) -> dict | None:
    """The latest snapshot at or before `tick`, decoded, or None."""
    if not has_snapshots(conn):
        return None
    row = conn.execute("SELECT tick, state FROM snapshots WHERE tick <= ? ORDER BY tick DESC LIMIT 1",
                       (tick,)).fetchone()
    return decode_snapshot(row[1], f"snapshots row {row[0]}") if row else None


def _chain(conn: sqlite3.Connection, tick: int, is_base) -> list[dict]:
    """The snapshots from the latest one at or before `tick` back to a base (`is_base`), oldest first."""
    chain = []
    for at, blob in conn.execute("SELECT tick, state FROM snapshots WHERE tick <= ? ORDER BY tick DESC", (tick,)):
        snap = decode_snapshot(blob, f"snapshots row {at}")
        chain.append(snap)
        if is_base(snap):
            break
    chain.reverse()
    return chain


def agent_rows_at(conn: sqlite3.Connection, tick: int) -> list[tuple]:
    """The agents rows (name, x, y, dest, action, address, state) as of the snapshot at `tick`."""
    chain = _chain(conn, tick, lambda s: s["states_base"])
    if not chain or chain[-1]["tick"] != tick or not chain[0]["states_base"]:
        raise SaveError(f"no complete snapshot at tick {tick}")
    try:
        return _agent_rows(chain, tick)
    except (KeyError, TypeError, ValueError, RecursionError) as e:  # states that do not chain up
        raise SaveError(f"snapshots row {tick}: the snapshots up to it do not re-create the agents "
                        f"({type(e).__name__}: {str(e)[:80]})") from None


def _agent_rows(chain: list[dict], tick: int) -> list[tuple]:
    states: dict[str, dict | str] = {}
    for snap in chain:
        for name, entry in snap["states"].items():
            if "full" in entry:
                states[name] = entry["full"]
            elif "text" in entry:
                states[name] = entry["text"]
            else:
                before = states[name]
                states[name] = _apply(before if isinstance(before, dict) else json.loads(before), entry)
    last = chain[-1]
    rows = []
    for name, x, y, dest, action, address, _activity in last["agents"]:
        state = states[name]
        text = state if isinstance(state, str) or state is None else json.dumps(state)
        if _hash(text or "") != last["hash"][name]:
            raise SaveError(f"the snapshot at tick {tick} does not re-create {name}'s state exactly")
        rows.append((name, x, y, dest, action, address, text))
    return rows


def accessed_at(conn: sqlite3.Connection, tick: int) -> dict[int, str]:
    """Memories' last access as of the snapshot at or before `tick`, for those whose last access
    is not their creation time: the save's first snapshot's list, updated by each later one."""
    out: dict[int, str] = {}
    for snap in _chain(conn, tick, lambda s: s["since"] is None):
        out.update((int(i), t) for i, t in snap["accessed"])
    return out
