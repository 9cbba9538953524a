"""The files beside a save, which a save from a stranger may bring with it (a tar keeps links).

A writer makes or opens NAME.lock (store/lock.py), SQLite's NAME-wal, NAME-shm and NAME-journal,
and a new save's NAME.partial (store/copy.py) with its own three. A file there with other names
(a hard link to a file of the user's) is written under all of them (SQLite overwrites it as its
log); a link is followed by the lock's open and by older SQLites (3.40 refuses it, as "unable to
open database file", which blames the folder); a named pipe is waited on forever. So before a
writer opens the save, each of them must be absent or a regular file of one name; anything else
is refused, naming it and saying what to do, and nothing is written. `refusal(save,
writing=False)` is the same check of SQLite's files for a reader (store/reading.py may use it).

The save itself may be a link (its target is what is written and locked: SQLite and lock_file
both resolve it), but for writing it must have one name: SQLite keeps one log per name, so a
writer through one name and a writer or reader through another would each see the file without
the other's log. Refused, not locked by inode: a lock would keep two writers apart, but a reader
through the other name, or a writer after a kill (its log left under the first name), would
still read or write the file without its log.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from smalltown.store.access import PARTIAL, writable
from smalltown.store.errors import SaveError

LOCK = ".lock"
LOGS = ("-wal", "-shm", "-journal")  # SQLite's files beside a database


def kind(mode: int) -> str | None:
    """What a file that is not a regular file is, in words (None for a regular file)."""
    for test, what in ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISDIR, "a folder"),
                       (stat.S_ISFIFO, "a named pipe"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISCHR, "a device"), (stat.S_ISBLK, "a device")):
        if test(mode):
            return what
    return None if stat.S_ISREG(mode) else "not a regular file"


def stat_problem(st: os.stat_result, own: bool = False) -> str | None:
    """What makes a file (as lstat or fstat saw it) unfit to be written as a side file; `own`:
    it must also belong to this user (the writer lock, whose note is written over)."""
    what = kind(st.st_mode)
    if what:
        return f"is {what}"
    if st.st_nlink > 1:
        return f"has {st.st_nlink} names (hard links): writing it would change the file under its other names"
    if own and hasattr(os, "geteuid") and st.st_uid != os.geteuid():
        return f"belongs to another user (uid {st.st_uid})"
    return None


def problem(path: Path, own: bool = False) -> str | None:
    """What is wrong with the side file at `path` (never following a link), or None when it is
    absent or a regular file of one name."""
    try:
        st = os.lstat(path)
    except OSError:  # nothing there, or a name that cannot be (too long): opening it says so
        return None
    found = stat_problem(st, own)
    if found and stat.S_ISLNK(st.st_mode):
        try:
            found += f" (to {os.readlink(path)})"
        except OSError:
            pass
    return found


def advice(path: Path, found: str) -> str:
    """What to do about a refused side file, by what it is for."""
    name = path.name
    log = name.endswith(("-wal", "-journal")) and not name.endswith(tuple(PARTIAL + s for s in LOGS))
    if log and ("link" in found or "names" in found):
        return (f"if it is this save's log (its last commits), give it a file of its own (`cp {name} {name}.copy "
                f"&& mv {name}.copy {name}`); otherwise remove it")
    if name.endswith(LOCK):
        return "remove it (it is no part of the save: the writer lock, made anew by each writer)"
    if PARTIAL in name:
        return "remove it (it is no part of the save: what is left of an unfinished new save)"
    if name.endswith("-shm"):
        return "remove it (SQLite's index of the log, made anew)"
    return "remove it or move it away"


def message(path: Path, found: str) -> str:
    """The refusal of a side file: which file, what it is, what to do."""
    return (f"{path}: {found}; beside a save, smalltown opens no link, no file with other names and nothing "
            f"but a regular file: {advice(path, found)}, then try again")


def side_files(save: str | Path, building: bool = False) -> list[Path]:
    """The names beside `save` a writer or a reader may open or make (SQLite's): beside
    the file SQLite opens (a link resolved) and, if the save's name is a link, beside the link too
    (a new save built aside replaces the link, and is then opened there). `building`: a new save
    built aside at `save` (NAME.partial and its own files too)."""
    given = Path(os.path.abspath(save))
    try:
        real = Path(save).resolve()
    except (OSError, RuntimeError):  # a loop of links: nothing to open there (opening it says so)
        real = given
    bases = dict.fromkeys((real, given))  # (ordered, without repeats)
    suffixes = list(LOGS)
    if building:
        suffixes += [PARTIAL, *(PARTIAL + s for s in LOGS)]
    return [Path(f"{base}{s}") for base in bases for s in suffixes]


def refusal(save: str | Path, writing: bool = True, building: bool = False) -> str | None:
    """Why `save` may not be opened (None: it may): a side file of it that is a link, has other
    names or is not a regular file, or (`writing` it in place) a save file with other names.
    `building`: a new save is built aside and put at `save` (a file there is replaced, never
    written). The writer lock's own file is checked as it is taken (store/lock.py)."""
    if building and os.path.islink(save):  # it would be replaced, but its lock made beside its target
        return (f"{save}: is a symbolic link (to {os.readlink(save)}); a new save is never made at a link: "
                f"remove it or name another file, then try again")
    for path in side_files(save, building):
        found = problem(path)
        if found:
            return message(path, found)
    return one_name(Path(save)) if writing and not building else None


def check_side_files(save: str | Path, writing: bool = True, building: bool = False) -> None:
    """`refusal` as a SaveError, raised before SQLite opens anything."""
    why = refusal(save, writing, building)
    if why:
        raise SaveError(why)


def one_name(save: Path) -> str | None:
    """Why a save cannot be written for its names (see the module's doc), or None."""
    try:
        st = os.stat(save)  # (a link followed: its target is what is written)
    except OSError:
        return None  # not there (a new save), or unreadable: opening it says so
    if stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
        return (
            f"{save}: this save file has {st.st_nlink} names (hard links, made by `ln` or `cp -l`): SQLite "
            f"keeps a log beside each name, so writing it through one name would damage it as read through "
            f"the others. Continue it into a file of its own with `smalltown run {save} -o NEW.sqlite` "
            f"(or `cp {save} NEW.sqlite`), and run that")
    return None
