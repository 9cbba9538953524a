"""Benchmark: one full game day of a world (default Smallville, 25 agents) with the scripted
backend. Prints wall and CPU time, game seconds per wall second, ticks per second and peak
memory (CPU time is the fairer figure on a machine shared with other work).

    python benchmarks/day.py [WORLD] [--days N]

Targets: a Smallville day in under 30 s on a 2-core machine (issue 2); in 4 s (issue 15).
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from collections import Counter
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from smalltown.scripted import ScriptedBackend  # noqa: E402
from smalltown.sim.open import create  # noqa: E402
from smalltown.world.load import load_world  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("world", nargs="?", default=str(ROOT / "worlds" / "smallville.toml"))
    p.add_argument("--days", type=float, default=1.0)
    args = p.parse_args()

    t0 = time.perf_counter()
    world = load_world(args.world)
    load_s = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as d:
        sim = create(world, Path(d) / "bench.sqlite", ScriptedBackend(world.seed))
        kinds: Counter[str] = Counter()
        until = sim.now + timedelta(days=args.days)
        t1, c1 = time.perf_counter(), time.process_time()
        sim.run_until(until, on_tick=lambda evs: kinds.update(e.kind for e in evs))
        wall, cpu = time.perf_counter() - t1, time.process_time() - c1
        game = sim.tick * world.step_seconds
        calls = sim.save.count("llm_calls")
        by_task = sim.save.conn.execute(
            "select task, count(*) from llm_calls group by task order by count(*) desc").fetchall()
        memories = dict(sim.save.conn.execute("select kind, count(*) from memories group by kind"))
        sim.close()  # (the write-ahead log is folded into the file on close)
        size = (Path(d) / "bench.sqlite").stat().st_size
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"world            {world.name} ({len(world.agents)} agents, {world.map.width}x{world.map.height})")
    print(f"load             {load_s * 1000:.0f} ms")
    print(f"game time        {args.days:g} day(s), {sim.tick} ticks of {world.step_seconds} s")
    print(f"wall time        {wall:.2f} s")
    print(f"cpu time         {cpu:.2f} s")
    print(f"speed            {game / wall:,.0f} game seconds per wall second, {sim.tick / wall:,.0f} ticks/s")
    print(f"peak memory      {peak_mib:.0f} MiB (max RSS)")
    print(f"save size        {size / 1e6:.1f} MB")
    per = len(world.agents) * args.days
    print(f"tasks asked      {calls} ({calls / per:.1f} per agent-day), by task per agent-day:")
    for task, n in by_task:
        print(f"    {task:24} {n / per:6.1f}")
    print("memories         " + ", ".join(f"{k} {v}" for k, v in sorted(memories.items())))
    print(f"events           {sum(kinds.values())}: " + ", ".join(f"{k} {v}" for k, v in kinds.most_common()))


if __name__ == "__main__":
    main()
