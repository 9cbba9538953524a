"""`smalltown eval matrix`: a world run under conditions × seeds, each run a separate
`smalltown run --headless` process with its own save (OUT/runs/COND-sSEED.sqlite), at most --jobs
at once, then measured by the registry's measures (eval/measures.py) into one report.

A run whose save already reaches the stop time is reused (unless --overwrite); a save that stops
short (a run stopped or killed) is continued from its last whole tick. A run that fails is
reported with the end of its log (OUT/runs/COND-sSEED.log) and the others go on. Ctrl-C stops
every run at its last whole tick (the saves stay whole, the next call continues them).
`--backend llama --model FILE.gguf` starts one llama-cpp-python server all runs share."""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Iterator

from smalltown.cli.common import backend_choice, say_ignored
from smalltown.cli.options import backend_args
from smalltown.cli.llama_server import llama_server
from smalltown.eval import EvalError
from smalltown.shown import shown, shown_text

LOG_TAIL = 12  # lines of a failed run's log in the report
PROGRESS_SECONDS = 5.0  # how often the running runs' game times are printed


@dataclass
class Run:
    condition: str
    seed: int
    path: Path
    argv: list[str] = field(default_factory=list)
    how: str = "new"  # new | continued | reused
    proc: subprocess.Popen | None = None
    started: float = 0.0
    error: str = ""

    @property
    def name(self) -> str:
        return f"{self.condition}-s{self.seed}"

    @property
    def log(self) -> Path:
        return self.path.with_suffix(".log")


def matrix(args: argparse.Namespace, cli: ModuleType) -> int:
    from smalltown.eval.conditions import WORLD_SETTINGS, parse_condition
    from smalltown.eval.matrix import caveat, gather, matrix_doc
    from smalltown.eval.measures import measure_of
    from smalltown.sim.open import UntilError, stop_time
    from smalltown.world.load import load_world

    if args.seed is not None:
        raise EvalError("--seed: each run is seeded by its --seeds value (its world seed, which seeds sampling too)")
    conditions = dict(parse_condition(c) for c in args.condition)
    if len(conditions) < len(args.condition):
        raise EvalError("two --condition options have one name")
    measures = {m: measure_of(m) for m in dict.fromkeys(args.measure or ["run"])}
    seeds = list(dict.fromkeys(args.seeds))
    world = load_world(args.world)
    try:
        until = stop_time(args.until, world.start, world.start)
    except UntilError as e:
        raise EvalError(f"--until: {e}") from None
    out = Path(args.out)
    (out / "runs").mkdir(parents=True, exist_ok=True)
    choice = backend_choice(args)
    opts, backend = choice.opts, choice.name
    if backend != "llama":  # (with llama, the runs are the shared server's clients: openai)
        say_ignored(choice)
    worlds = condition_worlds(Path(args.world), conditions, out)
    with serving(backend, args, opts) as backend_argv:
        runs = [plan(Run(c, s, out / "runs" / f"{c}-s{s}.sqlite"), args,
                     {k: v for k, v in sets.items() if k not in WORLD_SETTINGS}, until, backend_argv, worlds[c])
                for c, sets in conditions.items() for s in seeds]
        stopped = run_all(runs, args.jobs)
        results: dict[str, dict[int, dict]] = {c: {} for c in conditions}
        rater = Raters(cli, backend_argv)
        for r in runs:
            results[r.condition][r.seed] = measure_run(r, measures, rater) if not r.error else \
                {"save": str(r.path), "error": r.error}
    data = {"world": world.name, "until": f"{until:%Y-%m-%d %H:%M:%S}", "backend": backend, "seeds": seeds,
            "conditions": conditions, "measures": {m: x.about for m, x in measures.items()}, "runs": results,
            "gathered": gather(results), "note": caveat(backend)}
    cli._emit(data, matrix_doc(data), args, show_matrix)
    if stopped:
        print("stopped: the runs stopped at their last whole tick; run the same command to continue them",
              file=sys.stderr)
        return 130
    failed = any("error" in x or "measure_errors" in x for by_seed in results.values() for x in by_seed.values())
    return 1 if failed else 0


