"""Benchmark: drawing the Smallville map frame with its 25 agents.

    python benchmarks/map_render.py [--frames 200] [--size 200x60]

Frames come from a real scripted run (agents walking, objects changing, one agent selected with
its path drawn). For each frame it times what the interface does with it: `MapView.show` (the
overlay, and which rows to redraw) plus rendering every visible line of the map, as a full
repaint does ("warm": rows without changes come from the row cache). "Cold" clears the row cache
first: every visible row rebuilt, as on a resize or a scroll to new rows.
Target (issue 5): under 10 ms for a frame.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from smalltown.scripted import ScriptedBackend  # noqa: E402
from smalltown.sim.open import create  # noqa: E402
from smalltown.sim.simulation import Simulation  # noqa: E402
from smalltown.tui.app import SmalltownApp  # noqa: E402
from smalltown.tui.widgets.map_view import MapView  # noqa: E402
from smalltown.tui.runner import SimRunner  # noqa: E402
from smalltown.tui.snapshot import Frame  # noqa: E402
from smalltown.world.load import load_world  # noqa: E402


def record_frames(sim: Simulation, n: int) -> list[Frame]:
    """n frames of the town from 6:00, one per tick, as the worker makes them."""
    runner = SimRunner(sim, lambda frame: None, paused=True)
    frames = []
    for _ in range(n):
        runner._tick()
        frames.append(runner.frame())
    return frames


def ms(xs: list[float]) -> str:
    xs = sorted(xs)
    return f"median {statistics.median(xs) * 1000:.2f} ms, p95 {xs[int(len(xs) * 0.95)] * 1000:.2f} ms, " \
           f"max {xs[-1] * 1000:.2f} ms"


async def bench(frames: list[Frame], sim: Simulation, size: tuple[int, int]) -> None:
    app = SmalltownApp(sim, start_paused=True)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        view = app.query_one(MapView)
        walker = next((a.name for f in frames for a in f.agents if len(a.path) > 5), None)
        view.selected = walker
        height = view.size.height
        warm, cold = [], []
        for frame in frames:
            t0 = time.perf_counter()
            view.show(frame.agents, frame.objects, frame.changed_objects)
            for y in range(height):
                view.render_line(y)
            warm.append(time.perf_counter() - t0)
        for frame in frames:
            view._cache.clear()
            t0 = time.perf_counter()
            view.show(frame.agents, frame.objects, frame.changed_objects)
            for y in range(height):
                view.render_line(y)
            cold.append(time.perf_counter() - t0)
        print(f"map view         {view.size.width}x{height} cells of the {sim.world.map.width}x"
              f"{sim.world.map.height} map, {len(frames[0].agents)} agents, path of {walker} drawn")
        print(f"frames           {len(frames)}")
        print(f"warm (row cache) {ms(warm)}")
        print(f"cold (no cache)  {ms(cold)}")
        print(f"target           under 10 ms: {'met' if max(statistics.median(warm), statistics.median(cold)) < 0.010 else 'NOT met'}")
        await pilot.press("q")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("world", nargs="?", default=str(ROOT / "worlds" / "smallville.toml"))
    ap.add_argument("--frames", type=int, default=200)
    ap.add_argument("--size", default="200x60", help="terminal size, WxH")
    args = ap.parse_args()
    width, height = (int(v) for v in args.size.lower().split("x"))
    world = load_world(args.world)
    with tempfile.TemporaryDirectory() as tmp:
        sim = create(world, Path(tmp) / "bench.sqlite", ScriptedBackend(world.seed))
        frames = record_frames(sim, args.frames)
        asyncio.run(bench(frames, sim, (width, height)))


if __name__ == "__main__":
    main()
