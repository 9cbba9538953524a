"""Connections that only read a save, and write nothing beside it, whatever lies there.

SQLite's `mode=ro` is not enough: a reader of a write-ahead-log save needs the `-shm` index beside
the file, and makes it (and an empty `-wal`) when it is not there, rebuilds it when it is garbage,
and a read-only folder refuses it all. Files beside a save may also be a stranger's leftovers: an
empty or garbage log, another database's, a link to one of the user's own files. So a reader
first looks at what is beside the save (without following a link, opening nothing to write) and
whether a writer is running it, then connects in one of these ways:

- a smalltown writer is running the save (its writer lock, store/lock.py, is held) and the file
  and folder are writable: `mode=ro`, which follows the run (the TUI's screens, `inspect` beside
  a live run). The `-wal`/`-shm` there are the writer's, kept by SQLite's own locking. Not with
  a `-journal` with content beside the save (an interrupted write's, found by a writer about to
  open the save, which checks it first): `mode=ro` cannot roll it back, so it is read as below;
- no writer, and no log with content beside the file (nothing, or an empty log, or only an
  index): the file alone is the save. A rollback-journal save with nothing at all beside it is
  read with `mode=ro` (which makes nothing for such a save, and whose locks see a writer that
  starts meanwhile); any other is read with `immutable=1`: no locks, no file made or opened
  beside it;
- no writer, and a log with content beside the file (a killed run's `-wal`, an interrupted
  write's `-journal`, or a stranger's): the file and its log are copied to a private temporary
  folder, SQLite applies (or rolls back) the log there as a writer would, and the copy is read
  (`immutable=1`; the copy is unlinked once open, so nothing is left, even by a killed reader).

A `-wal`, `-shm` or `-journal` that is a symbolic link, not a regular file, or a file with other
names (a hard link) is refused, naming it: SQLite would read the save through it, and a writer
would write through it.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import stat
import tempfile
from pathlib import Path

from smalltown.store.lock import lock_file
from smalltown.store import sidefiles
from smalltown.store.errors import SaveError
from smalltown.store.access import writable

try:
    import fcntl
except ImportError:  # no flock: a lock file then means a writer (store/lock.py takes no lock there)
    fcntl = None

LOGS = ("-wal", "-journal")  # SQLite's logs: what a reader must apply to see the last commit
SIDE_FILES = ("-wal", "-shm", "-journal")  # every file SQLite keeps beside a database
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


def side_files(path: Path) -> dict[str, int]:
    """The files SQLite keeps beside the save at `path`, by suffix, with their sizes; raises
    SaveError naming one that is a link, not a regular file, or has other names (store/sidefiles.py:
    the same rules as a writer's; SQLite would read the save through it)."""
    found = {}
    for suffix in SIDE_FILES:
        side = Path(f"{path}{suffix}")
        try:
            st = os.lstat(side)
        except FileNotFoundError:
            continue
        except OSError as e:
            raise SaveError(f"{side}: cannot look at it ({e.strerror or e}); it is SQLite's file beside the save {path.name}")
        what = sidefiles.problem(side)
        if what:
            raise SaveError(sidefiles.message(side, what))
        found[suffix] = st.st_size
    return found


def writer_running(path: Path) -> bool:
    """A smalltown writer holds the save's writer lock now. Tested with a shared flock on the lock
    file, opened to read without following a link and never made: a stale file (its holder
    killed) is not held, and a link or a non-file is no writer's lock (store/lock.py makes neither)."""
    try:
        fd = os.open(lock_file(path), _OPEN_FLAGS)
    except OSError:
        return False
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False
        if fcntl is None:
            return True
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        except OSError:
            return False
        return False  # (closing lets go of the shared lock at once)
    finally:
        os.close(fd)


def _rollback_header(path: Path) -> bool:
    """The file's header says rollback-journal mode (bytes 18 and 19 both 1), not write-ahead log."""
    try:
        with open(path, "rb") as f:
            header = f.read(20)
    except OSError:
        return False
    return header[18:20] == b"\x01\x01"


class ReaderConnection(sqlite3.Connection):
    """A reader's connection; `folder` is a private temporary folder it reads from (removed on close).

    One that reads the file alone or a private copy (no writer was running) does not see a writer
    that starts later, nor a run that ends with its log folded into the file: `stale()` says the
    save or what is beside it has changed since, and store/reader.py then connects again (a TUI
    screen or replay opened before a run began follows it as `mode=ro` does)."""

    folder: str | None = None
    save: Path | None = None  # the save, when this connection can go stale (see `stale`)
    seen: tuple = ()  # the save's `signature` when it was connected

    def stale(self) -> bool:
        return self.save is not None and signature(self.save) != self.seen

    def close(self) -> None:
        super().close()
        folder, self.folder = self.folder, None
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)


