"""Ticks a save's `-wal` holds that its file alone does not: what `save info` warns of.

A writer folds its log into the file when it closes (Save.close), so `NAME.sqlite` alone is the
whole run, the file a user copies and shares. A log with ticks beyond the file is left by a run
still writing the save, or by one killed (or stopped twice) before it closed. SQLite, and every
smalltown reader, applies such a log; a copy of the file without it is older.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

from smalltown.store.reading import writer_running


def file_tick(path: Path) -> int | None:
    """The tick in the file's meta, its log ignored (`immutable=1` reads the file alone, opens
    nothing beside it and writes nothing); None when it cannot be read there."""
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?immutable=1", uri=True)
    except sqlite3.Error:
        return None
    try:
        conn.execute("PRAGMA trusted_schema=OFF")
        row = conn.execute("SELECT value FROM meta WHERE key = 'tick'").fetchone()
        tick = json.loads(row[0]) if row else None
        return tick if isinstance(tick, int) and not isinstance(tick, bool) else None
    except (sqlite3.Error, ValueError, TypeError):
        return None
    finally:
        conn.close()


def unfolded(path: str | Path, tick: object) -> dict | None:
    """When the `-wal` beside the save at `path` holds ticks its file alone does not, given the
    save's `tick` as a reader saw it (log applied): {"file_tick", "tick", "wal_bytes", "writer"
    (a run is writing the save now), "says" (a sentence)}; None otherwise."""
    path = Path(path)
    log = Path(f"{path}-wal")
    try:
        size = os.lstat(log).st_size
    except OSError:
        return None
    alone = file_tick(path)
    if not size or not isinstance(tick, int) or alone is None or alone >= tick:
        return None
    writer = writer_running(path)
    span = f"tick {tick}" if tick == alone + 1 else f"ticks {alone + 1} to {tick}"
    says = (f"{log.name} ({size:,} bytes) holds {span}, which {path.name} alone does not (it is at tick {alone}): "
            + ("a run is writing this save; it folds them into the file when it closes, so copy the file after it ends"
               if writer else
               "a run ended without folding its log in (killed?); copy both files together, or open the save "
               "once to write (e.g. `smalltown run` it, then quit) and the file alone is whole"))
    return {"file_tick": alone, "tick": tick, "wal_bytes": size, "writer": writer, "says": says}
