"""`smalltown saves`: the saves made without --out, in the user's saves folder, newest first, so
a run started anywhere can be found again."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from smalltown.dirs import saves_dir
from smalltown.shown import shown
from smalltown.store.save import Save


def listed() -> list[dict]:
    """Each file of the saves folder, newest first: a save with its world and game time; a file
    that cannot be read as one says so instead of stopping the list."""
    folder = saves_dir()
    files = [p for p in folder.glob("*.sqlite") if p.is_file()] if folder.is_dir() else []
    rows = []
    for path in sorted(files, key=lambda p: p.stat().st_mtime, reverse=True):
        rows.append({"path": str(path), "size": path.stat().st_size, **_what(path)})
    return rows


def _what(path: Path) -> dict:
    try:
        save = Save.open(path, readonly=True)
    except Exception as e:  # noqa: BLE001 - a damaged or foreign file is listed, not fatal
        return {"world": None, "game_time": None, "problem": str(e)[:200]}
    try:
        return {"world": save.meta("world"), "game_time": save.meta("game_time")}
    finally:
        save.close()


def saves_command(args: argparse.Namespace) -> int:
    rows = listed()
    if args.json:
        print(json.dumps(rows))
        return 0
    if not rows:
        print(shown(f"no saves yet in {saves_dir()} (a run without --out is saved there)"))
        return 0
    print(shown(f"{len(rows)} save{'s' if len(rows) != 1 else ''} in {saves_dir()}, the newest first:"))
    for r in rows:
        what = f"{r['world']}, {r['game_time']}" if r["world"] is not None else f"not readable: {r['problem']}"
        print(shown(f"  {r['path']}  {what}, {_size(r['size'])}"))
    print("continue one: smalltown run PATH; replay it: smalltown replay PATH")
    return 0


def _size(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 1e6 else f"{n / 1e3:.0f} kB"