def connect_reader(path: str | Path) -> sqlite3.Connection:
    """A connection that reads the save at `path` and writes nothing in its folder (see the
    module's doc); raises SaveError for a side file it refuses, sqlite3.Error as sqlite3.connect
    does."""
    path = Path(path).resolve()
    seen = signature(path)  # (before looking: a change from here on is seen by `stale`)
    sides = side_files(path)
    live = writer_running(path)
    if live and writable(path) and not sides.get("-journal"):
        return _probe(_connect(f"{path.as_uri()}?mode=ro"))
    if not any(sides.get(s) for s in LOGS) or live:  # (live on read-only media: its log cannot be read whole)
        if not sides and writable(path) and _rollback_header(path):
            return _probe(_connect(f"{path.as_uri()}?mode=ro"))
        conn = _probe(_connect(f"{path.as_uri()}?immutable=1"))
    else:
        conn = _private_copy(path, sides)
    conn.save, conn.seen = path, seen
    return conn


def signature(path: Path) -> tuple:
    """What changes when a writer starts, writes, or ends: the save's file, its logs and its
    writer lock (each's inode, size and time; None when absent), looked at without opening any."""
    found = []
    for name in (str(path), f"{path}-wal", f"{path}-journal", str(lock_file(path))):
        try:
            st = os.lstat(name)
            found.append((st.st_ino, st.st_size, st.st_mtime_ns))
        except OSError:
            found.append(None)
    return tuple(found)


def _connect(uri: str) -> ReaderConnection:
    return sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False, factory=ReaderConnection)


def _probe(conn: sqlite3.Connection) -> sqlite3.Connection:
    """SQLite opens the file lazily: read once, so an unreadable save fails here."""
    try:
        conn.execute("PRAGMA trusted_schema=OFF")
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except BaseException:
        conn.close()
        raise
    return conn


def _copy_file(src: Path, dst: Path, follow: bool) -> None:
    """`src`'s bytes into the new file `dst`; a side file (`follow` False) is opened without
    following a link and must still be a plain file once open."""
    fd = os.open(src, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) if follow else _OPEN_FLAGS)
    try:
        if not follow and sidefiles.stat_problem(os.fstat(fd)):
            raise OSError(f"{src.name} changed while it was read")
        with open(fd, "rb", closefd=False) as f, open(dst, "xb") as out:
            shutil.copyfileobj(f, out, 1 << 20)
    finally:
        os.close(fd)


def _private_copy(path: Path, sides: dict[str, int]) -> sqlite3.Connection:
    """The save with its log applied (or rolled back), read from a copy in a private folder."""
    folder = tempfile.mkdtemp(prefix="smalltown-read-")
    try:
        copy = Path(folder) / "save.sqlite"
        try:
            _copy_file(path, copy, follow=True)
            for suffix in LOGS:
                if suffix in sides:
                    _copy_file(Path(f"{path}{suffix}"), Path(f"{copy}{suffix}"), follow=False)
        except OSError as e:
            logs = " and ".join(f"{path.name}{s}" for s in LOGS if sides.get(s))
            raise sqlite3.OperationalError(
                f"cannot copy it aside to read it with {logs} beside it ({e.strerror or e}): a reader applies "
                f"that log to a private copy in {tempfile.gettempdir()}, never to the save; free space there "
                f"(or set TMPDIR)") from None
        src = sqlite3.connect(copy, isolation_level=None)  # applies (or rolls back) the log, in the copy
        try:
            src.execute("PRAGMA trusted_schema=OFF")
            src.execute("SELECT count(*) FROM sqlite_master").fetchone()
            if src.execute("PRAGMA journal_mode").fetchone()[0] == "wal":
                busy, _, _ = src.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
                if busy:
                    raise sqlite3.OperationalError("its log could not be folded into the private copy")
        finally:
            src.close()
        conn = _probe(_connect(f"{copy.as_uri()}?immutable=1"))
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    try:
        shutil.rmtree(folder)  # open, the copy is read through its descriptor: nothing is left behind
    except OSError:
        conn.folder = folder  # (a system that keeps open files: removed on close)
    return conn
