"""What keeping the call log's prompts and answers as text costs in save size.

Runs the bundled town on the stand-in (`smalltown run --headless --backend scripted`, the code of
this checkout) for each length asked, then measures the save in three forms, each VACUUMed so
that only the contents count:

- text: as smalltown writes it from schema 10 (prompts and answers as TEXT, any SQLite tool reads them);
- packed: as schemas 6 to 9 kept them (each text zlib-compressed when that is shorter: a BLOB);
- parts (an estimate, not a form smalltown writes): the prompts cut at blank lines, each distinct
  paragraph stored once, each prompt a list of 8-byte references: what a deduplicated table of
  shared parts could at best save, read back only through a view.

    python benchmarks/save_text.py                       # smallville: 1 game hour, 1 day, 2 days
    python benchmarks/save_text.py --world tiny --runs 6h
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from smalltown.store.packing import pack_text, unpack_text  # noqa: E402


def vacuumed(path: Path) -> int:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("VACUUM")
    conn.close()
    return path.stat().st_size


def log_bytes(path: Path) -> int:
    """Bytes of pages the call log's table holds (SQLite's dbstat)."""
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT sum(pgsize) FROM dbstat WHERE name = 'llm_calls'").fetchone()[0] or 0
    finally:
        conn.close()


def packed_copy(src: Path, dst: Path) -> None:
    shutil.copy(src, dst)
    conn = sqlite3.connect(dst)
    with conn:
        conn.executemany("UPDATE llm_calls SET prompt=?, raw_answer=?, parsed_answer=? WHERE id=?", [
            (pack_text(p), pack_text(r), pack_text(a), i)
            for i, p, r, a in conn.execute("SELECT id, prompt, raw_answer, parsed_answer FROM llm_calls")])
    conn.close()


def parts_estimate(path: Path) -> tuple[int, int]:
    """(bytes of the prompts as text, bytes as distinct paragraphs plus 8 bytes a reference)."""
    conn = sqlite3.connect(path)
    try:
        prompts = [unpack_text(p) or "" for (p,) in conn.execute("SELECT prompt FROM llm_calls")]
    finally:
        conn.close()
    seen: set[str] = set()
    stored = 0
    for prompt in prompts:
        for part in prompt.split("\n\n"):
            stored += 8
            if part not in seen:
                seen.add(part)
                stored += len(part.encode()) + 2
    return sum(len(p.encode()) for p in prompts), stored


def measure(world: Path, length: str, folder: Path) -> dict:
    save = folder / f"{world.stem}-{length}.sqlite"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    subprocess.run([sys.executable, "-m", "smalltown", "run", str(world), "--headless", "--backend", "scripted",
                    "--until", f"+{length}", "--save", str(save)], env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    packed = folder / f"{save.stem}-packed.sqlite"
    packed_copy(save, packed)
    conn = sqlite3.connect(save)
    calls = conn.execute("SELECT count(*) FROM llm_calls").fetchone()[0]
    conn.close()
    text_size, packed_size = vacuumed(save), vacuumed(packed)
    prompts, parts = parts_estimate(save)
    return {"run": f"{world.stem} {length}", "calls": calls, "text": text_size, "packed": packed_size,
            "text_log": log_bytes(save), "packed_log": log_bytes(packed), "prompts": prompts, "parts": parts}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--world", default="smallville", help="a bundled world's name (default smallville)")
    ap.add_argument("--runs", nargs="+", default=["1h", "1d", "2d"], help="game lengths (default 1h 1d 2d)")
    args = ap.parse_args()
    world = ROOT / "worlds" / f"{args.world}.toml"
    mb = lambda n: f"{n / 1e6:.2f} MB"  # noqa: E731
    print("| run | calls | save, text (schema 10) | save, packed (schemas 6-9) | text / packed | "
          "call log, text | call log, packed | prompts as text | prompts as distinct paragraphs (estimate) |")
    print("|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="smalltown-save-text-") as tmp:
        for length in args.runs:
            m = measure(world, length, Path(tmp))
            print(f"| {m['run']} | {m['calls']:,} | {mb(m['text'])} | {mb(m['packed'])} | "
                  f"{m['text'] / m['packed']:.2f} | {mb(m['text_log'])} | {mb(m['packed_log'])} | "
                  f"{mb(m['prompts'])} | {mb(m['parts'])} |", flush=True)


if __name__ == "__main__":
    main()
