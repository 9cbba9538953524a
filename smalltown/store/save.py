"""The save file: one self-contained SQLite database per run, committed once per tick.

The pieces live beside it: schema.py (tables, migrations), checks.py (what opening refuses),
copy.py (copies, a new file built aside), snapshots.py (rewinding), save_reads.py (what it reads of
itself), errors.py. No sqlite3 error leaves it: each is a SaveError (SQLiteError) naming the file.
Nothing outside store/ is handed its connection: `reader()` reads it."""

from __future__ import annotations

import json
import sqlite3
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import sqlite_utils

from smalltown.store import writer
from smalltown.store.checkpoint import Checkpointer, for_writer
from smalltown.store.checks import check_contents, check_header, check_rows, is_save
from smalltown.store.copy import Aside, take_lock
from smalltown.store.errors import (SaveError, SQLiteError, explain_new, guarded, read_only, read_only_message,
                                    sqlite_error)
from smalltown.store.lock import WriterLock
from smalltown.store.reader import Reader
from smalltown.store.records import TickChanges
from smalltown.store.reading import ReaderConnection, connect_reader
from smalltown.store.save_reads import SaveReads
from smalltown.store.schema import MIGRATIONS, SCHEMA_VERSION
from smalltown.store.schema import create_schema as _create_schema  # (a test kills a build in it, by this name)
from smalltown.store.snapshots import (accessed_at, agent_rows_at, build_snapshot, cut_back, read_snapshot,
                                       snapshot_list)


# A new save's page size. SQLite's 4 KiB left a fifth of a 500-agent day's pages empty (rows of 1 to
# 2 KB, compressed prompts, do not fill them); 16 KiB pages hold them with little to spare.
# The contents, and so the digest, do not depend on it; an older save keeps its own.
PAGE_SIZE = 16384


