"""`smalltown eval interview | town | ablate`: measure a town the way the paper did.

Eval never changes the save it is given: it works on a copy (kept with --copy FILE, where every
model call it made is logged like any other)."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from rich.text import Text

from smalltown.eval import EvalError
from smalltown.shown import json_shown, shown, shown_text
from smalltown.world.names import NoSuchAgent

DEFAULT_CONDITIONS = "full,no-reflection,no-planning,no-memory"


def run(args: argparse.Namespace) -> int:
    try:
        return {"interview": interview, "town": town, "ablate": ablate,
                "social": social, "matrix": matrix, "civics": civics,
                "culture": culture}[args.eval_command](args)
    except (EvalError, NoSuchAgent) as e:
        print(f"error: {shown(e, lines=True)}", file=sys.stderr)
        return 2  # what eval was given is refused (a misspelt name, a missing save, an unknown condition)


# --- shared -------------------------------------------------------------------------------------------


def copy_save(src: str | Path, dst: str | Path) -> Path:
    """The save copied for eval to work on (store.copy.copy_save): the original is never changed.
    A save whose rows make no sense is refused naming it, not eval's copy of it (the engine's
    check: the measures read saves and never import the engine)."""
    from smalltown.sim.check import require_sound
    from smalltown.store.checks import is_save
    from smalltown.store.copy import copy_save as store_copy

    src = Path(src)
    if not src.exists():
        raise EvalError(f"{src}: no such save")
    if not is_save(src):
        raise EvalError(f"{src}: not a smalltown save (not an SQLite database)")
    require_sound(src, doing="measure it")
    return store_copy(src, dst)


@contextmanager
def working_copy(save: str, keep: str | None) -> Iterator[Path]:
    if keep and Path(keep).resolve() == Path(save).resolve():
        raise EvalError("--copy must name another file than the save")
    if keep and Path(keep).exists():
        raise EvalError(f"--copy {keep}: a file is already there")
    with tempfile.TemporaryDirectory(prefix="smalltown-eval-") as tmp:
        yield copy_save(save, Path(keep) if keep else Path(tmp) / "copy.sqlite")


def open_copy(path: Path, args: argparse.Namespace):
    from smalltown.cli.common import backend_choice
    from smalltown.sim.open import peek_seed, resume

    choice = backend_choice(args)
    seed = peek_seed(path)
    return resume(path, choice.backend(seed), embedder=choice.embedder(), fallback=choice.fallback(seed))


@contextmanager
def progress(total: int, what: str) -> Iterator:
    """A bar on stderr advanced once per answer."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn(what), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(what, total=total)
        yield lambda _answer: bar.advance(task)


def measure_save(save: str, args: argparse.Namespace, keep: str | None = None) -> dict:
    """The town measures of one save, asked on a copy when --ask."""
    from smalltown.eval.interview import Interviewer
    from smalltown.eval.measure import measure_town
    from smalltown.sim.interviews import Interviews
    from smalltown.eval.town import read_town
    from smalltown.store.save import Save
    from smalltown.world.load import load_world

    news = load_world(args.facts) if getattr(args, "facts", None) else None
    with working_copy(save, keep) as copy:
        if not args.ask:
            db = Save.open(copy)
            from smalltown.sim.check import require

            require(db)  # (read_town reads the agents and memories as a run would)
            try:
                return {"save": str(save), **measure_town(read_town(db, news)), "calls": db.call_figures()}
            finally:
                db.close()
        sim = open_copy(copy, args)
        try:
            t = read_town(sim.save, news)
            calls, before = sim.save.call_figures(), sim.save.last_call_id()
            n = len(t.agents)
            with progress(len(t.world.facts) * n + n * (n - 1), "asking") as tick:
                result = measure_town(t, Interviewer(Interviews(sim), on_answer=tick))
            return {"save": str(save), "backend": sim.backend.name, **result, "calls": calls,
                    "asked_calls": sim.save.call_figures(after_id=before)}
        finally:
            sim.close()


def _emit(result: dict, doc, args: argparse.Namespace, show) -> int:
    from rich.console import Console

    err = Console(stderr=True)
    paths = doc.write(Path(args.out), result) if args.out else []
    if args.json:
        print(json_shown(json.dumps(result, ensure_ascii=False)))
    else:
        show(Console(), result)
    sys.stdout.flush()
    if paths:
        err.print(shown_text(f"report: {paths[0]}  (also {paths[1].name}, {paths[2].name})"))
    elif not args.json:
        err.print("[dim]the full report, with plots: add --out DIR[/]")
    return 0


def _clip(text: str, n: int = 240) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


# --- the three measures --------------------------------------------------------------------------------


def town(args: argparse.Namespace) -> int:
    from smalltown.eval.report import town_doc

    result = measure_save(args.save, args, args.copy)
    return _emit(result, town_doc(result, Path(args.save).name), args, show_town)


def show_town(c, r: dict) -> None:
    from rich.table import Table

    from smalltown.eval.report import headline

    # Names, facts, answers and notes come from the save and the model: Text, never markup.
    t = Table(title=shown_text(f"{r['world']}: {r['start']} → {r['end']} ({len(r['agents'])} agents)"),
              show_lines=True)
    t.add_column("measure", style="bold")
    t.add_column("value")
    for m, v in headline(r):
        t.add_row(shown_text(m), shown_text(v))
    c.print(t)
    for d in r["diffusion"]:
        how = ", ".join(f"{k} {v}" for k, v in d["how"].items())
        c.print(Text.assemble((shown(d["fact"]), "bold"), shown(
            f": known at the start by {', '.join(d['start']) or 'nobody'}; learned: {how}; "
            f"never: {', '.join(d['never']) or 'nobody'}")))
    for g in r["coordination"]:
        c.print(Text.assemble((shown(g["gathering"]), "bold"),
                              shown(f": there: {', '.join(g['attended']) or 'nobody'}")))
    for note in r["notes"]:
        c.print(Text.assemble(("note:", "yellow"), " ", shown(note)))


