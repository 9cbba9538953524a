"""Benchmark: a week (default 7 game days) of a world (default Smallville) with the scripted
backend, headless and in-process. At the end of each game day it prints the peak RSS (ru_maxrss),
the current RSS (/proc/self/statm), the day's wall time and the bytes the process wrote that day
(/proc/self/io write_bytes).

    python benchmarks/week.py [WORLD] [--days N] [--trace N [--since D]] [--path-cache MB]

`--trace N` also takes a tracemalloc snapshot at the end of each day and prints the N allocation
sites that grew most since the day before (slow: tracing costs ~2x); with `--since D`, since the
end of day D instead (what keeps growing stands out over several days).

`--path-cache MB` runs with the path search cache bounded to MB instead of the default (what RSS
it buys against the CPU the searches redone cost: the day's CPU seconds are printed too).

Target (issue 15): the RSS at the end of day 7 within 1.2x of the RSS at the end of day 1.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
import tracemalloc
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from smalltown.scripted import ScriptedBackend  # noqa: E402
from smalltown.sim.open import create  # noqa: E402
from smalltown.world.load import load_world  # noqa: E402
from smalltown.world.paths import Paths  # noqa: E402


def rss_mib() -> float:
    """The current resident set, from /proc/self/statm (pages)."""
    resident = int(Path("/proc/self/statm").read_text().split()[1])
    return resident * os.sysconf("SC_PAGE_SIZE") / 2**20


def written() -> int:
    """Bytes this process has caused to be written to storage (/proc/self/io)."""
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("write_bytes:"):
            return int(line.split()[1])
    return 0


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("world", nargs="?", default=str(ROOT / "worlds" / "smallville.toml"))
    p.add_argument("--days", type=int, default=7)
    p.add_argument("--trace", type=int, default=0, metavar="N", help="top N growing allocation sites per day")
    p.add_argument("--since", type=int, default=0, metavar="D",
                   help="with --trace: compare each later day with day D's snapshot (not the day before)")
    p.add_argument("--path-cache", type=int, default=0, metavar="MB", help="bound the path cache to MB")
    args = p.parse_args()

    world = load_world(args.world)
    if args.trace:
        tracemalloc.start(8)
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "week.sqlite"
        sim = create(world, path, ScriptedBackend(world.seed))
        if args.path_cache:
            sim.paths = sim.movement.paths = Paths(world.map.walkable, cache_bytes=args.path_cache << 20)
        print(f"world {world.name} ({len(world.agents)} agents), {args.days} game days, scripted")
        print(f"{'day':>3} {'wall s':>7} {'cpu s':>6} {'rss MiB':>8} {'max MiB':>8} {'written MB':>10} {'save MB':>8}")
        first, before = None, tracemalloc.take_snapshot() if args.trace else None
        for day in range(1, args.days + 1):
            w0, t0, c0 = written(), time.perf_counter(), time.process_time()
            sim.run_until(sim.now + timedelta(days=1))
            wall, cpu, wrote, rss = time.perf_counter() - t0, time.process_time() - c0, written() - w0, rss_mib()
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            size = sum(f.stat().st_size for f in Path(d).glob("week.sqlite*"))
            first = first or rss
            print(f"{day:>3} {wall:7.1f} {cpu:6.1f} {rss:8.0f} {peak:8.0f} {wrote / 1e6:10.0f} {size / 1e6:8.1f}", flush=True)
            if args.trace:
                after = tracemalloc.take_snapshot()
                for stat in after.compare_to(before, "traceback")[:args.trace]:
                    # a traceback runs from the oldest frame: shown from the allocation outwards
                    print(f"    {stat.size_diff / 1024:+9.0f} KiB {stat.count_diff:+8d}  "
                          + " <- ".join(f"{Path(f.filename).name}:{f.lineno}" for f in list(stat.traceback)[::-1][:5]))
                if not args.since or day <= args.since:
                    before = after
        sim.close()
    print(f"rss day {args.days} / day 1: {rss / first:.2f}x (target <= 1.2x)")


if __name__ == "__main__":
    main()
