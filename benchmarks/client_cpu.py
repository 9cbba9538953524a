"""Benchmark: the HTTP client's own CPU per call (the GIL time each request costs the engine).

Sends N sequential questions (one rating task) with the openai backend to a prompt server with no
latency, running in a subprocess (benchmarks/promptserver.py `ServerProcess`), so the process measured
holds only the client: CPU seconds of this process (time.process_time) per call, and the wall.

    python benchmarks/client_cpu.py [--calls 500] [--concurrency 1]
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from benchmarks.promptserver import ServerProcess  # noqa: E402
from smalltown.llm.openai_compat import OpenAIBackend  # noqa: E402
from smalltown.llm.render import render  # noqa: E402
from smalltown.llm.tasks import ObjectState, PersonaCard  # noqa: E402
from smalltown.llm.validate import UnusableAnswer  # noqa: E402

PERSONA = PersonaCard(name="A", age=30, traits="calm", description="A keeps a shop.", home="a house")
TASK = ObjectState(persona=PERSONA, now=datetime(2023, 2, 13, 9, 30), activity="make coffee", object="coffee machine")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--calls", type=int, default=500)
    p.add_argument("--concurrency", type=int, default=1)
    args = p.parse_args()
    prompt = render(TASK)
    with ServerProcess(latency=0.0) as server:
        url = server.url
        backend = OpenAIBackend(url, timeout=30, max_concurrency=args.concurrency)
        backend.connect()

        def one(i: int) -> None:
            try:
                backend.answer(TASK, prompt, seed=i, agent=f"agent {i % 25}")
            except UnusableAnswer:
                pass  # (a hash answer may break the task's rules: the exchange is what is measured)

        for i in range(20):  # warm up
            one(i)
        cpu, wall = time.process_time(), time.perf_counter()
        with ThreadPoolExecutor(args.concurrency) as pool:
            list(pool.map(one, range(args.calls)))
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    print(f"{args.calls} calls, concurrency {args.concurrency}: client CPU {cpu / args.calls * 1000:.2f} ms a call, "
          f"wall {wall / args.calls * 1000:.2f} ms a call")


if __name__ == "__main__":
    main()
