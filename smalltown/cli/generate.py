"""`smalltown world generate`: towns made to order (smalltown/world/generate.py)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from smalltown.shown import shown


def world_generate(args: argparse.Namespace) -> int:
    from smalltown.world.errors import WorldError
    from smalltown.world.generate import GeneratedInvalid, GenerateError, Options, write
    from smalltown.world.generate_towns import read_doctrine

    out = Path(args.out)
    if out.suffix != ".toml":
        print(f"error: --out {shown(str(out))}: a world file is a .toml file", file=sys.stderr)
        return 2
    map_path = out.with_name(out.stem + "-map.toml")
    if not args.overwrite and (out.exists() or map_path.exists()):
        print(f"error: {shown(str(out if out.exists() else map_path))}: a file is already there "
              f"(pass --overwrite)", file=sys.stderr)
        return 2
    w, x, h = str(args.area).lower().partition("x")
    if not (x and w.strip().isdigit() and h.strip().isdigit()):
        print(f"error: --area {shown(str(args.area))}: give the width and height in tiles, e.g. 333x400",
              file=sys.stderr)
        return 2
    doctrine = None
    if args.doctrine:
        try:
            doctrine = read_doctrine(Path(args.doctrine))
        except WorldError as e:
            for problem in e.problems:
                print(shown(problem, lines=True), file=sys.stderr)
            print(f"error: --doctrine {shown(str(args.doctrine))}: not a doctrine file", file=sys.stderr)
            return 2
    opts = Options(args.towns, args.agents, args.rural, args.seed, args.facts == "on", args.gatherings == "on",
                   args.same_traits, args.layout, (int(w), int(h)), args.town_radius, doctrine, args.priests)
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
