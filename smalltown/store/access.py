"""What the file system lets smalltown do with a save's path: whether it may write there, and the
suffix of a save being built aside. A leaf: every module of store/ that asks may import it."""

from __future__ import annotations

import os
from pathlib import Path

PARTIAL = ".partial"  # a save being built, beside where it will be (store/copy.py's Aside)


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
