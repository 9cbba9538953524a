"""Hostile files beside a save: what a tar from a stranger may hold next to `town.sqlite`.

    python tests/hostile/side_files.py DIR

writes, for each case, DIR/CASE/town.sqlite (a short run of the tiny town), the hostile file
beside it, and DIR/CASE/home/notes.txt (a file of the user's, which a link or a second name may
point at: it must stay byte-identical). Each case puts one thing at one name a writer opens or
makes beside a save (NAME.lock, NAME-wal, NAME-shm, NAME-journal, NAME.partial): a symbolic link
to the user's file, a link to a file that is not there (following it would make that file), a
second name (hard link) of the user's file, a named pipe, a folder. tests/test_side_files.py runs
the writers against them; every writer must refuse, naming the file, and change nothing.
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

SUFFIXES = (".lock", "-wal", "-shm", "-journal", ".partial")
KINDS = {  # how it is made -> what the refusal says it is
    "symlink": "is a symbolic link",
    "dangling": "is a symbolic link",
    "hardlink": "has 2 names (hard links)",
    "fifo": "is a named pipe",
    "folder": "is a folder",
}
VICTIM = "home/notes.txt"  # beside the save's folder, a file of the user's
VICTIM_TEXT = b"# my notes\nexport PATH=$HOME/bin:$PATH\n" * 40
GONE = "home/made-by-a-link.txt"  # where a dangling link points: nothing may appear there


@dataclass(frozen=True)
class SideCase:
    suffix: str  # the name beside the save: SAVE + suffix
    kind: str  # a key of KINDS

    @property
    def name(self) -> str:
        return f"{self.suffix.lstrip('.-')}-{self.kind}"

    @property
    def expect(self) -> str:
        return KINDS[self.kind]


CASES = [SideCase(s, k) for s in SUFFIXES for k in KINDS]


def victim(folder: Path) -> Path:
    """The user's file of a case folder, written anew."""
    path = folder / VICTIM
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(VICTIM_TEXT)
    return path


def plant(save: Path, case: SideCase, home: Path) -> Path:
    """Put the case's hostile file beside `save` (which need not exist); `home` holds the user's
    file (see `victim`, same file system: a hard link needs it). Returns the hostile file."""
    side = Path(f"{save}{case.suffix}")
    target = home / VICTIM
    if case.kind == "symlink":
        side.symlink_to(target)
    elif case.kind == "dangling":
        side.symlink_to(home / GONE)
    elif case.kind == "hardlink":
        os.link(target, side)
    elif case.kind == "fifo":
        os.mkfifo(side)
    elif case.kind == "folder":
        side.mkdir()
        (side / "keep.txt").write_text("a folder's file\n")
    else:
        raise ValueError(case.kind)
    return side


def listing(folder: Path) -> dict[str, object]:
    """Every name under `folder` with what it is: a link's target, a regular file's bytes, a
    folder or a pipe (what a refusal must leave as it was)."""
    out: dict[str, object] = {}
    for path in sorted(folder.rglob("*")):
        rel = str(path.relative_to(folder))
        if path.is_symlink():
            out[rel] = ("link", os.readlink(path))
        elif path.is_fifo():
            out[rel] = ("fifo",)
        elif path.is_dir():
            out[rel] = ("folder",)
        else:
            out[rel] = ("file", path.read_bytes())
    return out


def make_save(path: Path) -> Path:
    """A short run of the tiny town at `path`, with no file left beside it."""
    root = Path(__file__).resolve().parents[2]
    sys.path.insert(0, str(root))
    from smalltown.cli.main import main

    code = main(["run", "--headless", str(root / "worlds" / "tiny.toml"), "--until", "+10m", "--save", str(path),
                 "--backend", "scripted"])
    if code != 0:
        raise SystemExit(f"could not make {path}")
    return path


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    base = make_save(out / "base.sqlite")
    for case in CASES:
        folder = out / case.name
        folder.mkdir()
        shutil.copyfile(base, folder / "town.sqlite")
        victim(folder)
        plant(folder / "town.sqlite", case, folder)
    base.unlink()
    print(f"{len(CASES)} cases in {out}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
