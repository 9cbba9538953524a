"""`smalltown eval ...`: measure a town as the generative-agents paper did (cli/eval.py does it)."""

from __future__ import annotations

import os
from typing import Any, Callable

import click

from smalltown.cli.app import cli
from smalltown.cli.execute import handle
from smalltown.cli.options import CONTEXT, backend_options, int_in, opt, out_option, several

DEFAULT_CONDITIONS = "full,no-reflection,no-planning,no-memory"  # (cli/eval.py's, not imported: it is heavy)


@cli.group("eval", context_settings=CONTEXT,
           short_help="measure a town as the paper did: interviews, diffusion, relationships, ablations",
           help="""Measure a town the way the generative-agents paper did: interviews, information
diffusion, relationships, coordination, ablations, social and civic measures.

Eval never changes the save it is given: it works on a copy (kept with --copy FILE, where every
model call it made is logged like any other).

\b
Examples:
  smalltown eval interview town.sqlite --agents Alex --conditions full,no-memory
  smalltown eval town town.sqlite -o report/
  smalltown eval matrix worlds/tiny.toml --condition a= --condition b=reflection=false \\
      --seeds 1 2 --until +6h -o matrix/""")
def eval_group() -> None:
    pass


def common(copy: bool = True, out_required: bool = False) -> Callable[[Callable], Callable]:
    """The report's options (and --copy, the backend's) every measure shares."""
    def add(f: Callable) -> Callable:
        f = backend_options(f)
        if copy:
            f = opt("--copy", metavar="FILE", help="keep the copy of the save eval worked on (with its "
                    "interviews and model calls) in FILE")(f)
        f = opt("--json", "json", is_flag=True, help="print the measures as JSON")(f)
        return out_option("write report.html, report.md (plots in plots/) and report.json here",
                          required=out_required, metavar="DIR")(f)
    return add


def measure(name: str, **params: Any) -> int:
    from smalltown.cli.eval import run

    return handle("eval", run, eval_command=name, **params)


@eval_group.command("interview", context_settings=CONTEXT,
                    short_help="the paper's 25 questions to each agent, under each ablation if asked",
                    help=f"""Ask each agent the paper's 25 interview questions (self-knowledge, memory, plans,
reactions, reflections), under each condition side by side, and rate the answers.

\b
SAVE  a save file

\b
Example:
  smalltown eval interview town.sqlite --agents Alex,Juno --conditions {DEFAULT_CONDITIONS}""")
@click.argument("save", metavar="SAVE")
@opt("--agents", metavar="A,B", help="full or first names (default: every agent)")
@opt("--conditions", default="full", metavar="C,...",
     help=f"answer under each of these side by side (default full; all: {DEFAULT_CONDITIONS})")
@opt("--as", "persona", default="the interviewer", metavar="PERSONA", help="who is asking")
@common()
def interview(**params: Any) -> int:
    return measure("interview", **params)


@eval_group.command("town", context_settings=CONTEXT,
                    short_help="information diffusion, relationships and coordination, from memory and the "
                               "event log",
                    help="""Information diffusion, relationships and coordination, read from the agents'
memories and the event log (and, with --ask, from the agents' answers).

\b
SAVE  a save file

\b
Example:
  smalltown eval town town.sqlite --ask -o report/""")
@click.argument("save", metavar="SAVE")
@opt("--ask", is_flag=True, help="also ask every agent 'Did you know ...?' and 'Do you know of X?' (the interview "
     "task), checking each yes against its memory")
@opt("--facts", metavar="WORLD", help="take [[facts]] and [[gatherings]] from this world file (for a save whose "
     "world declares none)")
@common()
def town(**params: Any) -> int:
    return measure("town", **params)


@eval_group.command("ablate", context_settings=CONTEXT,
                    short_help="run a world under each ablation (same seed), measures side by side",
                    help="""Run a world under each ablation with the same seed, each into its own save in
--out, and report the measures side by side.

\b
WORLD  a world file

\b
Example:
  smalltown eval ablate worlds/tiny.toml --until +1d -o ablate/""")
@click.argument("world", metavar="WORLD")
@opt("--until", required=True, metavar="WHEN", help="game time to run to: '+2d', '2023-02-15 06:00'")
@opt("--conditions", default=DEFAULT_CONDITIONS, metavar="C,...", help=f"default {DEFAULT_CONDITIONS}")
@opt("--ask", is_flag=True, help="also measure by asking the agents (see eval town --ask)")
@opt("--overwrite", is_flag=True, help="replace the runs already in --out")
@opt("--set", "sets", multiple=True, metavar="NAME=VALUE", help="a setting for every condition's run")
@common(copy=False, out_required=True)
def ablate(sets: tuple[str, ...], **params: Any) -> int:
    return measure("ablate", set=sets, **params)


