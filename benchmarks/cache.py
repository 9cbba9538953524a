"""Benchmark: how much of the prompt the real llama.cpp backend serves from cache.

Builds the tests' tiny GGUF (random weights; no download), runs an hour of worlds/tiny.toml on it
through the real backend, and reports from the call log: calls, prompt tokens, prompt tokens served
from the per-agent KV cache, and their share. Target (issue 4): at least half.

    python benchmarks/cache.py [--hours N] [--model PATH.gguf]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from smalltown.llm.llama import LlamaBackend  # noqa: E402
from smalltown.scripted import ScriptedBackend  # noqa: E402
from smalltown.sim.open import create  # noqa: E402
from smalltown.world.load import load_world  # noqa: E402
from tinymodel import build_tiny_gguf  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--hours", type=float, default=1.0)
    p.add_argument("--model", help="a GGUF to use instead of the tiny test model")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--ctx", type=int, default=8192, help="the tiny model's tokens are bytes: its prompts run long")
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as d:
        model = Path(args.model) if args.model else build_tiny_gguf(Path(d) / "tiny.gguf")
        world = load_world(ROOT / "worlds" / "tiny.toml")
        sim = create(world, Path(d) / "cache.sqlite", LlamaBackend(model, n_ctx=args.ctx, n_threads=args.threads),
                     fallback=ScriptedBackend(world.seed))
        t0 = time.perf_counter()
        sim.run_until(sim.now + timedelta(hours=args.hours))
        wall = time.perf_counter() - t0
        calls, prompt, cached, completion, fallbacks = sim.save.conn.execute(
            "select count(*), sum(prompt_tokens), sum(cached_tokens), sum(completion_tokens), "
            "sum(fallback != '') from llm_calls").fetchone()
        sim.close()
    print(f"model           {model.name}")
    print(f"run             {args.hours:g} game hour(s) of {world.name}, {len(world.agents)} agents, {wall:.1f} s")
    print(f"calls           {calls} ({fallbacks} fell back to scripted)")
    print(f"prompt tokens   {prompt:,}, of which served from cache {cached:,}: {cached / prompt:.0%}")
    print(f"completion      {completion:,} tokens")
    print(f"target          at least half from cache: {'met' if cached / prompt >= 0.5 else 'NOT met'}")


if __name__ == "__main__":
    main()
