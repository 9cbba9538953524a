"""Sharing and checking files: `world pack`, `world unpack`, `save strip`, `save check`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from smalltown.shown import shown
from smalltown.store.copy import Aside
from smalltown.store.save import Save


def world_pack(args: argparse.Namespace) -> int:
    from smalltown.world.pack import SUFFIX, pack

    world = Path(args.path)
    out = Path(args.output) if args.output else Path(world.stem + SUFFIX)
    if out.exists() and not args.overwrite:
        print(f"error: {out}: a file is already there (pass --overwrite)", file=sys.stderr)
        return 2
    pack(world, out)
    print(f"{out}: {out.stat().st_size:,} bytes — the world {world} and its map; "
          f"install it with `smalltown world unpack {out}` or run it with `smalltown run {out}`")
    return 0


def world_unpack(args: argparse.Namespace) -> int:
    from smalltown.world.pack import unpack

    installed = unpack(args.path, args.to, force=args.force)
    print(shown(f"installed {installed} (and its map); run it with `smalltown run {installed}`"))
    return 0


# --- saves -------------------------------------------------------------------------------------


def save_check(args: argparse.Namespace) -> int:
    """Exit 1 when the save fails the check, whether it opens or not (what the check is for); 2
    only when there is no file to check."""
    from smalltown.sim.check import check_save
    from smalltown.store.errors import SaveError

    if not Path(args.path).exists():
        print(f"error: {shown(args.path)}: no such save", file=sys.stderr)
        return 2
    try:
        report = check_save(args.path)
    except SaveError as e:
        print(f"error: {shown(e, lines=True)}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(report.to_json()))
    elif report.ok:
        c = report.counts
        talks = f"{c['conversations']:,} conversations, " if "conversations" in c else ""
        print(f"{args.path}: ok — {c.get('agents', 0)} agents, {c.get('memories', 0):,} memories, "
              f"{c.get('events', 0):,} events, {talks}{c.get('llm_calls', 0):,} model calls")
    else:
        for problem in report.problems:
            print(f"{args.path}: {shown(problem, lines=True)}")
    return 0 if report.ok else 1


STRIPPED = ("llm_calls", "snapshots")  # the model call log, and the snapshots a rewind needs


def strip_save(src: Path, dst: Path, keep_retrievals: bool = False) -> dict[str, int]:
    """A smaller copy of a save for sharing: the same town at the same tick (the same digest),
    without the model call log and snapshots (and the retrieval log, unless kept); the event log
    and the conversations (the story) are kept. Returns the rows dropped per table."""
    save = Save.open(src, readonly=True)  # a save we would not open is not copied either
    try:
        aside = Aside(dst)  # the writer lock of dst: a save another process is writing is not replaced
    except BaseException:
        save.close()
        raise
    try:
        drop = (*STRIPPED, *(() if keep_retrievals else ("retrievals",)))
        dropped = save.strip_into(aside.tmp, drop, {"from": src.name}, dst)
        aside.place()
    finally:
        aside.close()
        save.close()
    return dropped


def save_strip(args: argparse.Namespace) -> int:
    src, dst = Path(args.path), Path(args.output)
    if dst.exists() and not args.overwrite:
        print(f"error: {dst}: a file is already there (pass --overwrite)", file=sys.stderr)
        return 2
    if dst.resolve() == src.resolve():
        print(f"error: {dst}: the copy must be another file than the save", file=sys.stderr)
        return 2
    before = _size(src)
    dropped = strip_save(src, dst, keep_retrievals=args.keep_retrievals)
    after = _size(dst)
    what = ", ".join(f"{n:,} {t}" for t, n in dropped.items()) or "nothing"
    print(f"{dst}: {after:,} bytes (the save {src}: {before:,} bytes); dropped {what}")
    print(f"it opens and continues like the original (`smalltown run {dst}`), but cannot be replayed "
          f"as a cassette or rewound to a snapshot")
    return 0


def _size(path: Path) -> int:
    """A save's bytes on disk, its write-ahead log included."""
    return sum(Path(f"{path}{s}").stat().st_size for s in ("", "-wal") if Path(f"{path}{s}").exists())


COMMANDS = {("world", "pack"): world_pack, ("world", "unpack"): world_unpack,
            ("save", "check"): save_check, ("save", "strip"): save_strip}