@eval_group.command("social", context_settings=CONTEXT,
                    short_help="likeability, in-degree, feelings over time, kept promises; two saves side by side",
                    help="""Perceived vs true likeability, in-degree vs extroversion, feelings over time and
their asymmetry, kept promises: of one save, or two side by side (with and without the social
modules), rated on a copy of each.

\b
SAVE...  one save, or two

\b
Example:
  smalltown eval social with.sqlite without.sqlite --pairs "Alex:Juno" -o social/""")
@click.argument("save", nargs=-1, required=True, metavar="SAVE...")
@several("--pairs", metavar="A:B", help="feelings of A toward B over time (default: the pairs whose feelings "
         "changed most)")
@opt("--min-observers", type=int, default=5, metavar="N",
     help="perceived likeability of agents with at least N observers (default 5)")
@common(copy=False)
def social(save: tuple[str, ...], pairs: tuple[str, ...], **params: Any) -> int:
    return measure("social", save=list(save), pairs=list(pairs), **params)


def _measures_help() -> str:
    from smalltown.eval.measures import MEASURES

    return f"repeatable (default run): {'; '.join(f'{m.name}: {m.about}' for m in MEASURES.values())}"


@eval_group.command("matrix", context_settings=CONTEXT,
                    short_help="a world under conditions × seeds as parallel processes, mean and spread",
                    help="""Run a world under conditions × seeds, each run a separate `smalltown run
--headless` process with its own save (OUT/runs/COND-sSEED.sqlite), at most --jobs at once, then
measure them into one report of each measure's mean and spread over seeds. A run already done is
reused, one stopped short is continued; Ctrl-C stops every run at its last whole tick.

\b
WORLD  a world file

\b
Example:
  smalltown eval matrix worlds/tiny.toml --condition a= --condition b=reflection=false \\
      --seeds 1 2 3 --until +1d --measure social -o matrix/""")
@click.argument("world", metavar="WORLD")
@opt("--condition", multiple=True, required=True, metavar="NAME=SETTING=V[,SETTING=V...]",
     help="a condition (repeatable): a name and its settings, an ablation's name (full, no-reflection, ...), "
          "or NAME= for the world as it is")
@several("--seeds", type=int_in(0, 2**32 - 1), default=[1, 2], metavar="N...",
         help="the world seeds each condition runs under (default 1 2; `run --world-seed`)")
@opt("--until", required=True, metavar="WHEN", help="game time to run to: '+1d', 'day 2 9:00'")
@opt("--measure", multiple=True, metavar="NAME", help_fn=_measures_help)
@opt("--jobs", type=int_in(1, 256), default=os.cpu_count() or 1, metavar="N",
     help="runs at once (default: the machine's cores)")
@opt("--overwrite", is_flag=True, help="run again the runs whose saves are in --out/runs")
@opt("--set", "sets", multiple=True, metavar="NAME=VALUE",
     help="a setting for every run (a condition's own settings win)")
@common(copy=False, out_required=True)
def matrix(sets: tuple[str, ...], condition: tuple[str, ...], seeds: tuple[int, ...], **params: Any) -> int:
    return measure("matrix", set=sets, condition=list(condition), seeds=list(seeds), **params)


@eval_group.command("civics", context_settings=CONTEXT,
                    short_help="civic measures: taxes before and after the vote, votes, stances; or --roles",
                    help="""Civic measures: tax compliance per season before and after the vote, the rate
voted, amendments, votes and stances; with --roles, the roles that emerged (distinct roles,
entropy, persistence, role × action). Several saves are measured side by side.

\b
SAVE...  the saves to measure

\b
Example:
  smalltown eval civics a.sqlite b.sqlite -o civics/""")
@click.argument("saves", nargs=-1, required=True, metavar="SAVE...")
@opt("--roles", is_flag=True, help="measure roles instead: distinct roles, entropy, persistence, role × action")
@out_option("write report.html, report.md (plots in plots/) and report.json here", metavar="DIR")
@opt("--json", "json", is_flag=True, help="print the measures as JSON")
def civics(saves: tuple[str, ...], **params: Any) -> int:
    return measure("civics", saves=list(saves), **params)


@eval_group.command("culture", context_settings=CONTEXT,
                    short_help="memes across towns and a doctrine's spread: converts, area, exposure graph",
                    help="""Culture across towns, from the save alone: meme uses per agent for each town and
the rural area, each town's memes over time, and for each of the world's doctrines the converts
by level over time, the area of influence over time and the critical-exposure graph; Project
Sid's figures beside them. Several saves are measured side by side.

\b
SAVE...  the saves to measure

\b
Example:
  smalltown eval culture towns.sqlite -o culture/""")
@click.argument("saves", nargs=-1, required=True, metavar="SAVE...")
@out_option("write report.html, report.md (plots in plots/) and report.json here", metavar="DIR")
@opt("--json", "json", is_flag=True, help="print the measures as JSON")
def culture(saves: tuple[str, ...], **params: Any) -> int:
    return measure("culture", saves=list(saves), **params)
