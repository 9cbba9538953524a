"""Benchmark: the engine at scale. Generates worlds of 25, 100, 250 and 500 agents with one
recipe (towns of 50 agents, the same seed; 25 agents are one town), runs a scripted game day of each headless in a fresh
subprocess, and prints its wall time, CPU time, CPU per agent-day (and its ratio to the first
world's), the child's own peak RSS (os.wait4's ru_maxrss), the save's size and its model calls.

    python benchmarks/scale.py [--agents 25 100 250 500] [--hours 24] [--per-town 50] [--keep DIR]

Targets (issue 15): 500 agents' game day in <= 120 s wall, peak RSS <= 1 GB, save <= 200 MB;
CPU per agent-day within 1.5x from 25 to 500 agents. The machine's 2 cores are shared: CPU is
the fairer figure, and ratios are measured in one run.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def smalltown(*args: str) -> list[str]:
    return [sys.executable, "-m", "smalltown", *args]


def generate(agents: int, per_town: int, seed: int, out: Path) -> Path:
    """A world of `agents` agents: whole towns of `per_town`, the rest living between them."""
    towns, rural = max(1, agents // per_town), agents - max(1, agents // per_town) * per_town
    if agents < per_town:
        towns, per_town, rural = 1, agents, 0
    path = out / f"w{agents}.toml"
    subprocess.run(smalltown("world", "generate", "--towns", str(towns), "--agents", str(per_town),
                             "--rural", str(rural), "--seed", str(seed), "--out", str(path), "--overwrite"),
                   check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
    return path


def run_day(world: Path, hours: int, save: Path) -> dict[str, float]:
    """Run the world headless and scripted for `hours` game hours in a child of its own."""
    t0 = time.perf_counter()
    child = subprocess.Popen(smalltown("run", "--headless", str(world), "--until", f"+{hours}h",
                                       "--backend", "scripted", "--save", str(save), "--overwrite"),
                             cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)  # this child's own rusage, not all children's
    wall = time.perf_counter() - t0
    err = child.stderr.read().decode() if child.stderr else ""
    if status:
        raise SystemExit(f"run of {world} failed ({status}):\n{err[-2000:]}")
    size = sum(f.stat().st_size for f in save.parent.glob(save.name + "*"))
    with sqlite3.connect(save) as conn:
        calls = conn.execute("SELECT count(*) FROM llm_calls").fetchone()[0]
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rss": usage.ru_maxrss / 1024,
            "save": size / 1e6, "calls": calls}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--agents", type=int, nargs="+", default=[25, 100, 250, 500])
    p.add_argument("--hours", type=int, default=24, help="game hours per run (default a day)")
    p.add_argument("--per-town", type=int, default=50, help="agents per generated town")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--keep", type=Path, help="write worlds and saves here and keep them")
    args = p.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        out = args.keep or Path(tmp)
        out.mkdir(parents=True, exist_ok=True)
        print(f"scripted, {args.hours} game hours, towns of {args.per_town}, seed {args.seed}")
        print(f"{'agents':>6} {'wall s':>7} {'CPU s':>7} {'CPU/agent-day':>13} {'ratio':>6} "
              f"{'peak MiB':>8} {'save MB':>8} {'calls':>7}")
        first = None
        for n in args.agents:
            world = generate(n, args.per_town, args.seed, out)
            r = run_day(world, args.hours, out / f"w{n}.sqlite")
            per = r["cpu"] / n * 24 / args.hours
            first = first or per
            print(f"{n:>6} {r['wall']:7.1f} {r['cpu']:7.1f} {per:13.3f} {per / first:6.2f} "
                  f"{r['rss']:8.0f} {r['save']:8.1f} {r['calls']:>7}", flush=True)


if __name__ == "__main__":
    main()
