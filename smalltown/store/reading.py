"""Connections that only read a save, and write nothing beside it: on read-only media too.

SQLite's `mode=ro` is not enough for a save in write-ahead-log mode: the reader needs the
`-shm` index beside the file, and makes it (and an empty `-wal`) if it is not there, which a
read-only folder refuses ("unable to open database file") and which a writable one keeps after
the reader has gone. So a reader connects in one of three ways:

- the folder or the file is not writable, and no log is beside it: `immutable=1`, SQLite reads
  the file alone with no locks and no sidecar files. Safe because no writer can be there: a writer
  needs to make its log beside the file (and smalltown's writers refuse a read-only file);
- the same, but a log with content is beside it (a run killed on media made read-only since): the
  file and its log are copied to a private temporary folder, SQLite applies the log there, and
  the result is read from memory. Nothing is made beside the save;
- otherwise `mode=ro`, which follows a running writer. If the reader made the `-wal`/`-shm` files,
  it removes them on closing when it is the save's last connection, as a writer would.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
from pathlib import Path

LOGS = ("-wal", "-journal")  # SQLite's logs: what a reader must apply to see the last commit


def writable(path: Path, folder: bool = True) -> bool:
    """The file and (`folder`) its folder can be written, and are not marked read-only (which
    root may write through: smalltown honours the mark)."""
    for p in (path, path.parent) if folder else (path,):
        try:
            if not os.access(p, os.W_OK) or not p.stat().st_mode & 0o222:
                return False
        except OSError:
            return False
    return True


def _has_log(path: Path) -> bool:
    for suffix in LOGS:
        try:
            if Path(f"{path}{suffix}").stat().st_size > 0:
                return True
        except OSError:
            pass
    return False


class ReaderConnection(sqlite3.Connection):
    """A `mode=ro` connection that removes the `-wal`/`-shm` files it made, on closing."""

    tidy: Path | None = None  # the save, when this connection made its sidecar files

    def close(self) -> None:
        super().close()
        path, self.tidy = self.tidy, None
        if path is not None:
            _remove_sidecars(path)


def _remove_sidecars(path: Path) -> None:
    """Remove an empty `-wal` and its `-shm` as SQLite does: a read-write connection that closes
    as the last one checkpoints (nothing, the log is empty) and deletes them; while another
    connection is open, it leaves them. It writes nothing to the save."""
    wal = Path(f"{path}-wal")
    try:
        if wal.stat().st_size or Path(f"{path}-journal").exists():
            return  # a writer came meanwhile: its log is its own
    except OSError:
        return
    try:
        conn = sqlite3.connect(path, isolation_level=None)
        try:
            conn.execute("PRAGMA trusted_schema=OFF")
            conn.execute("PRAGMA query_only=ON")
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        finally:
            conn.close()
    except sqlite3.Error:
        pass  # tidying is a courtesy; the save is as it was either way


def connect_reader(path: str | Path) -> sqlite3.Connection:
    """A connection that reads the save at `path` and writes nothing (see the module's doc);
    raises sqlite3.Error as sqlite3.connect does."""
    path = Path(path).resolve()
    uri = path.as_uri()
    if not writable(path):
        if _has_log(path):
            return _private_copy(path)
        return _probe(sqlite3.connect(f"{uri}?immutable=1", uri=True, isolation_level=None,
                                      check_same_thread=False))
    made = not any(Path(f"{path}{s}").exists() for s in ("-wal", "-shm"))
    conn = sqlite3.connect(f"{uri}?mode=ro", uri=True, isolation_level=None, check_same_thread=False,
                           factory=ReaderConnection)
    conn.tidy = path if made else None
    return _probe(conn)


def _probe(conn: sqlite3.Connection) -> sqlite3.Connection:
    """SQLite opens the file lazily: read once, so an unreadable save fails here."""
    try:
        conn.execute("PRAGMA trusted_schema=OFF")
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except BaseException:
        conn.close()
        raise
    return conn


def _private_copy(path: Path) -> sqlite3.Connection:
    """The save with its log applied, in memory, from a copy in a private temporary folder."""
    with tempfile.TemporaryDirectory(prefix="smalltown-read-") as tmp:
        copy = Path(tmp) / path.name
        try:
            shutil.copyfile(path, copy)
            for suffix in LOGS:
                if Path(f"{path}{suffix}").exists():
                    shutil.copyfile(f"{path}{suffix}", f"{copy}{suffix}")
        except OSError as e:
            raise sqlite3.OperationalError(f"cannot copy it aside to apply its log ({e.strerror or e})") from None
        src = sqlite3.connect(copy, isolation_level=None)  # applies (or rolls back) the log, in the copy
        try:
            src.execute("PRAGMA trusted_schema=OFF")
            mem = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
            try:
                src.backup(mem)
            except BaseException:
                mem.close()
                raise
        finally:
            src.close()
    return _probe(mem)
