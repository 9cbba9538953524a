"""What goes wrong with a save, said to the user: the error, and SQLite's errors explained."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from smalltown.store.reading import writable


class SaveError(Exception):
    """A save that cannot be opened or written, with a message for the user."""


def read_only(path: Path) -> bool:
    """The save cannot be written: the file or its folder (where SQLite keeps its log) is
    read-only, or marked so (honoured even for root, who may write anything)."""
    return path.exists() and not writable(path)


def read_only_message(path: Path) -> str:
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

