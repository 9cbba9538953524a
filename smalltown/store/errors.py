"""What goes wrong with a save, said to the user: the error, and SQLite's errors explained."""

from __future__ import annotations

import functools
import inspect
import sqlite3
from pathlib import Path
from typing import Any, Callable, TypeVar

from smalltown.store.access import PARTIAL, writable


class SaveError(Exception):
    """A save that cannot be opened or written, with a message for the user."""


class SQLiteError(SaveError):
    """SQLite failed on a save (damaged, locked, a full disk, a table it lacks): the message names
    the file and says what to do; `said` is SQLite's own words, for a caller that lists them."""

    def __init__(self, message: str, said: str):
        super().__init__(message)
        self.said = said


def sqlite_error(path: Path | str, e: sqlite3.Error, new: bool = False) -> SQLiteError:
    """`e` as the error store/ raises: explained for the save at `path` (`new`: a save being made)."""
    return SQLiteError(explain_new(Path(path), e) if new else explain(Path(path), e), str(e))


C = TypeVar("C", bound=type)


def guarded(cls: C) -> C:
    """No sqlite3 error leaves store/: each public method of `cls` (its own, not inherited) raises
    SQLiteError instead, as `self._sqlite_error(e)` says it (naming the save). A generator's
    errors are caught as it is iterated."""
    for name, f in list(vars(cls).items()):
        if name.startswith("_") or not inspect.isfunction(f):
            continue  # (properties, static and class methods see to their own errors)
        setattr(cls, name, _guard(f))
    return cls


def _guard(f: Callable) -> Callable:
    if inspect.isgeneratorfunction(f):
        @functools.wraps(f)
        def rows(self: Any, *args: Any, **kwargs: Any) -> Any:
            try:
                return (yield from f(self, *args, **kwargs))
            except sqlite3.Error as e:
                raise self._sqlite_error(e) from None
        return rows

    @functools.wraps(f)
    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return f(self, *args, **kwargs)
        except sqlite3.Error as e:
            raise self._sqlite_error(e) from None
    return call


def read_only(path: Path) -> bool:
    """The save cannot be written: the file or its folder (where SQLite keeps its log) is
    read-only, or marked so (honoured even for root, who may write anything)."""
    return path.exists() and not writable(path)


def read_only_message(path: Path) -> str:
    what = "the save file is" if not writable(path, folder=False) else \
        "its folder is read-only (SQLite writes its log beside the save), so the save is"
    return (f"{path}: {what} read-only; make it writable, or continue it into a new file with "
            f"`smalltown run {path} -o NEW.sqlite`")


def explain(path: Path, e: sqlite3.Error) -> str:
    """An SQLite error as a message that names the save and says what to do."""

    if path.name.endswith(PARTIAL):  # a new save being built aside (store/copy.py's Aside)
        return explain_new(path.with_name(path.name[:-len(PARTIAL)]), e)
    msg = str(e)
    if "disk is full" in msg or "database or disk is full" in msg:
        return (f"{path}: cannot write: the disk is full (or the save reached its size limit); the tick "
                f"in flight was not saved, and the save is intact up to its last committed tick. "
                f"Free some space and continue it with `smalltown run {path}`")
    if "readonly" in msg or "read-only" in msg:
        return (f"{path}: cannot write: the save is read-only; make it writable, or continue it into "
                f"a new file with `smalltown run {path} -o NEW.sqlite`")
    if "unable to open" in msg:
        return (f"{path}: cannot open ({msg}): is its folder writable? SQLite keeps its write-ahead "
                f"log ({path.name}-wal) next to the save")
    if "locked" in msg or "busy" in msg:
        return f"{path}: another process is writing this save ({msg})"
    if "malformed" in msg or "not a database" in msg:
        return f"{path}: the save is damaged ({msg}); `smalltown save check {path}` says more"
    return f"{path}: {msg}"



def explain_new(path: Path, e: sqlite3.Error) -> str:
    """An SQLite error while a new save is made at `path` (built aside, store/copy.py's Aside: a
    copy, a fork, a stripped copy, a new run's save): it names `path`, never the save it is made
    from, and nothing is left there."""
    msg = str(e)
    if "full" in msg:
        return (f"{path}: cannot write the new save: the disk is full (or a file size limit was reached); "
                f"nothing was made at {path}, and what it was made from is unchanged. Free some space there "
                f"(or choose another place) and try again")
    if "readonly" in msg or "read-only" in msg or "unable to open" in msg:
        return f"{path}: cannot write the new save ({msg}): is its folder writable? Nothing was made there"
    if "I/O error" in msg:
        return (f"{path}: cannot write the new save ({msg}: a full disk, a file size limit or a failing device?); "
                f"nothing was made there, and what it was made from is unchanged")
    return f"{path}: cannot write the new save ({msg}); nothing was made there"
