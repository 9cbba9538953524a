"""Forking a save: a new save that is the old one as it was at an earlier moment.

The original is only read (SQLite's backup API copies it consistently, even while a run is
writing it). The copy is cut back to the latest snapshot at or before the moment asked for
(snapshots are taken each game hour, see Simulation.snapshot): what happened after it is deleted,
and VACUUM rewrites the file so no trace of that future is left in its free pages. The fork opens
with sim.open.resume and goes on from there; re-run with the original as a cassette
(`smalltown run FORK --from ORIGINAL`), it repeats the original until its inputs change.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from smalltown.store.copy import Aside, copy_pages, vacuum
from smalltown.store.records import TickChanges
from smalltown.store.save import Save, SaveError
from smalltown.world.load import load_world_text


@dataclass(frozen=True)
class ForkResult:
    path: Path  # the new save
    source: Path  # the save it was forked from
    tick: int  # the snapshot the fork starts at
    time: datetime
    asked_tick: int  # the moment asked for (the fork is at the latest snapshot at or before it)
    asked_time: datetime
    source_tick: int  # where the original had got to
    source_digest: str  # the original's state digest, as `smalltown save info` prints it
    dropped: dict[str, int] = field(default_factory=dict)  # rows cut, by table


def _tick_of(at: datetime | int, start: datetime, step: int) -> int:
    if isinstance(at, datetime):
        return int((at - start).total_seconds() // step)
    return int(at)


def fork(save_path: str | Path, at: datetime | int | None, to_path: str | Path,
         overwrite: bool = False) -> ForkResult:
    """A new save at `to_path`: `save_path` as it was at game time (or tick) `at` (None: its last
    tick), cut back to the latest snapshot at or before then. The original is never written."""
    src, dst = Path(save_path), Path(to_path)
    if not src.exists():
        raise SaveError(f"{src}: no such save")
    if dst.exists() and dst.resolve() == src.resolve():
        raise SaveError(f"{dst}: a fork cannot replace the save it is forked from; name a new file")
    if dst.exists() and not overwrite:
        raise SaveError(f"{dst}: a file is already there (pass --overwrite to replace it)")
    aside = Aside(dst)  # built beside it and moved into place whole (a fork killed half-way leaves nothing)
    try:
        copy_pages(src, aside.tmp)
        save = Save.open(aside.tmp)  # a copy of an older save is migrated here, never the original
        try:
            result = _cut(save, src, dst, at)
        finally:
            save.close()
        vacuum(aside.tmp)  # no trace of the future cut off is left in free pages
        aside.place()
    finally:
        aside.close()
    return result


def _cut(save: Save, src: Path, dst: Path, at: datetime | int | None) -> ForkResult:
    start, step = clock(save)
    end_tick = save.meta("tick")
    end = start + timedelta(seconds=end_tick * step)
    tick = end_tick if at is None else _tick_of(at, start, step)
    when = start + timedelta(seconds=tick * step)
    if tick < 0:
        raise SaveError(f"{src}: {when:%Y-%m-%d %H:%M:%S} is before the run started ({start:%Y-%m-%d %H:%M:%S})")
    if tick > end_tick:
        raise SaveError(f"{src}: {when:%Y-%m-%d %H:%M:%S} is after the end of the run "
                        f"({end:%Y-%m-%d %H:%M:%S}); fork at or before it")
    digest = save.digest()
    snaps = [t for t, _ in save.snapshots()]
    if tick == end_tick:  # now: the state as it is (with any intervention since the last tick)
        save.commit(TickChanges(end_tick, save.meta("game_time")), snapshot=True)
        at_tick = end_tick
    elif any(t <= tick for t in snaps):
        at_tick = max(t for t in snaps if t <= tick)
    else:
        why = ("it was stripped for sharing (`smalltown save strip`)" if save.meta("stripped")
               else "it was written by an older smalltown, before schema 3")
        if not snaps:
            raise SaveError(f"{src}: it has no snapshots ({why}), so it can be forked only at its end; "
                            f"run it on (`smalltown run {src}`) and it can be rewound from then on")
        first = start + timedelta(seconds=snaps[0] * step)
        raise SaveError(f"{src}: its first snapshot is at {first:%Y-%m-%d %H:%M:%S} (before it, {why}); "
                        f"it cannot be forked earlier")
    dropped = save.rewind(at_tick)
    save.commit(TickChanges(meta={"forked_from": {"path": str(src.resolve()), "digest": digest, "tick": at_tick,
                                                  "time": save.meta("game_time"), "source_tick": end_tick}}))
    return ForkResult(dst, src, at_tick, start + timedelta(seconds=at_tick * step), tick, when, end_tick,
                      digest, dropped)


def clock(save: Save) -> tuple[datetime, int]:
    """The run's start time and game seconds per tick, from the world it was started from."""
    world = load_world_text(save.meta("world_source"), save.meta("world_text"),
                            save.meta("map_source"), save.meta("map_text"))
    return world.start, world.step_seconds
