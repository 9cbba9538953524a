"""Copies of a save, and a new save file made whole or not at all (built aside, moved into place)."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from smalltown.store.access import PARTIAL
from smalltown.store.errors import SaveError, explain, explain_new, read_only, read_only_message
from smalltown.store.lock import SaveBusy, WriterLock, lock_file
from smalltown.store.reading import connect_reader
from smalltown.store.sidefiles import check_side_files


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


def copy_pages(src: Path, dst: Path, name: Path | None = None) -> None:
    """The pages of the save `src`, as of its last commit, into the new file `dst` (built for
    `name`, which errors name: the new save as the user called it, not its NAME.partial). An error
    writing names the new save, one reading names `src`."""
    name = name or (dst.with_name(dst.name[:-len(PARTIAL)]) if dst.name.endswith(PARTIAL) else dst)
    try:
        a = connect_reader(src)
    except sqlite3.Error as e:
        raise SaveError(f"{src}: cannot be copied ({e})") from None
    try:
        try:
            b = sqlite3.connect(dst)
        except sqlite3.Error as e:
            raise SaveError(explain_new(name, e)) from None
        try:
            a.backup(b)
        finally:
            b.close()
    except sqlite3.Error as e:
        if _writing(e):
            raise SaveError(explain_new(name, e)) from None
        raise SaveError(f"{src}: cannot be copied ({e})") from None
    finally:
        a.close()


# SQLite's errors that only writing makes (the source is read, never written, by a backup)
WRITE_ERRORS = ("SQLITE_FULL", "SQLITE_READONLY", "SQLITE_CANTOPEN", "SQLITE_IOERR_WRITE", "SQLITE_IOERR_FSYNC",
                "SQLITE_IOERR_DIR_FSYNC", "SQLITE_IOERR_TRUNCATE", "SQLITE_IOERR_DELETE")


def _writing(e: sqlite3.Error) -> bool:
    """An error of the copy's side of a backup: the new file cannot take the pages."""
    name = getattr(e, "sqlite_errorname", "") or ""
    if any(name == w or name.startswith(w + "_") for w in WRITE_ERRORS):
        return True
    return any(w in str(e) for w in ("full", "readonly", "unable to open"))


# --- making a save file: one writer, and whole or not at all -------------------------------------

SIDECARS = ("-wal", "-shm", "-journal")  # SQLite's files beside a database
def remove_db(path: Path) -> None:
    """A database file and SQLite's files beside it."""
    for suffix in ("", *SIDECARS):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def take_lock(path: Path, building: bool = False) -> WriterLock:
    """The save's writer lock (store/lock.py), or a SaveError naming the process that holds it;
    first, the files beside the save are checked (store/sidefiles.py; `building`: a new save built
    aside at `path`)."""
    check_side_files(path, writing=True, building=building)  # (first: nothing is made beside a refused save)
    try:
        return WriterLock.take(path)
    except SaveBusy as e:
        raise SaveError(f"{path}: another process is writing this save: {e.holder}. One writer at a time: "
                        f"wait for it to end (or stop it), then try again; reading the save (inspect, "
                        f"save info, replay) works meanwhile") from None
    except OSError as e:
        if read_only(path):  # read-only media: say so, as opening it to write would
            raise SaveError(read_only_message(path)) from None
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
        self.lock = take_lock(self.dst, building=True)
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
            raise SaveError(f"{self.dst}: cannot finish the new save: its write-ahead log could not be folded "
                            f"into it (is the disk full?); nothing was made at {self.dst}. Free some space "
                            f"there (or choose another place) and try again")
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



def vacuum(path: Path) -> None:
    """Rewrite a save (not open elsewhere) without free pages: a cut-back copy's deleted rows
    leave no trace in the file (a fork, see sim/fork.py)."""
    try:
        conn = sqlite3.connect(path, isolation_level=None)
        try:
            conn.execute("VACUUM")
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            conn.close()
    except sqlite3.Error as e:  # (a fork's NAME.partial: named as the new save it is, see explain)
        raise SaveError(explain(path, e)) from None
