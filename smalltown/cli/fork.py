"""`smalltown fork SAVE --at WHEN -o NEW`: a new save, as SAVE was at an earlier moment."""

from __future__ import annotations

import argparse
import json
import sys
from datetime import timedelta
from pathlib import Path

from smalltown.sim.clock import clock_near
from smalltown.shown import shown
from smalltown.sim.files import SavePathError, require_folder
from smalltown.sim.fork import clock, fork
from smalltown.store.schema import TIME_FMT
from smalltown.store.save import Save


def fork_command(args: argparse.Namespace) -> int:
    at = None
    from smalltown.sim.check import require

    try:
        require_folder(Path(args.to))  # as run --out: a typo in the folder makes nothing
    except SavePathError as e:
        print(f"error: --out: {shown(e)}", file=sys.stderr)
        return 2
    save = Save.open(args.save, readonly=True)  # (checked here, under its own name, before it is copied)
    require(save, snapshots=True)
    try:
        start, step = clock(save)
        end = start + timedelta(seconds=save.meta("tick") * step)
    finally:
        save.close()
    if args.at:
        try:
            at = clock_near(args.at, end, start, last=True)
        except ValueError as e:
            print(f"error: --at: {shown(e)}", file=sys.stderr)
            return 2
    r = fork(args.save, at, args.to, overwrite=args.overwrite)
    if args.json:
        print(json.dumps({"path": str(r.path), "source": str(r.source), "tick": r.tick,
                          "game_time": r.time.strftime(TIME_FMT), "asked_tick": r.asked_tick,
                          "asked_time": r.asked_time.strftime(TIME_FMT),
                          "source_tick": r.source_tick, "source_digest": r.source_digest,
                          "dropped": r.dropped}))
        return 0
    # the file names are shown as text: a save's name may come from a stranger, as its content does
    source, path = shown(r.source), shown(r.path)
    print(f"forked {source} at {r.time:%Y-%m-%d %H:%M:%S} (tick {r.tick}) into {path}")
    if r.asked_tick != r.tick:
        print(f"  (asked for {r.asked_time:%Y-%m-%d %H:%M:%S}: snapshots are taken each game hour, and "
              f"a fork starts at the latest one at or before the moment asked for)")
    d = r.dropped
    print(f"  cut: {d['events']:,} events, {d['memories']:,} memories, {d['llm_calls']:,} model calls, "
          f"{d['retrievals']:,} retrievals, {d['snapshots']:,} snapshots after it")
    print(f"continue it: smalltown run {path}")
    print(f"repeat the original from there (the same answers, then live): "
          f"smalltown run {path} --from {source} --fallthrough scripted")
    return 0