@guarded
class Save(SaveReads):
    # The writer lock this Save holds (an open to write, a new save), and a new save's build
    # (Aside) until it is published at its path.
    _lock: WriterLock | None = None
    _aside: Aside | None = None
    # the thread that checkpoints this writer's log (store/checkpoint.py), from its first commit
    # (False: none, the save is in memory)
    _checkpointer: Checkpointer | bool | None = None

    def __init__(self, conn: sqlite3.Connection, path: Path):
        self.conn = conn  # (store/ only: others read through `reader()`)
        self.path = path

    def _sqlite_error(self, e: sqlite3.Error) -> SQLiteError:
        """An SQLite error of a public method (see errors.guarded), naming the save (a new one not yet
        published: as the save being made, store/copy.py's Aside)."""
        return sqlite_error(self.path, e, new=self._aside is not None)

    # --- opening ------------------------------------------------------------------------------

    @classmethod
    def create(cls, path: str | Path, meta: dict[str, Any], overwrite: bool = False,
               publish: bool = True) -> "Save":
        """A new save at `path`, built aside (see Aside) and put there complete: at once when
        `publish` (the schema and meta are then the whole save), else by `publish()` once the
        caller has written the rest of its first state (`sim.open.create`: the agents and the
        first snapshot). Until then nothing is at `path`, and closing the Save leaves nothing."""
        path = Path(path)
        aside = Aside(path)
        try:
            if path.exists() and not overwrite:
                raise SaveError(f"{path}: a file is already there (continue it with "
                                f"`smalltown run {path}`, or pass --overwrite)")
            save = cls(cls._connect(aside.tmp, page_size=PAGE_SIZE), path)
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
        self._stop_checkpointer()
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
        lock). Nothing in the file is run: it is checked before use (see checks.check_contents), and
        so are its rows (store/validate.py) unless `rows` is False (`save check`, which lists
        every problem instead of refusing on the first)."""
        path = Path(path)
        if readonly or not path.exists():
            return cls._open(path, readonly, rows)
        if read_only(path) and is_save(path):  # (before the lock, which is a file beside it)
            raise SaveError(read_only_message(path))
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
        check_header(path)
        save = cls(cls._connect(path, readonly=True), path)  # nothing is written before it is checked
        try:
            check_contents(save.conn, path)
            version = save.meta("schema_version")
        except (sqlite3.DatabaseError, SQLiteError) as e:
            save.close()
            raise SaveError(f"{path}: not a smalltown save ({getattr(e, 'said', e)})") from None
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
                check_rows(save.conn, path, version)
            except BaseException as e:
                save.close()
                if isinstance(e, sqlite3.Error):
                    raise sqlite_error(path, e) from None
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

    def held(self) -> bool:
        """Whether it is read as of one moment now (hold_still, or a transaction under way)."""
        return self.conn.in_transaction

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
    def _connect(path: Path, readonly: bool = False, page_size: int | None = None) -> sqlite3.Connection:
        try:
            if readonly:  # read-only media too, and nothing made beside the save (store/reading.py)
                conn = connect_reader(path)
            else:
                conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            # a save may come from a stranger: functions with side effects may not run from its schema
            conn.execute("PRAGMA trusted_schema=OFF")
            conn.execute("PRAGMA cell_size_check=ON")  # a damaged page is an error, not a crash
            if page_size:  # only a new file's: set before WAL, which fixes it
                conn.execute(f"PRAGMA page_size={int(page_size)}")
            if not readonly:
                conn.execute("PRAGMA journal_mode=WAL")
                # NORMAL in WAL mode: a killed process never corrupts the file or loses a commit
                conn.execute("PRAGMA synchronous=NORMAL")
        except sqlite3.Error as e:
            raise sqlite_error(path, e) from None
        except UnicodeDecodeError:  # SQLite's message names what its schema calls something not UTF-8
            raise SaveError(f"{path}: refusing to open: its schema is malformed (a name that is not UTF-8 "
                            f"text); smalltown cannot read it") from None
        return conn

    def close(self) -> None:
        """Close it and let go of its writer lock; a new save never published is removed. A
        writer folds its log into the file first (see `_fold_on_close`): the file alone is then the save."""
        self._stop_checkpointer()
        self._fold_on_close()
        self.conn.close()
        if self._aside is not None:
            self._aside.close()
            self._aside = None
        elif self._lock is not None:
            self._lock.release()
        self._lock = None

    def _fold_on_close(self) -> None:
        """A writer's whole log into the file, and the log emptied (TRUNCATE), before it closes.
        SQLite does this itself only at the close of the last connection to the file: with a reader
        still open (the TUI's screens, `inspect` or any SQLite tool beside the run) the log kept the
        last ticks, and the file alone (what a user copies) was older. The checkpoint waits for a
        reader in the middle of a read (the connection's busy timeout); a full disk or a reader that
        holds on leaves the log, which SQLite and smalltown's readers still apply."""
        if isinstance(self.conn, ReaderConnection):
            return  # (read-only: nothing of its own to fold in)
        try:
            if not self.conn.in_transaction:  # (in one, SQLite refuses)
                self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        except sqlite3.Error:
            pass  # (closed already, or the disk refused)

    def checkpoint(self) -> None:
        """Fold the write-ahead log into the file: the .sqlite alone is then the whole run."""
        self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    # --- writing ------------------------------------------------------------------------------

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """All or nothing. A write that fails (a full disk, a read-only file) rolls back and raises
        SaveError naming the file: the save stays as it was at its last commit."""
        try:
            self.conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as e:
            raise self._sqlite_error(e) from None
        try:
            yield
            self.conn.execute("COMMIT")
        except BaseException as e:
            if self.conn.in_transaction:  # SQLite may have rolled back already (a full disk)
                try:
                    self.conn.execute("ROLLBACK")
                except sqlite3.Error:
                    pass
            if isinstance(e, sqlite3.Error):  # (a new save not yet published: nothing is made)
                raise self._sqlite_error(e) from None
            raise

    def set_meta(self, values: dict[str, Any]) -> None:
        writer.set_meta(self.conn, values)

    def meta(self, key: str, default: Any = None) -> Any:
        row = self.conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return json.loads(row[0]) if row else default

    def commit(self, changes: TickChanges, snapshot: bool = False) -> list[int]:
        """The one writer: `changes` as the save's rows (store/writer.py), in one transaction,
        with the snapshot of the state at `changes.tick` when asked. Returns the ids the save gave
        the new conversations, in order."""
        with self.transaction():
            ids = writer.write(self.conn, changes)
            if snapshot:
                self._write_snapshot(changes.tick, changes.time)
        if self._checkpointer is None:
            self._checkpointer = for_writer(self.conn)
        if self._checkpointer:
            self._checkpointer.committed()
        return ids

    def _stop_checkpointer(self) -> None:
        if self._checkpointer:
            self._checkpointer.close()
        self._checkpointer = None

    # --- snapshots (schema 3): rewinding and forking ------------------------------------------

    # (tick, {agent: its state then}) of the last snapshot this Save wrote: the next one stores
    # only what changed in each agent's state since then (see the format below)
    _last_snapshot: tuple[int, dict] | None = None

    def _write_snapshot(self, tick: int, time: str) -> int:
        """Record the state as it is now as the snapshot at `tick` (replacing one already there),
        inside the transaction that committed the tick (see `commit`). Returns its size in bytes."""
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
        self._last_snapshot = None
        with self.transaction():
            dropped = cut_back(self.conn, snap, tick, agents, accessed)
            self.set_meta(snap["meta"])
        return dropped

    def strip_into(self, out: Path, drop: tuple[str, ...], note: dict, dst: Path) -> dict[str, int]:
        """This save copied into the new file `out` without the rows of the tables
        `drop` (those it has), noted in meta `stripped` as `note` plus what was dropped; one file to
        share (no log beside it). Returns the rows dropped per table; an SQLite error is a SaveError
        naming `dst`, where the copy is going."""
        try:
            db = sqlite3.connect(out, isolation_level=None)
            try:
                self.conn.backup(db)
                tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
                dropped = {t: db.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in drop if t in tables}
                db.execute("BEGIN")
                for t in dropped:
                    db.execute(f"DELETE FROM {t}")
                db.execute("INSERT INTO meta(key, value) VALUES ('stripped', ?) ON CONFLICT(key) DO UPDATE "
                           "SET value=excluded.value", (json.dumps({**note, "dropped": dropped}),))
                db.execute("COMMIT")
                db.execute("VACUUM")
                db.execute("PRAGMA journal_mode=DELETE")  # one file to share, no -wal beside it
            finally:
                db.close()
        except sqlite3.Error as e:
            raise SaveError(explain_new(dst, e)) from None
        return dropped


def open_reader(path: str | Path) -> Reader:
    """The save at `path`, opened as every command opens one to read: its schema untrusted, its
    rows checked (a SaveError says what is wrong); closing the reader closes the save."""
    save = Save.open(Path(path), readonly=True)
    return Reader(save.conn, save, save.path)
