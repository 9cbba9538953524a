"""Benchmark: a large save (200,000 memories, ~100 MB) and what opening it costs.

    python benchmarks/big_save.py make [--memories 200000] [--out /tmp/big.sqlite] [--world worlds/smallville.toml]
    python benchmarks/big_save.py measure SAVE [--code DIR ...] [--repeat 1]

`make`: a real save (a scripted run of a bundled world, one game hour), grown to `--memories`
memories with plausible rows: each agent's observations of the town's objects and people, chats,
plans and reflections citing earlier memories, importance 1..10, created over the nine days before
the world starts and last accessed since, each embedded by the save's own embedder and packed as
the save packs vectors. Ids stay interleaved by agent, as a run allocates them. Rows are written
through sqlite3 here only (a benchmark's fixture; smalltown keeps its SQL in store/).

`measure`: peak RSS (the child's own, from wait4) and wall time of `whisper SAVE AGENT "..."`,
`run SAVE --headless --until +10m` (scripted) and `inspect SAVE AGENT --retrieve "..."`, each on
a fresh copy of SAVE, with the code under each `--code DIR` (PYTHONPATH=DIR: main's checkout for
"before", a worktree for "after"), interleaved so both see the same machine.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from smalltown.llm.embed import HashEmbedder  # noqa: E402
from smalltown.store.packing import pack_vector  # noqa: E402

FMT = "%Y-%m-%d %H:%M:%S"
ACTIVITIES = ["brewing coffee", "reading a book about the town's history", "writing a research paper",
              "painting a landscape", "eating breakfast", "taking a walk", "preparing a campaign speech",
              "decorating for the party", "studying chemistry", "composing a song on the piano",
              "serving customers", "cleaning the counter", "talking on the phone", "planning a poetry reading",
              "practising guitar", "shopping for groceries", "cooking dinner", "watering the plants",
              "doing homework", "fixing a leaking tap", "sorting the mail", "sketching the pond"]
STATES = ["idle", "in use", "empty", "being cleaned", "broken", "full", "being repaired", "cold", "warm"]
TOPICS = ["the upcoming election", "the party on Friday", "rising rents", "the new art exhibit",
          "a chemistry exam", "local politics", "their favourite books", "the price of groceries",
          "a research project", "music and composition", "the weather this week", "a lost cat",
          "the library's opening hours", "a recipe for soup", "the town's history"]
FEELINGS = ["cares deeply about", "is worried about", "is excited about", "keeps talking about",
            "does not care much for", "has changed their mind about", "wants to learn more about"]


def _vocabulary(conn: sqlite3.Connection) -> tuple[list[str], list[str], list[str]]:
    agents = [n for (n,) in conn.execute("SELECT name FROM agents ORDER BY rowid")]
    addresses = [a for (a,) in conn.execute("SELECT address FROM objects ORDER BY address")]
    places = sorted({a.split(":")[0] for a in addresses} | {a.split(":")[1] for a in addresses})
    objects = sorted({a.split(":")[-1] for a in addresses})
    return agents, places, objects


def _row(rng: random.Random, me: str, agents: list[str], places: list[str], objects: list[str],
         when: datetime) -> tuple[str, str, int]:
    """(kind, description, importance) in the shapes a run writes; a day's clock in some of them,
    so most texts are distinct (the worst case for a stream: one embedding per text)."""
    other = rng.choice([a for a in agents if a != me] or agents)
    r = rng.random()
    if r < 0.30:
        return "observation", f"{rng.choice(objects)} is {rng.choice(STATES)}", rng.randint(1, 2)
    if r < 0.62:
        return ("observation", f"{other} is {rng.choice(ACTIVITIES)} at {rng.choice(places)} "
                f"({when:%A} {when:%H:%M})", rng.randint(1, 5))
    if r < 0.80:
        return ("chat", f"{me} talked with {other} about {rng.choice(TOPICS)} at {rng.choice(places)} "
                f"on {when:%A}", rng.randint(2, 8))
    if r < 0.92:
        return ("plan", f"{me} plans to go to {rng.choice(places)} for {rng.choice(ACTIVITIES)} at "
                f"{rng.randint(6, 21)}:{rng.choice(('00', '15', '30', '45'))} on {when + timedelta(days=1):%A}",
                rng.randint(2, 6))
    return "reflection", f"{other} {rng.choice(FEELINGS)} {rng.choice(TOPICS)}", rng.randint(4, 9)


def make(out: Path, memories: int, world: str, seed: int = 7) -> dict:
    """A real save of `world` grown to `memories` memories; returns what was made."""
    out.parent.mkdir(parents=True, exist_ok=True)
    base = out.with_suffix(".base.sqlite")
    if not base.exists():  # the real run (a minute of a bundled world's scripted hour), kept to grow again
        subprocess.run([sys.executable, "-m", "smalltown", "run", world, "--headless", "--until", "+1h",
                        "--backend", "scripted", "--save", str(base), "--overwrite"], check=True, cwd=ROOT,
                       env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.DEVNULL)
    tmp = out.with_suffix(".partial")
    shutil.copyfile(base, tmp)
    conn = sqlite3.connect(tmp)
    agents, places, objects = _vocabulary(conn)
    start_text = json.loads(conn.execute("SELECT value FROM meta WHERE key='game_time'").fetchone()[0])
    now = datetime.strptime(start_text, FMT)
    have, top = conn.execute("SELECT count(*), max(id) FROM memories").fetchone()
    n = len(agents)
    rounds = -(-max(0, memories - have) // n)  # (rounded up: at least `memories`)
    first = (top // n + 1) * n  # ids stay interleaved by agent: (id - 1) % n is the agent's place
    begin = now - timedelta(days=9)
    span = (now - timedelta(hours=2) - begin) / max(1, rounds)
    rng = random.Random(seed)
    embedder = HashEmbedder()
    written = 0
    recent: dict[str, list[int]] = {a: [] for a in agents}
    batch: list[tuple] = []
    for r in range(rounds):
        when = begin + span * r
        for i, me in enumerate(agents):
            kind, text, importance = _row(rng, me, agents, places, objects, when)
            mid = first + r * n + i + 1
            evidence = json.dumps(rng.sample(recent[me], min(3, len(recent[me])))) if kind == "reflection" else "[]"
            accessed = when + timedelta(hours=rng.random() * 48) if rng.random() < 0.3 else when
            batch.append((mid, me, kind, text, when.strftime(FMT), min(accessed, now).strftime(FMT), importance,
                          evidence))
            recent[me] = (recent[me] + [mid])[-20:]
        if len(batch) >= 5000 or r == rounds - 1:
            vectors = embedder.embed([b[3] for b in batch])
            embedder.cache.clear()  # (the generator's own memory stays small)
            conn.executemany("INSERT INTO memories (id, agent, kind, description, created, last_accessed, "
                             "importance, evidence, embedding) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                             [(*b, pack_vector(v)) for b, v in zip(batch, vectors)])
            conn.commit()
            written += len(batch)
            batch = []
    total, distinct = conn.execute("SELECT count(*), count(DISTINCT description) FROM memories").fetchone()
    conn.execute("VACUUM")
    conn.close()
    os.replace(tmp, out)
    return {"save": str(out), "memories": total, "distinct texts": distinct, "agents": n,
            "MB": round(out.stat().st_size / 1e6, 1)}


def _child(cmd: list[str], code: Path) -> tuple[float, float, int, str]:
    """(peak RSS MiB, wall s, exit status, last line of output) of one smalltown command."""
    env = {**os.environ, "PYTHONPATH": str(code)}
    t = time.perf_counter()
    p = subprocess.Popen([sys.executable, "-m", "smalltown", *cmd], cwd=code, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = p.stdout.read().decode(errors="replace")
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    p.returncode = os.waitstatus_to_exitcode(status)
    lines = [ln.strip() for ln in out.splitlines() if ln.strip()]
    return usage.ru_maxrss / 1024, wall, p.returncode, (lines[-1] if lines else "")[:100]


def commands(save: Path, agent: str) -> dict[str, list[str]]:
    return {
        "whisper": ["whisper", str(save), agent, "the bakery on the corner is closing for good"],
        "run +10m": ["run", str(save), "--headless", "--until", "+10m", "--backend", "scripted"],
        "inspect --retrieve": ["inspect", str(save), agent, "--retrieve", "what does the town think of the election"],
    }


def measure(save: Path, codes: list[Path], repeat: int) -> list[dict]:
    agent = sqlite3.connect(f"file:{save}?mode=ro", uri=True).execute(
        "SELECT name FROM agents ORDER BY rowid LIMIT 1").fetchone()[0]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(repeat):
            for name in commands(save, agent):
                for code in codes:  # interleaved: before and after see the same load
                    copy = Path(tmp) / save.name
                    shutil.copyfile(save, copy)
                    rss, wall, rc, last = _child(commands(copy, agent)[name], code)
                    rows.append({"command": name, "code": str(code), "rss_mib": round(rss), "wall_s": round(wall, 2),
                                 "exit": rc, "last": last})
                    print(f"{name:20} {str(code):28} {rss:7.0f} MiB {wall:6.2f} s  exit {rc}  {last[:60]}",
                          flush=True)
    return rows


def main() -> None:
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="what", required=True)
    m = sub.add_parser("make")
    m.add_argument("--memories", type=int, default=200_000)
    m.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "big.sqlite")
    m.add_argument("--world", default="worlds/smallville.toml")
    s = sub.add_parser("measure")
    s.add_argument("save", type=Path)
    s.add_argument("--code", type=Path, action="append", help="a checkout whose smalltown runs (repeatable)")
    s.add_argument("--repeat", type=int, default=1)
    args = p.parse_args()
    if args.what == "make":
        print(json.dumps(make(args.out.resolve(), args.memories, args.world)))
    else:
        measure(args.save.resolve(), [c.resolve() for c in args.code or [ROOT]], args.repeat)


if __name__ == "__main__":
    main()
