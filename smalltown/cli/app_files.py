"""`smalltown world ...` and `smalltown save ...`: the commands on world and save files."""

from __future__ import annotations

from typing import Any

import click

from smalltown.cli.app import cli
from smalltown.cli.execute import handle
from smalltown.cli.options import CONTEXT, opt, out_option


@cli.group("world", context_settings=CONTEXT, short_help="world files: check, pack, unpack, generate",
           help="""World files: check one, pack it with its map into one file to share, install a
pack, or generate a world to order.

\b
Examples:
  smalltown world check worlds/tiny.toml
  smalltown world pack worlds/tiny.toml -o tiny.smalltown-world
  smalltown world unpack tiny.smalltown-world -o ~/towns""")
def world() -> None:
    pass


@world.command("pack", context_settings=CONTEXT, short_help="write a world and its map into one shareable file",
               help="""Write a world and its map into one file to share (NAME.smalltown-world); it runs
as it is (`smalltown run FILE`) or installs with `smalltown world unpack`.

\b
WORLD  a world file (.toml)

\b
Example:
  smalltown world pack worlds/tiny.toml -o tiny.smalltown-world""")
@click.argument("path", metavar="WORLD")
@out_option("the pack to write (default: NAME.smalltown-world here)", aliases=("--output",))
@opt("--overwrite", is_flag=True, help="replace an existing FILE")
def pack(out: str | None, **params: Any) -> int:
    from smalltown.cli.files import world_pack

    return handle("world", world_pack, world_command="pack", output=out, **params)


@world.command("unpack", context_settings=CONTEXT,
               short_help="validate a world pack and install it (worlds/, maps/)",
               help="""Validate a world pack and install its world and map into DIR/worlds and
DIR/maps; a different file of the same name is not replaced (unless --force).

\b
FILE  a world pack (.smalltown-world)

\b
Example:
  smalltown world unpack tiny.smalltown-world -o .""")
@click.argument("path", metavar="FILE")
@out_option("install into DIR/worlds and DIR/maps (default: the current folder)", aliases=("--to",),
            metavar="DIR")
@opt("--force", is_flag=True, help="replace different files of the same name")
def unpack(out: str | None, **params: Any) -> int:
    from smalltown.cli.files import world_unpack

    return handle("world", world_unpack, world_command="unpack", to=out or ".", **params)


@world.command("generate", context_settings=CONTEXT,
               short_help="write a world of N towns of M agents (and rural agents) to order",
               help="""Write a world (and its map, OUT-map.toml beside it): towns of homes, workplaces and
haunts, with personas from seeded word lists. The same options give the same files.

\b
Examples:
  smalltown world generate -o big.toml --towns 3 --agents 8 --rural 4
  smalltown world generate -o roles.toml --same-traits --seed 7
  smalltown world generate -o sid.toml --towns 6 --agents 33 --rural 302 --layout sid \\
      --doctrine worlds/doctrines/pastafarian.toml --priests 20""")
@opt("--towns", type=int, default=1, metavar="N", show_default=True, help="towns")
@opt("--agents", type=int, default=5, metavar="M", show_default=True, help="agents in each town")
@opt("--rural", type=int, default=0, metavar="R", show_default=True, help="agents living between the towns")
@opt("--seed", type=int, default=0, metavar="S", show_default=True, help="picks names, ages, jobs, layout")
@out_option("the world file to write (.toml)", required=True, metavar="PATH")
@opt("--facts", type=click.Choice(["on", "off"]), default="on", show_default=True,
     help="facts: who runs what, who is married")
@opt("--gatherings", type=click.Choice(["on", "off"]), default="on", show_default=True,
     help="a gathering in each town")
@opt("--overwrite", is_flag=True, help="replace existing files")
@opt("--same-traits", is_flag=True, help="every persona the same traits and hobby, no couples (a role world)")
@opt("--layout", type=click.Choice(["grid", "sid"]), default="grid", show_default=True,
     help="grid: towns in a grid, farms in strips; sid: Project Sid's, towns as circles spread over an area, "
          "farms scattered between")
@opt("--area", default="333x400", metavar="WxH", show_default=True,
     help="the sid layout's area in tiles (Sid's 1000 x 1200 blocks at 3 blocks a tile)")
@opt("--town-radius", type=int, default=17, metavar="R", show_default=True,
     help="the sid layout's town radius in tiles (grown where a town's buildings need more)")
@opt("--doctrine", metavar="FILE", help="a faith: a TOML file with one [[doctrines]] table (worlds/doctrines/)")
@opt("--priests", type=int, default=0, metavar="N", show_default=True,
     help="N agents of the first town become the doctrine's priests")
def generate(**params: Any) -> int:
    from smalltown.cli.generate import world_generate

    return handle("world", world_generate, world_command="generate", **params)


@cli.group("save", context_settings=CONTEXT, short_help="save files: info, check, strip",
           help="""Save files: what one holds, whether it is sound, and a smaller copy to share.

\b
Examples:
  smalltown save info town.sqlite
  smalltown save check town.sqlite
  smalltown save strip town.sqlite -o town-shared.sqlite""")
def save() -> None:
    pass


SAVE = "\b\nSAVE  a save file (made by `smalltown run`)"


@save.command("check", context_settings=CONTEXT,
              short_help="SQLite's integrity check and smalltown's consistency checks",
              help=f"""SQLite's integrity check and smalltown's consistency checks on a save; each problem is
said (exit 1 when there are any).

{SAVE}

\b
Example:
  smalltown save check town.sqlite --json""")
@click.argument("path", metavar="SAVE")
@opt("--json", "json", is_flag=True, help="print as JSON")
def save_check(**params: Any) -> int:
    from smalltown.cli.files import save_check

    return handle("save", save_check, save_command="check", **params)


@save.command("strip", context_settings=CONTEXT,
              short_help="a smaller copy for sharing: no model call log, no snapshots",
              help=f"""A smaller copy of a save for sharing: the same town at the same tick, without the
model call log and the snapshots (and the retrieval log, unless kept); the events and
conversations are kept. The copy continues like the original but cannot be replayed as a cassette
or rewound.

{SAVE}

\b
Example:
  smalltown save strip town.sqlite -o town-shared.sqlite""")
@click.argument("path", metavar="SAVE")
@out_option("the copy to write", aliases=("--output",), required=True)
@opt("--keep-retrievals", is_flag=True, help="keep the retrieval log")
@opt("--overwrite", is_flag=True, help="replace an existing FILE")
def strip(out: str, **params: Any) -> int:
    from smalltown.cli.files import save_strip

    return handle("save", save_strip, save_command="strip", output=out, **params)
