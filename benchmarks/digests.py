"""The save digest of every bundled world under every architecture preset, run on the stand-in.

A refactor that should change no behaviour is checked by running this on the commit before and
the commit after and comparing the two listings line for line (`diff`): the digest is the save's
fingerprint of its state (store/digest.py), so one changed memory, plan or event changes it.

    python benchmarks/digests.py --hours 6 > before.txt    # on the old commit
    python benchmarks/digests.py --hours 6 > after.txt     # on the new one
    diff before.txt after.txt && echo same

Each run is a whole `smalltown run --headless` in its own process (the code of the checkout this
file is in), so nothing is shared between runs. Variants beyond the presets (the thinking grid,
thinking ahead, roles) are added with --variant WORLD:NAME=VALUE.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PRESETS = ("generative_agents", "piano", "baseline")
DIGEST = "from smalltown.store.save import open_reader; r = open_reader({!r}); print(r.digest()); r.close()"
# --calls: also a hash of the call log as read back (each call's tick, task, key, prompt and parsed answer,
# decoded whatever form the save stores them in): a change of how the log is stored must leave it alike
CALLS = ("import hashlib, json; from smalltown.store.save import open_reader; r = open_reader({!r}); "
         "print(hashlib.sha256(json.dumps(r.recorded_calls()).encode()).hexdigest()[:16]); r.close()")


def digest(world: Path, sets: list[str], hours: int, folder: Path, calls: bool = False) -> tuple[str, float]:
    save = folder / f"{world.stem}-{'-'.join(s.replace('=', '_') for s in sets)}.sqlite"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    args = [sys.executable, "-m", "smalltown", "run", str(world), "--headless", "--backend", "scripted",
            "--until", f"+{hours}h", "--save", str(save)]
    for s in sets:
        args += ["--set", s]
    start = time.perf_counter()
    subprocess.run(args, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seconds = time.perf_counter() - start
    outs = [subprocess.run([sys.executable, "-c", code.format(str(save))], env=env, check=True,
                           capture_output=True, text=True).stdout.strip() for code in (DIGEST, CALLS)[:1 + calls]]
    return " ".join(outs), seconds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hours", type=int, default=6, help="game hours each run lasts (default 6)")
    ap.add_argument("--variant", action="append", default=[], metavar="WORLD:NAME=VALUE",
                    help="also run WORLD (a bundled world's name) under piano with this setting")
    ap.add_argument("--calls", action="store_true", help="also print a hash of each run's call log as read back")
    args = ap.parse_args()
    worlds = sorted((ROOT / "worlds").glob("*.toml"))
    runs = [(w, [f"architecture={p}"]) for w in worlds for p in PRESETS]
    for v in args.variant:
        name, _, setting = v.partition(":")
        runs.append((ROOT / "worlds" / f"{name}.toml", ["architecture=piano", setting]))
    total = 0.0
    with tempfile.TemporaryDirectory(prefix="smalltown-digests-") as tmp:
        for world, sets in runs:
            d, seconds = digest(world, sets, args.hours, Path(tmp), args.calls)
            total += seconds
            print(f"{world.stem} {' '.join(sets)} {d}")
    print(f"# {len(runs)} runs of {args.hours} game hours, {total:.1f} s in all", file=sys.stderr)


if __name__ == "__main__":
    main()