def condition_worlds(world: Path, conditions: dict[str, dict[str, str]], out: Path) -> dict[str, Path]:
    """The world each condition runs: the file given, or for `priests=false` its variant without
    priests (eval/culture_worlds.py), written once into OUT/worlds."""
    from smalltown.eval.culture_worlds import world_without_priests

    variant: list[Path] = []
    worlds = {}
    for c, sets in conditions.items():
        if sets.get("priests", "true").lower() == "false":
            variant = variant or [world_without_priests(world, out / "worlds")]
            worlds[c] = variant[0]
        else:
            worlds[c] = world
    return worlds


def plan(r: Run, args: argparse.Namespace, sets: dict[str, str], until, backend_argv: list[str],
         world: Path | None = None) -> Run:
    """The command of one run: a new save of the world, or the save there continued; or none (a
    save that reaches `until` is reused)."""
    from smalltown.sim.open import peek_seed
    from smalltown.state.saved import saved_at

    stop = f"{until:%Y-%m-%d %H:%M:%S}"
    options = [*(a for kv in [*(args.set or []), *(f"{k}={v}" for k, v in sets.items())] for a in ("--set", kv)),
               "--world-seed", str(r.seed), "--headless", "--until", stop, *backend_argv]
    if r.path.exists() and not args.overwrite:
        try:
            _, now, _ = saved_at(r.path)
            seed = peek_seed(r.path)
        except Exception as e:  # noqa: BLE001 - a file that is not a save we can read: said, not replaced
            r.error = f"{r.path} is there but cannot be continued ({shown(e)}); pass --overwrite"
            return r
        if seed != r.seed:
            r.error = f"{r.path} runs under seed {seed}, not {r.seed}; pass --overwrite"
        elif now >= until:
            r.how = "reused"
        else:
            r.how, r.argv = "continued", [sys.executable, "-m", "smalltown", "run", str(r.path), *options]
        return r
    r.argv = [sys.executable, "-m", "smalltown", "run", str(world or args.world), "--out", str(r.path), "--overwrite",
              *options]
    return r


def run_all(runs: list[Run], jobs: int) -> bool:
    """Run the runs' commands, `jobs` at once, saying as each starts and ends. Returns whether a
    signal stopped them (each child was sent SIGINT: it stops at its last whole tick)."""
    from smalltown.state.saved import saved_at

    todo = [r for r in runs if r.argv and not r.error]
    for r in runs:
        if r.how == "reused" and not r.error:
            say(f"{r.name}: reused ({r.path} reaches the stop time)")
    signals: list[int] = []
    old = {s: signal.signal(s, lambda n, _f: signals.append(n)) for s in (signal.SIGINT, signal.SIGTERM)}
    running: list[Run] = []
    told, last = 0, time.monotonic()
    try:
        while todo or running:
            if signals and len(signals) > told:  # (each further signal is passed on: a second leaves at once)
                told = len(signals)
                todo.clear()
                for r in running:
                    r.proc.send_signal(signal.SIGINT)
                say(f"stopping {len(running)} run(s) at their last whole tick…")
            while todo and len(running) < jobs:
                r = todo.pop(0)
                with open(r.log, "wb") as log:  # (the child holds its own copy of the file)
                    r.proc = subprocess.Popen(r.argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                              start_new_session=True)  # Ctrl-C reaches them through us, once
                r.started = time.monotonic()
                running.append(r)
                say(f"{r.name}: started ({r.how})")
            for r in [r for r in running if r.proc.poll() is not None]:
                running.remove(r)
                finished(r, bool(signals))
            if running and time.monotonic() - last >= PROGRESS_SECONDS:
                last = time.monotonic()
                say("running: " + ", ".join(f"{r.name} {_at(r, saved_at)}" for r in running))
            time.sleep(0.1)
    finally:
        for r in running:  # (an error here: no run is left behind)
            if r.proc.poll() is None:
                r.proc.send_signal(signal.SIGINT)
                r.proc.wait()
        for s, h in old.items():
            signal.signal(s, h)
    return bool(signals)


def _at(r: Run, saved_at) -> str:
    try:
        return f"at {saved_at(r.path)[1]:%m-%d %H:%M}"
    except Exception:  # noqa: BLE001 - not yet written (a new save appears once whole)
        return "starting"


