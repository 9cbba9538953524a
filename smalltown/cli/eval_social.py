"""`smalltown eval social`: the social measures of one save, or of two side by side
(with and without the social modules), rated on a copy of each (eval/social.py)."""

from __future__ import annotations

import argparse
from pathlib import Path
from types import ModuleType

from smalltown.eval import EvalError
from smalltown.shown import shown_text
from smalltown.world.names import agent_named


def social(args: argparse.Namespace, cli: ModuleType) -> int:
    """Rated on a copy of each save (the ratings are model calls like any other). `cli`: the
    eval command's module, whose helpers (the working copy, the backend, the report) are shared."""
    from smalltown.eval.social import measure_social, read_social
    from smalltown.eval.social_report import social_doc

    if len(args.save) > 2:
        raise EvalError("eval social compares at most two saves")
    results = []
    for save in args.save:
        with cli.working_copy(save, None) as copy:
            sim = cli.open_copy(copy, args)
            try:
                s = read_social(sim.save)
                pairs = []
                for p in args.pairs:
                    a, _, b = p.partition(":")
                    pairs.append(tuple(agent_named(n, s.agents) for n in (a, b)))
                rater = SimRater(sim)
                with cli.progress(len(s.agents) * (2 + args.min_observers), "rating") as tick:
                    r = measure_social(s, rater, pairs, args.min_observers, lambda: tick(None))
                results.append({"save": str(save), "backend": sim.backend.name, **r, "ratings_asked": rater.asked})
            finally:
                sim.close()
    labels = [Path(x).stem for x in args.save]
    if len(set(labels)) < len(labels):
        labels = [f"{i + 1}" for i in range(len(labels))]
    out = results[0] if len(results) == 1 else {"saves": dict(zip(labels, results))}
    return cli._emit(out, social_doc(results, labels), args, lambda c, _r: show_social(c, results, labels))


class SimRater:
    """Ratings asked of the agents' own minds (their personas, the run's backend, logged calls)."""

    def __init__(self, sim) -> None:
        self.sim = sim
        self.asked = 0

    def persona(self, name: str):
        return self.sim.agent(name).mind.persona

    def ask(self, name: str, task) -> int:
        self.asked += 1
        return self.sim.agent(name).mind.ask(task).rating


def show_social(c, results: list[dict], labels: list[str]) -> None:
    from rich.table import Table

    from smalltown.eval.social_report import headline, label

    heads = [dict(headline(r)) for r in results]
    t = Table(title=shown_text(f"{results[0]['world']}: social measures"), show_lines=True)
    t.add_column("measure", style="bold")
    for lb, r in zip(labels, results):
        t.add_column(shown_text(f"{lb} ({label(r)})"))
    for m in dict.fromkeys(m for h in heads for m in h):
        t.add_row(shown_text(m), *(shown_text(h.get(m, "")) for h in heads))
    c.print(t)
