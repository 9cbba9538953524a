"""The files a run opens or writes, refused before anything is opened or made: a new save in a
folder that is not there (`run --out`, `fork --out`, the TUI's save as and fork), and a file to
open that is no save, pack or world (the TUI's O, before its app ends)."""

from __future__ import annotations

from pathlib import Path

from smalltown.store.save import Save, SaveError, is_save
from smalltown.world.errors import WorldError
from smalltown.world.load import load_world
from smalltown.world.pack import is_pack, read_pack

PROBLEMS_SAID = 3  # a world's problems quoted in one line; `world check` lists them all


class SavePathError(ValueError):
    """A new save named in a folder that is not there: refused, not made (a typo would otherwise
    leave folders behind). Only the data folder for saves made without --out is ours to create."""


def require_folder(path: Path) -> None:
    """Refuse a new save whose folder does not exist, before anything is written."""
    if not path.parent.is_dir():
        raise SavePathError(f"{path}: the folder {path.parent} does not exist (make it first, "
                            "or name a file in a folder that does)")


def reason(e: BaseException) -> str:
    """An error from opening a file, as one line (a world's problems joined, the first few)."""
    if isinstance(e, WorldError) and e.problems:
        more = len(e.problems) - PROBLEMS_SAID
        return "; ".join(str(p) for p in e.problems[:PROBLEMS_SAID]) + (f" (and {more} more)" if more > 0 else "")
    return str(e) or type(e).__name__


def unopenable(path: Path) -> str | None:
    """What makes `path` impossible to run, as far as can be known without opening the run: not a
    regular file, a save that fails the checks every reader makes (fast: a game day of 25 agents
    in a tenth of a second), a pack or a world with problems. None when it may open: whether its
    town comes back (`save check`) and the backend answers are known only by opening it."""
    if not path.exists():
        return f"{path}: no such file"
    if not path.is_file():
        return f"{path}: a folder, not a file" if path.is_dir() else f"{path}: not a regular file"
    try:
        if is_save(path):
            Save.open(path, readonly=True).close()  # its file, tables and rows: what every reader checks
        elif path.suffix in (".sqlite", ".sqlite3", ".db"):
            return f"{path}: not a smalltown save (not an SQLite database)"
        elif is_pack(path):
            read_pack(path)
        else:
            load_world(path)
    except (SaveError, WorldError, OSError, ValueError) as e:
        return reason(e)
    return None
