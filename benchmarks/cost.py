"""Benchmark: the cost of a game day per agent, the figure we compete on.

Runs Smallville (25 agents) for one game day with the full architecture, answers from the scripted
backend, and reports per agent-day: model calls, prompt tokens, cached prompt tokens (the prefix
shared with the same agent's previous prompt, which the llama backend keeps evaluated per agent),
uncached prompt tokens and completion tokens, by task.

    python benchmarks/cost.py [--days N] [--model PATH.gguf]

With --model the tokens are counted with that model's tokenizer; without, they are ESTIMATED
(4 characters a token) and labelled so. Targets (issue 4): under 100 calls and under 25k uncached
prompt tokens per agent-day. Anchors: the paper's architecture about 500k tokens per agent-day; the
best published local re-implementation about 59k tokens and 230 calls.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import defaultdict
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from smalltown.llm.scripted import ScriptedBackend  # noqa: E402
from smalltown.llm.llama import SYSTEM  # noqa: E402
from smalltown.sim.simulation import Simulation  # noqa: E402
from smalltown.world.load import load_world  # noqa: E402


def tokenizer(model: str | None):
    if model is None:
        return (lambda text: max(1, round(len(text) / 4))), "estimated (4 characters a token)"
    from llama_cpp import Llama

    vocab = Llama(model_path=model, vocab_only=True, verbose=False)
    return (lambda text: len(vocab.tokenize(text.encode(), add_bos=False, special=True))), \
        f"counted with {Path(model).name}'s tokenizer"


def shared_prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("world", nargs="?", default=str(ROOT / "worlds" / "smallville.toml"))
    p.add_argument("--days", type=float, default=1.0)
    p.add_argument("--model", help="a GGUF whose tokenizer counts the tokens")
    args = p.parse_args()
    count, how = tokenizer(args.model)
    world = load_world(args.world)
    with tempfile.TemporaryDirectory() as d:
        sim = Simulation.create(world, Path(d) / "cost.sqlite", ScriptedBackend(world.seed))
        sim.run_until(sim.now + timedelta(days=args.days))
        rows = sim.save.conn.execute("select agent, task, prompt, raw_answer from llm_calls order by id").fetchall()
        sim.close()
    per = len(world.agents) * args.days
    last: dict[str, str] = {}
    by_task: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])  # calls, prompt, cached, completion
    for agent, task, prompt, raw in rows:
        text = f"{SYSTEM}\n{prompt}"  # what the model reads: the rules, then the task's prompt
        tokens = count(text)
        before = last.get(agent, "")
        cached = count(text[:shared_prefix(before, text)]) if before else 0
        last[agent] = text + raw
        t = by_task[task]
        t[0] += 1
        t[1] += tokens
        t[2] += min(cached, tokens)
        t[3] += count(raw)
    total = [sum(t[i] for t in by_task.values()) for i in range(4)]
    print(f"world      {world.name}, {len(world.agents)} agents, {args.days:g} game day(s), scripted answers")
    print(f"tokens     {how}")
    print("\nper agent-day            calls   prompt   cached  uncached  completion")
    for task, t in sorted(by_task.items(), key=lambda kv: -kv[1][1]):
        print(f"  {task:22} {t[0] / per:6.1f} {t[1] / per:8.0f} {t[2] / per:8.0f} {(t[1] - t[2]) / per:9.0f} {t[3] / per:11.0f}")
    print(f"  {'total':22} {total[0] / per:6.1f} {total[1] / per:8.0f} {total[2] / per:8.0f} "
          f"{(total[1] - total[2]) / per:9.0f} {total[3] / per:11.0f}")
    print(f"\ntargets: calls < 100 ({'met' if total[0] / per < 100 else 'NOT met'}), "
          f"uncached prompt tokens < 25,000 ({'met' if (total[1] - total[2]) / per < 25000 else 'NOT met'})")


if __name__ == "__main__":
    main()
