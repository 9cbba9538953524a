"""Benchmark: memory retrieval (SPEC §2) over one agent's stream, and the default embedder.

    python benchmarks/retrieval.py [--sizes 1000 10000 100000] [--queries 50] [--k 30]

Prints the median and p95 time of a top-k retrieval (query embedding included) from streams of
realistic random records, and the HashEmbedder's time per text.
Target (issue: memory stream): top-30 from 100k records in under 20 ms on a 2-core machine.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from smalltown.llm.embed import HashEmbedder  # noqa: E402
from smalltown.mind.memory import Memory, MemoryStream  # noqa: E402

NAMES = ["Isabella Rodriguez", "Klaus Mueller", "Maria Lopez", "Sam Moore", "Tom Moreno",
         "Jennifer Moore", "Ayesha Khan", "Wolfgang Schulz", "Carmen Ortiz", "Eddy Lin",
         "John Lin", "Mei Lin", "Yuriko Yamamoto", "Abigail Chen", "Francisco Lopez",
         "Hailey Johnson", "Latoya Williams", "Rajiv Patel", "Arthur Burton", "Ryan Park"]
PLACES = ["Hobbs Cafe", "the Oak Hill College library", "Harvey Oak Supply Store", "the park",
          "The Rose and Crown Pub", "the Willows Market and Pharmacy", "Johnson Park",
          "the Lin family's house", "Moreno family's kitchen", "the town hall", "the dorm common room"]
ACTIVITIES = ["brewing coffee", "reading a book about gentrification", "writing a research paper",
              "painting a landscape", "sleeping", "eating breakfast", "taking a walk",
              "preparing for the election campaign", "decorating for the Valentine's Day party",
              "studying chemistry", "composing a song on the piano", "serving customers",
              "cleaning the counter", "talking on the phone", "planning a poetry reading",
              "practising guitar", "shopping for groceries", "cooking dinner", "watering the plants",
              "doing homework"]
OBJECTS = ["refrigerator", "stove", "bed", "coffee machine", "piano", "desk", "bookshelf",
           "shower", "toilet", "cafe counter", "garden", "easel", "kitchen sink", "guitar"]
STATES = ["idle", "in use", "empty", "being cleaned", "brewing coffee", "broken", "full"]
TOPICS = ["the upcoming mayoral election", "Isabella's Valentine's Day party", "gentrification",
          "the new art exhibit", "a chemistry exam", "local politics", "their favourite books",
          "the price of groceries", "a research project", "music and composition"]


def sentence(rng: random.Random) -> tuple[str, str, int]:
    """(kind, description, importance), in the shapes the simulation writes."""
    a, b = rng.sample(NAMES, 2)
    r = rng.random()
    if r < 0.35:
        return "observation", f"{a} is {rng.choice(ACTIVITIES)} at {rng.choice(PLACES)}", rng.randint(1, 4)
    if r < 0.6:
        return "observation", f"{rng.choice(OBJECTS)} is {rng.choice(STATES)}", 1
    if r < 0.75:
        return "chat", f"conversing with {b} about {rng.choice(TOPICS)}", rng.randint(2, 7)
    if r < 0.9:
        return "plan", f"plan to go to {rng.choice(PLACES)} for {rng.choice(ACTIVITIES)} tomorrow", rng.randint(2, 6)
    return "reflection", f"{a} cares deeply about {rng.choice(TOPICS)} and {b} knows it", rng.randint(4, 9)


def query(rng: random.Random) -> str:
    a, b = rng.sample(NAMES, 2)
    return rng.choice([f"What is {a}'s relationship with {b}?",
                       f"{b} is {rng.choice(ACTIVITIES)}",
                       f"{a}'s feeling about {rng.choice(TOPICS)}",
                       f"{rng.choice(OBJECTS)} is {rng.choice(STATES)}"])


def build(n: int, embedder: HashEmbedder, rng: random.Random, start: datetime) -> MemoryStream:
    """A stream of n records over ~30 game days, loaded in bulk as a save would be."""
    rows = [sentence(rng) for _ in range(n)]
    vecs = embedder.embed([d for _, d, _ in rows])
    span = timedelta(days=30) / n
    mems = []
    for i, (kind, desc, imp) in enumerate(rows):
        created = start + span * i
        accessed = created + timedelta(hours=rng.random() * 48) if rng.random() < 0.2 else created
        mems.append(Memory(i + 1, "Klaus Mueller", kind, desc, created, accessed, imp))
    counter = iter(range(n + 1, 10**12))
    stream = MemoryStream("Klaus Mueller", embedder, lambda: next(counter))
    stream.load(mems, vecs)
    return stream


def ms(xs: list[float]) -> tuple[float, float]:
    xs = sorted(xs)
    return statistics.median(xs) * 1e3, xs[min(len(xs) - 1, int(round(0.95 * (len(xs) - 1))))] * 1e3


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    p.add_argument("--queries", type=int, default=50)
    p.add_argument("--k", type=int, default=30)
    args = p.parse_args()
    rng = random.Random(7)
    start = datetime(2023, 2, 1, 6)

    print(f"retrieval: top-{args.k}, {args.queries} queries each (query embedding included)")
    for n in args.sizes:
        embedder = HashEmbedder()
        t0 = time.perf_counter()
        stream = build(n, embedder, rng, start)
        built = time.perf_counter() - t0
        now = start + timedelta(days=31)
        stream.retrieve(query(rng), now, args.k)  # warm-up
        times, filtered = [], []
        for i in range(args.queries):
            q = query(rng)
            now += timedelta(minutes=10)
            t = time.perf_counter()
            stream.retrieve(q, now, args.k, purpose="bench")
            times.append(time.perf_counter() - t)
            t = time.perf_counter()
            stream.retrieve(q, now, args.k, kinds=("observation", "chat"), exclude=range(1, 50))
            filtered.append(time.perf_counter() - t)
        med, p95 = ms(times)
        fmed, fp95 = ms(filtered)
        print(f"  {n:>7} records: median {med:6.2f} ms  p95 {p95:6.2f} ms   "
              f"(kinds+exclude filter: median {fmed:6.2f} ms  p95 {fp95:6.2f} ms; "
              f"built in {built:.1f} s)")

    # The embedder: cold (every text new), batched and one at a time, and a cache hit.
    texts = [f"{sentence(rng)[1]} (note {i})" for i in range(5_000)]
    words = statistics.mean(len(t.split()) for t in texts)
    e = HashEmbedder()
    t = time.perf_counter()
    e.embed(texts[:2_500])
    batched = (time.perf_counter() - t) / 2_500
    t = time.perf_counter()
    for text in texts[2_500:]:
        e.embed([text])
    single = (time.perf_counter() - t) / 2_500
    t = time.perf_counter()
    for text in texts[:2_500]:
        e.embed([text])
    cached = (time.perf_counter() - t) / 2_500
    cold = HashEmbedder()  # nothing memoised at all: the very first texts of a run
    t = time.perf_counter()
    for text in texts[:200]:
        cold.embed([text])
    first = (time.perf_counter() - t) / 200
    print(f"embedder {e.name} ({words:.1f} words per text): new text {single * 1e6:.0f} us one at a "
          f"time, {batched * 1e6:.0f} us batched, {first * 1e6:.0f} us with an empty word memo; "
          f"cache hit {cached * 1e6:.1f} us")
    assert np.allclose(np.linalg.norm(e.embed(texts[:10]), axis=1), 1.0, atol=1e-5)


if __name__ == "__main__":
    main()