def show_calls(c, r: dict) -> None:
    from smalltown.eval.report import calls_rows

    for what, line in calls_rows(r):
        c.print(Text.assemble((shown(what), "bold"), ": ", shown(line)))


def interview(args: argparse.Namespace) -> int:
    from smalltown.eval.conditions import parse_conditions
    from smalltown.eval.interview import Interviewer
    from smalltown.eval.measure import interview_agents
    from smalltown.eval.questions import QUESTIONS
    from smalltown.eval.report import interview_doc
    from smalltown.eval.town import read_town
    from smalltown.sim.interviews import Interviews

    conditions = parse_conditions(args.conditions)
    with working_copy(args.save, args.copy) as copy:
        sim = open_copy(copy, args)
        try:
            t = read_town(sim.save)
            agents = list(dict.fromkeys(t.check_agents(args.agents.split(",")))) if args.agents else t.agents
            calls, before = sim.save.call_figures(), sim.save.last_call_id()
            total = len(agents) * sum(len(qs) for _, qs in QUESTIONS) * len(conditions)
            with progress(total, "interviewing") as tick:
                iv = Interviewer(Interviews(sim), args.persona, on_answer=tick)
                result = interview_agents(t, iv, agents, conditions)
            result = {"save": str(args.save), "backend": sim.backend.name, **result, "calls": calls,
                      "asked_calls": sim.save.call_figures(after_id=before)}
        finally:
            sim.close()
    return _emit(result, interview_doc(result, Path(args.save).name), args, show_interview)


def show_interview(c, r: dict) -> None:
    from rich.table import Table

    for a in r["agents"]:
        t = Table(title=shown_text(a["agent"]), show_lines=True)
        t.add_column("question", ratio=2)
        for cond in r["conditions"]:
            t.add_column(cond, ratio=3)
        for row in a["answers"]:
            t.add_row(shown_text(row["question"]),
                      *(shown_text(_clip(row["by_condition"][x]["answer"]), lines=True) for x in r["conditions"]))
        c.print(t)
        for note in a["notes"]:
            c.print(Text.assemble(("note:", "yellow"), " ", shown(note)))
    show_calls(c, r)


def ablate(args: argparse.Namespace) -> int:
    from smalltown.cli.common import backend_choice
    from smalltown.cli.run import run_headless
    from smalltown.sim.open import stop_time
    from smalltown.config import parse_sets
    from smalltown.eval.conditions import SETTINGS, parse_conditions
    from smalltown.eval.report import ablate_doc
    from smalltown.sim.open import create
    from smalltown.world.load import load_world

    conditions = parse_conditions(args.conditions)
    world = load_world(args.world)
    out = Path(args.out)
    runs = {c: out / f"{c}.sqlite" for c in conditions}
    there = [str(p) for p in runs.values() if p.exists()]
    if there and not args.overwrite:
        raise EvalError(f"already there: {', '.join(there)} (pass --overwrite, or another --out)")
    choice = backend_choice(args)
    for c, path in runs.items():
        sets = {**parse_sets(args.set or []), **SETTINGS[c]}  # the condition wins over --set
        sim = create(world, path, choice.backend(world.seed), overwrite=True,
                     sets=[f"{k}={v}" for k, v in sets.items()], embedder=choice.embedder(),
                     fallback=choice.fallback(world.seed))
        try:
            until = stop_time(args.until, sim.now, sim.world.start)  # (as `run --until` reads it)
        except ValueError as e:
            sim.close()
            raise EvalError(f"--until: {e}") from None
        print(f"condition {c}: {path}", file=sys.stderr)
        if run_headless(sim, until) != 0:  # closes the simulation
            print("stopped: the conditions run so far are in their saves", file=sys.stderr)
            return 130
    results = {c: measure_save(str(path), args) for c, path in runs.items()}
    return _emit({"world": world.name, "until": args.until, "backend": choice.name, "conditions": results},
                 ablate_doc(results, Path(args.world).name, choice.name), args, show_ablate)


def show_ablate(c, r: dict) -> None:
    from rich.table import Table

    from smalltown.eval.conditions import caveat
    from smalltown.eval.report import headline

    results = r["conditions"]
    heads = {k: dict(headline(v)) for k, v in results.items()}
    t = Table(title=shown_text(f"{r['world']}: ablations to {r['until']}"), show_lines=True)
    t.add_column("measure", style="bold")
    for k in results:
        t.add_column(k)
    for m in dict.fromkeys(m for h in heads.values() for m in h):
        t.add_row(shown_text(m), *(shown_text(heads[k].get(m, "")) for k in results))
    c.print(t)
    if note := caveat(r["backend"]):
        c.print(Text.assemble(("note:", "yellow"), " ", note))



def social(args: argparse.Namespace) -> int:
    from smalltown.cli.eval_social import social as run_social

    return run_social(args, sys.modules[__name__])  # its copy, backend and report helpers are these


def matrix(args: argparse.Namespace) -> int:
    from smalltown.cli.eval_matrix import matrix as run_matrix

    return run_matrix(args, sys.modules[__name__])  # its copy, backend and report helpers are these


def civics(args: argparse.Namespace) -> int:
    from smalltown.cli.eval_civics import civics as run_civics

    return run_civics(args, sys.modules[__name__])


def culture(args: argparse.Namespace) -> int:
    from smalltown.cli.eval_culture import culture as run_culture

    return run_culture(args, sys.modules[__name__])
