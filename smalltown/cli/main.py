"""The `smalltown` command line: `main` runs it (the commands are declared with click in
cli/app.py and the modules it names) and turns what happened into an exit code (docs/cli.md):
0 ok, 1 failed, 2 a usage error or input refused, 130 and 143 stopped by Ctrl-C and SIGTERM."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Callable

import click

from smalltown.cli.common import backend_choice, say_ignored
from smalltown.cli.options import FAILED, OK, REFUSED, STOPPED_INT
from smalltown.config import SettingsError
from smalltown.llm.backend import BackendUnavailable
from smalltown.shown import shown
from smalltown.store.errors import SQLiteError
from smalltown.store.save import SaveError
from smalltown.world.errors import WorldError
from smalltown.world.names import NoSuchAgent

BUG_CODE = 70  # an exception no command expected (EX_SOFTWARE): a bug, said as one


def main(argv: list[str] | None = None) -> int:
    """Run the command line on `argv` (None: the program's own arguments) and return its exit
    code; a caller in this process gets the code, never a SystemExit."""
    from smalltown.cli.app import cli

    try:
        rv = cli.main(args=sys.argv[1:] if argv is None else [str(a) for a in argv], prog_name="smalltown",
                      standalone_mode=False, obj={"program": argv is None})
    except click.UsageError as e:  # (click's own words may quote what was typed: shown as text)
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


def execute(args: argparse.Namespace, handler: Callable[[argparse.Namespace], int]) -> int:
    """Run one command's `handler` on its parameters: supervised when it loads llama.cpp (as the
    program itself, not a caller in this process), every error said in one line with its code."""
    ctx = click.get_current_context(silent=True)
    if ctx is not None and (ctx.find_root().obj or {}).get("program"):
        from smalltown.cli import guard

        if guard.in_child():
            guard.arm()
        elif guard.loads_llama(args):
            return guard.supervise(args, guard.smalltown_command(sys.argv[1:]))
    try:
        if hasattr(args, "backend") and getattr(args, "eval_command", None) != "matrix":  # (it says its own)
            say_ignored(backend_choice(args))  # once, as the command starts: an ignored option is not swallowed
        return handler(args)
    except NoSuchAgent as e:
        print(f"error: {shown(e, lines=True)}", file=sys.stderr)
        return REFUSED  # a misspelt name is a usage error
    except WorldError as e:
        for problem in e.problems:
            print(shown(problem, lines=True), file=sys.stderr)
        n = len(e.problems)
        print(f"{n} problem{'s' if n != 1 else ''} found", file=sys.stderr)
        return REFUSED
    except (SaveError, BackendUnavailable, SettingsError, OSError) as e:  # (SQLite's errors too: store/errors.py)
        print(f"error: {shown(e, lines=True)}", file=sys.stderr)
        return FAILED if failed_while_working(e) else REFUSED
    except KeyboardInterrupt:  # Ctrl-C before a run's own handler is in place (opening, loading a model)
        print("stopped (Ctrl-C); a save stays at its last whole tick, a new one is made whole or not at all",
              file=sys.stderr)
        return STOPPED_INT
    except Exception as e:  # noqa: BLE001 - the last word: one clear line, never a traceback
        print(f"error: {unexpected(args, e)}", file=sys.stderr)
        return BUG_CODE


def failed_while_working(e: BaseException) -> bool:
    """An error of the machine or of a backend at work (SQLite failing on a good save, a full
    disk, a server gone mid-run: exit 1), not of what the user gave (a missing or bad file, a
    model that is not there, a backend without what it needs: exit 2)."""
    from smalltown.llm.wrappers import Transient

    if isinstance(e, (SQLiteError, Transient)):
        return True
    return isinstance(e, OSError) and not isinstance(e, (FileNotFoundError, IsADirectoryError,
                                                         NotADirectoryError, PermissionError))


BUG = "this is a bug in smalltown: please report it"


def unexpected(args: argparse.Namespace, e: BaseException) -> str:
    """An exception no command expected, as one line: which command, which file, what went wrong."""
    command = " ".join(str(getattr(args, k)) for k in ("command", "world_command", "save_command", "eval_command")
                       if getattr(args, k, None))
    files = [str(getattr(args, k)) for k in ("save", "path", "target", "world") if getattr(args, k, None)]
    on = f" on {files[0]}" if files else ""
    return shown(f"smalltown {command}{on} failed: {type(e).__name__}: {str(e)[:200]} ({BUG})")


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
    if as_json:
        print(json.dumps(info))
        return 0
    calls = info.pop("calls")
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
