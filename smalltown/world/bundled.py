"""The world a bare `smalltown` opens: the one `worlds/default.txt` names, so that choosing the
bundled town is the worlds folder's business and no code names a particular world."""

from __future__ import annotations

from pathlib import Path

DEFAULT_LIST = Path("worlds") / "default.txt"


def default_world() -> Path:
    """The world file named in `worlds/default.txt` (its first line that is not blank or a
    `#` comment: a file name in that folder), looked for from the current folder, then from the
    checkout smalltown runs from. Without one, the list's own path: opening it says what is missing."""
    for base in (Path.cwd(), Path(__file__).resolve().parents[2]):
        listed = base / DEFAULT_LIST
        if listed.is_file():
            name = _first_name(listed.read_text(encoding="utf-8", errors="replace"))
            if name:
                return base / DEFAULT_LIST.parent / name
    return DEFAULT_LIST


def _first_name(text: str) -> str:
    """The first entry, when it is a plain file name (nothing that climbs out of the folder)."""
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            return line if Path(line).name == line and line not in (".", "..") else ""
    return ""
