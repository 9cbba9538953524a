"""The `smalltown` command line: `main` runs it and returns its exit code (docs/cli.md): 0 ok,
1 failed, 2 a usage error or input refused, 130 and 143 stopped by Ctrl-C and SIGTERM. The
commands are declared with click in cli/app.py, app_files.py and app_eval.py; `world check`,
`save info` and `replay`, whose work is done here, below."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import click

from smalltown.cli.app import CONTEXT, cli, opt
from smalltown.cli.app_eval import eval_group
from smalltown.cli.app_files import save as save_group
from smalltown.cli.app_files import world as world_group
from smalltown.cli.execute import handle, say_problems
from smalltown.cli.options import OK, REFUSED, STOPPED_INT
from smalltown.shown import shown

__all__ = ["main", "cli", "eval_group"]
NO_ARGS = getattr(click.exceptions, "NoArgsIsHelpError", ())  # (click 8.2 and later)


def main(argv: list[str] | None = None) -> int:
    """Run the command line on `argv` (None: the program's own arguments) and return its exit
    code; a caller in this process gets the code, never a SystemExit."""
    try:
        rv = cli.main(args=sys.argv[1:] if argv is None else [str(a) for a in argv], prog_name="smalltown",
                      standalone_mode=False, obj={"program": argv is None})
    except click.UsageError as e:  # (click's own words may quote what was typed: shown as text)
        if isinstance(e, NO_ARGS):  # `smalltown` or a group alone: its help, which says what to add
            print(e.format_message(), file=sys.stderr)
            return REFUSED
        if e.ctx is not None:
            print(e.ctx.get_usage(), file=sys.stderr)
            print(f"Try '{e.ctx.command_path} --help' for help.", file=sys.stderr)
        print(f"error: {shown(e.format_message())}", file=sys.stderr)
        return REFUSED
    except click.ClickException as e:
        print(f"error: {shown(e.format_message())}", file=sys.stderr)
        return e.exit_code
    except click.Abort:  # Ctrl-C while click itself was reading
        return STOPPED_INT
    return rv if isinstance(rv, int) else OK


# --- the commands whose work is done here ---------------------------------------------------------


@world_group.command("check", context_settings=CONTEXT, short_help="validate a world and its map, print a summary",
                     help="""Validate a world and its map (or a world pack, without installing it) and print a
summary; every problem is said with its file, line and column (exit 1 when there are any).

\b
PATH  a world file (.toml) or a world pack (.smalltown-world)

\b
Examples:
  smalltown world check worlds/tiny.toml
  smalltown world check tiny.smalltown-world --json""")
@click.argument("path", metavar="PATH")
@opt("--json", "json", is_flag=True, help="print the summary as JSON")
def check_command(**params: Any) -> int:
    return handle("world", world_check_command, world_command="check", **params)


def world_check_command(args: argparse.Namespace) -> int:
    """A world with problems is what the check is for: they are said, and the check fails (1)."""
    from smalltown.world.errors import WorldError

    if not Path(args.path).exists():  # nothing to check: refused, as by every command (a fifo is checked: refused there)
        print(f"error: {shown(args.path)}: file not found (no world file there)", file=sys.stderr)
        return 2
    try:
        return world_check(args.path, args.json)
    except WorldError as e:
        say_problems(e)
        return 1


@save_group.command("info", context_settings=CONTEXT, short_help="what a save holds, and its state digest",
                    help="""What a save holds: its world, game time and tick, counts of agents, memories, events,
conversations and model calls (and how many a fallback answered), its settings, who answered and
its state digest (two saves with one digest hold the same town).

\b
SAVE  a save file (made by `smalltown run`)

\b
Examples:
  smalltown save info town.sqlite
  smalltown save info town.sqlite --json""")
@click.argument("path", metavar="SAVE")
@opt("--json", "json", is_flag=True, help="print as JSON")
def info(**params: Any) -> int:
    return handle("save", save_info_command, save_command="info", **params)


def save_info_command(args: argparse.Namespace) -> int:
    return save_info(args.path, args.json)


@cli.command("replay", context_settings=CONTEXT, short_help="scrub through a recorded run in the TUI, without any model",
             help="""Open a save read-only: the map, agents, events, memories and conversations as they
were at any moment of the run. No model is asked anything; the save is not changed.

\b
SAVE  a save file

\b
Examples:
  smalltown replay town.sqlite
  smalltown replay town.sqlite --at 'day 1 12:00'""")
@click.argument("save", metavar="SAVE")
@opt("--at", metavar="WHEN", help="start at this game time: '9:00' (the latest at or before the run's end), "
     "'day 2 9:00', '2023-02-13 12:00' (default: the end of the run)")
def replay_command(**params: Any) -> int:
    return handle("replay", replay, **params)


def world_check(path: str, as_json: bool) -> int:
    from smalltown.world.load import load_world
    from smalltown.world.pack import is_pack, read_pack

    w = read_pack(path).world if is_pack(path) else load_world(path)  # a pack: checked, not installed
    summary = {
        "sectors": len(w.sectors), "arenas": len(w.arenas), "objects": len(w.objects),
        "agents": len(w.agents), "width": w.map.width, "height": w.map.height,
    }
    if as_json:
        print(json.dumps(summary))
    else:
        print(shown(f"{path}: ok — {w.name!r} on {w.map_source}"))
        print(f"  {summary['width']}x{summary['height']} tiles, {summary['sectors']} sectors, "
              f"{summary['arenas']} arenas, {summary['objects']} objects, {summary['agents']} agents")
        print(f"  starts {w.start:%Y-%m-%d %H:%M}, {w.step_seconds} game seconds per tick, seed {w.seed}")
    return 0


def save_info(path: str, as_json: bool) -> int:
    from smalltown.store.save import Save
    from smalltown.store.unfolded import unfolded

    save = Save.open(path, readonly=True)
    try:
        # who answered: the backend and model of the last call, as the call log says
        backend, model, _ = next(iter(save.reader().call_backends()), (None, None, 0))
        info = {
            "world": save.meta("world"), "game_time": save.meta("game_time"), "tick": save.meta("tick"),
            "agents": save.count("agents"), "objects": save.count("objects"),
            "memories": save.count("memories"), "events": save.count("events"),
            "conversations": save.conversation_count(), "llm_calls": save.count("llm_calls"),
            "schema_version": save.meta("schema_version"), "digest": save.digest(),
            "settings": save.meta("settings") or {}, "backend": backend, "model": model,
            "file_size": sum(p.stat().st_size for p in (Path(path), Path(f"{path}-wal")) if p.exists()),
            "calls": save.call_figures(),
        }
    finally:
        save.close()
    info["wal"] = unfolded(path, info["tick"])  # (None, or the ticks a -wal holds that the file alone does not)
    if as_json:
        print(json.dumps(info))
        return 0
    calls, wal = info.pop("calls"), info.pop("wal")
    lines = [(k, str(v)) for k, v in info.items()]
    lines = [(k, info_text(k, info)) for k, _ in lines]
    k, t = calls["fallbacks"], calls["too_long"]
    at = next(i for i, (key, _) in enumerate(lines) if key == "llm_calls")
    lines[at] = ("llm_calls", f"{calls['calls']:,} (" + (
        f"{k:,} answered by a fallback; {t:,} prompt{'s' if t != 1 else ''} too long for the model's window)"
        if k else "none answered by a fallback)") + (
        f"; {calls['attempts']:,} attempts, {calls['retried']:,} retried" if calls.get("retried") else ""))
    if k:
        from smalltown.store.calls import describe_reasons

        tasks = {task: c for task, c in calls["by_task"].items() if c["fallbacks"]}
        width = max(map(len, tasks))
        lines.insert(at + 1, ("fallbacks", describe_reasons(calls["by_reason"])))
        for i, (task, c) in enumerate(tasks.items()):
            lines.insert(at + 2 + i, ("", f"  {task:<{width}}  {c['fallbacks']:,} of {c['calls']:,} calls: "
                                          f"{describe_reasons(c['by_reason'])}"))
    width = max(len(key) for key, _ in lines)
    for key, value in lines:
        print(f"{key:>{width}}  {shown(value)}")
    if wal:
        print(shown(f"warning: {wal['says']}"))
    return 0


def info_text(key: str, info: dict) -> str:
    """A `save info` line's value as a person reads it (--json keeps them as they are)."""
    value = info[key]
    if key == "settings":
        return ", ".join(f"{k}={v}" for k, v in value.items()) + " (others default)" if value else "all default"
    if key == "file_size":
        return f"{value / 1e6:,.1f} MB ({value:,} bytes)"
    if key in ("backend", "model") and value is None:
        return "none (no model calls)"
    if key == "model" and value == info["backend"] == "scripted":
        return "none: the scripted stand-in answered (see `smalltown models` for one)"
    return str(value)


def replay(args: argparse.Namespace) -> int:
    from smalltown.sim.clock import clock_near
    from smalltown.sim.history import History
    from smalltown.tui.replay import run_replay

    at = None
    with History(args.save) as h:  # the save is checked (rows, snapshots) before the screen opens
        if args.at:
            try:
                at = h.tick_of(clock_near(args.at, h.time_of(h.last_tick), h.time_of(0), last=True))
            except ValueError as e:
                print(f"error: --at: {shown(e)}", file=sys.stderr)
                return 2
            if not 0 <= at <= h.last_tick:
                print(f"error: --at: the run goes from {h.time_of(0):%Y-%m-%d %H:%M} to "
                      f"{h.time_of(h.last_tick):%Y-%m-%d %H:%M}", file=sys.stderr)
                return 2
    run_replay(args.save, at)
    return 0
