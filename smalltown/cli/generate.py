"""`smalltown world generate`: towns made to order (smalltown/world/generate.py)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from smalltown.shown import shown


def add_parser(world) -> None:
    g = world.add_parser("generate", help="write a world of N towns of M agents (and rural agents) to order",
                         description="Write a world (and its map, OUT-map.toml beside it): towns of homes, "
                                     "workplaces and haunts, with personas from seeded word lists. "
                                     "The same options give the same files.")
    g.add_argument("--towns", type=int, default=1, metavar="N", help="towns (default 1)")
    g.add_argument("--agents", type=int, default=5, metavar="M", help="agents in each town (default 5)")
    g.add_argument("--rural", type=int, default=0, metavar="R", help="agents living between the towns (default 0)")
    g.add_argument("--seed", type=int, default=0, metavar="S", help="picks names, ages, jobs, layout (default 0)")
    g.add_argument("--out", required=True, metavar="PATH", help="the world file to write (.toml)")
    g.add_argument("--facts", choices=("on", "off"), default="on", help="facts: who runs what, who is married")
    g.add_argument("--gatherings", choices=("on", "off"), default="on", help="a gathering in each town")
    g.add_argument("--overwrite", action="store_true", help="replace existing files")
    g.add_argument("--same-traits", action="store_true",
                   help="every persona the same traits and hobby, no couples (a role world)")


def world_generate(args: argparse.Namespace) -> int:
    from smalltown.world.generate import GeneratedInvalid, GenerateError, Options, write

    out = Path(args.out)
    if out.suffix != ".toml":
        print(f"error: --out {shown(str(out))}: a world file is a .toml file", file=sys.stderr)
        return 2
    map_path = out.with_name(out.stem + "-map.toml")
    if not args.overwrite and (out.exists() or map_path.exists()):
        print(f"error: {shown(str(out if out.exists() else map_path))}: a file is already there "
              f"(pass --overwrite)", file=sys.stderr)
        return 1
    opts = Options(args.towns, args.agents, args.rural, args.seed, args.facts == "on", args.gatherings == "on",
                   args.same_traits)
    try:
        write(opts, out)
    except GeneratedInvalid as e:  # the generator's fault, not the options': a bug, told as one
        for problem in e.problems:
            print(shown(problem, lines=True), file=sys.stderr)
        print(f"error: {shown(str(e))} (this is a bug in smalltown: please report it, with the options given)",
              file=sys.stderr)
        return 70
    except GenerateError as e:
        print(f"error: {shown(str(e))}", file=sys.stderr)
        return 2
    n = args.towns * args.agents + args.rural
    print(shown(f"{out}: {n} agent{'s' if n != 1 else ''} in {args.towns} town{'s' if args.towns != 1 else ''}, "
                f"map {map_path.name}; it passes `smalltown world check {out}`"))
    return 0
