"""Benchmark: what the day at a glance (`D`) costs to read from a save, per game day.

Reads every day of a save with the store's day reader (what the screen asks for, on opening and on
each `<` `>`), several times, and prints the median per day with the spans found. Without --save it
first makes a two-day scripted run of Smallville (about 30 s).

    python benchmarks/day_view.py [--save SAVE] [--repeat N]
"""

from __future__ import annotations

import argparse
import statistics
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]

from smalltown.store.reader import Reader  # noqa: E402
from smalltown.world.load import load_world  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--save", help="a save to read (default: a new two-day scripted Smallville run)")
    p.add_argument("--repeat", type=int, default=5)
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as d:
        save = Path(args.save) if args.save else Path(d) / "sv2.sqlite"
        if not args.save:
            subprocess.run([sys.executable, "-m", "smalltown", "run", "--headless", str(ROOT / "worlds" / "smallville.toml"),
                            "--until", "+2d", "--backend", "scripted", "--save", str(save)], check=True, cwd=ROOT,
                           stderr=subprocess.DEVNULL)
        conn = sqlite3.connect(f"file:{save}?mode=ro", uri=True)
        reader = Reader(conn)
        world = load_world(ROOT / "worlds" / "smallville.toml")
        last = reader.day(None, world.gatherings)
        days = [last.first.fromordinal(n) for n in range(last.first.toordinal(), last.last.toordinal() + 1)]
        print(f"{save.name}: {save.stat().st_size / 1e6:.0f} MB, {len(reader.agent_names())} agents, "
              f"{len(days)} days")
        for day in sorted(days):
            times = []
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                got = reader.day(day, world.gatherings)
                times.append(time.perf_counter() - t0)
            spans = sum(len(s) for s in got.spans.values())
            print(f"  {day}: {statistics.median(times) * 1000:6.1f} ms (median of {args.repeat}), {spans:,} spans")
        conn.close()


if __name__ == "__main__":
    main()