def finished(r: Run, stopping: bool) -> None:
    code = r.proc.returncode
    if code == 0:
        say(f"{r.name}: done in {time.monotonic() - r.started:.1f} s")
        return
    tail = r.log.read_text(errors="replace").splitlines()[-LOG_TAIL:] if r.log.exists() else []
    r.error = (f"stopped (exit {code}); its save is whole at its last tick" if stopping else
               f"exit {code}; the end of {r.log}:\n" + "\n".join(tail))
    say(f"{r.name}: {'stopped' if stopping else 'FAILED'} (exit {code})" + ("" if stopping else f": {tail[-1] if tail else ''}"))


def say(line: str) -> None:
    print(shown(f"matrix: {line}"), file=sys.stderr, flush=True)


def measure_run(r: Run, measures: dict, rater: Raters) -> dict:
    out: dict = {"save": str(r.path), "how": r.how, "measures": {}}
    for name, m in measures.items():
        try:
            out["measures"][name] = m.fn(r.path, rater)
        except Exception as e:  # noqa: BLE001 - one measure of one run failing is reported, not fatal
            out.setdefault("measure_errors", {})[name] = shown(e)
            say(f"{r.name}: measure {name} failed: {e}")
    return out


class Raters:
    """The measures' context: ratings asked on a copy of a run's save, of the backend the runs
    used (the shared server when there is one)."""

    def __init__(self, cli: ModuleType, backend_argv: list[str]) -> None:
        self.cli, self.args = cli, backend_args(backend_argv)

    @contextmanager
    def rater(self, save: Path) -> Iterator:
        from smalltown.cli.eval_social import SimRater

        with self.cli.working_copy(str(save), None) as copy:
            sim = self.cli.open_copy(copy, self.args)
            try:
                yield SimRater(sim)
            finally:
                sim.close()


@contextmanager
def serving(backend: str, args: argparse.Namespace, opts) -> Iterator[list[str]]:
    """The backend flags every run is given: with llama, one server for all (stopped at the end)."""
    passed = [*_flag("--embed-model", opts.embed_model), *_flag("--temperature", args.temperature),
              *_flag("--timeout", args.timeout), *_flag("--concurrency", args.concurrency)]
    if backend != "llama":
        urls = [a for u in (args.base_url or []) for a in ("--base-url", u)]
        yield ["--backend", backend, *urls, *_flag("--model", args.model), *_flag("--ctx", args.ctx),
               *_flag("--threads", args.threads), *_flag("--gpu-layers", args.gpu_layers),
               *_flag("--api-key-env", args.api_key_env), *_flag("--from", args.replay),
               *_flag("--fallthrough", args.fallthrough), *passed]
        return
    with llama_server(opts, say) as (url, alias):
        yield ["--backend", "openai", "--base-url", url, "--model", alias, "--ctx", str(opts.ctx), *passed]


def _flag(name: str, value) -> list[str]:
    return [] if value is None else [name, str(value)]


def show_matrix(c, r: dict) -> None:
    from rich.table import Table
    from rich.text import Text

    from smalltown.eval.matrix import cell

    conds = list(r["conditions"])
    for measure in r["measures"]:
        t = Table(title=shown_text(f"{r['world']}: {measure}, mean ± sd over seeds {r['seeds']}"), show_lines=True)
        t.add_column("figure", style="bold")
        for k in conds:
            t.add_column(shown_text(k))
        figs = list(dict.fromkeys(f for k in conds for f in r["gathered"][k]["figures"].get(measure, {})))
        for f in figs:
            t.add_row(shown_text(f), *(shown_text(cell(r["gathered"][k]["figures"][measure][f]))
                                       if f in r["gathered"][k]["figures"].get(measure, {}) else "n/a" for k in conds))
        c.print(t)
    for k, by_seed in r["runs"].items():
        for seed, run in by_seed.items():
            if "error" in run:
                c.print(Text.assemble(("failed:", "red"), " ", shown(f"{k} seed {seed}: {run['error']}", lines=True)))
    if r.get("note"):
        c.print(Text.assemble(("note:", "yellow"), " ", r["note"]))
