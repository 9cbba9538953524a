"""The `smalltown` command line."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from smalltown import __version__
from smalltown.cli import generate as generate_cli
from smalltown.cli.common import add_backend_args, backend_choice, int_in, say_ignored
from smalltown.config import SettingsError
from smalltown.llm.backend import BackendUnavailable
from smalltown.shown import shown
from smalltown.store.save import SaveError
from smalltown.world.errors import WorldError
from smalltown.world.names import NoSuchAgent

def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="smalltown", description="A town of generative agents in your terminal.")
    p.add_argument("--version", action="version", version=f"smalltown {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = sub.add_parser("run", help="run a world or continue a save (the TUI, or --headless)",
                         description="Open the TUI on a world or a save; --headless runs without it.")
    run.add_argument("target", nargs="?", metavar="WORLD|SAVE",
                     help="a world file or a save (default: the world worlds/default.txt names)")
    run.add_argument("--headless", action="store_true", help="run without the TUI, with a progress bar")
    run.add_argument("--running", action="store_true",
                     help="start the TUI running (it opens paused: space runs it; --until runs it there)")
    run.add_argument("--until", metavar="WHEN",
                     help="stop at this game time: '2023-02-14 08:00', 'day 2 9:00', '18:00' (the next "
                          "18:00 after the run's time) or relative '+6h', '+1d'")
    run.add_argument("--save", metavar="FILE",
                     help="the save file, in a folder that exists (default: a new file in the user's "
                          "saves folder, see `smalltown saves`, or the save being continued)")
    add_backend_args(run)
    run.add_argument("--overwrite", action="store_true", help="replace an existing file named by --save")
    run.add_argument("--set", action="append", metavar="NAME=VALUE",
                     help="override a setting (repeatable), e.g. --set reflection=false")
    run.add_argument("--world-seed", type=int_in(0, 2**32 - 1), metavar="N",
                     help="a new run of the world under seed N instead of its file's `seed` (kept in the save; "
                          "the model's sampling seed too, unless --seed)")

    world = sub.add_parser("world", help="world files").add_subparsers(dest="world_command", required=True, metavar="ACTION")
    check = world.add_parser("check", help="validate a world and its map, print a summary")
    check.add_argument("path", metavar="PATH")
    check.add_argument("--json", action="store_true", help="print the summary as JSON")
    wpack = world.add_parser("pack", help="write a world and its map into one shareable file")
    wpack.add_argument("path", metavar="WORLD")
    wpack.add_argument("-o", "--output", metavar="FILE", help="default: NAME.smalltown-world here")
    wpack.add_argument("--overwrite", action="store_true", help="replace an existing FILE")
    generate_cli.add_parser(world)
    wunpack = world.add_parser("unpack", help="validate a world pack and install it (worlds/, maps/)")
    wunpack.add_argument("path", metavar="FILE")
    wunpack.add_argument("--to", default=".", metavar="DIR",
                         help="install into DIR/worlds and DIR/maps (default: the current folder)")
    wunpack.add_argument("--force", action="store_true", help="replace different files of the same name")

    save = sub.add_parser("save", help="save files").add_subparsers(dest="save_command", required=True, metavar="ACTION")
    info = save.add_parser("info", help="what a save holds, and its state digest")
    info.add_argument("path", metavar="SAVE")
    info.add_argument("--json", action="store_true", help="print as JSON")
    scheck = save.add_parser("check", help="SQLite's integrity check and smalltown's consistency checks")
    scheck.add_argument("path", metavar="SAVE")
    scheck.add_argument("--json", action="store_true", help="print as JSON")
    strip = save.add_parser("strip", help="a smaller copy for sharing: no model call log, no snapshots "
                                       "(the events and conversations are kept)")
    strip.add_argument("path", metavar="SAVE")
    strip.add_argument("-o", "--output", required=True, metavar="FILE")
    strip.add_argument("--keep-retrievals", action="store_true", help="keep the retrieval log")
    strip.add_argument("--overwrite", action="store_true", help="replace an existing FILE")

    ins = sub.add_parser("inspect", help="an agent's summary, plan at each level and latest memories")
    ins.add_argument("save", metavar="SAVE")
    ins.add_argument("agent", metavar="AGENT", help="full or first name")
    ins.add_argument("--retrieve", metavar="QUERY", help="run a retrieval and show each record's scores")
    ins.add_argument("-k", type=int, default=10, help="records a retrieval returns (default 10)")
    ins.add_argument("--memories", type=int, default=20, metavar="N", help="latest memories shown (default 20)")
    ins.add_argument("--json", action="store_true")

    wh = sub.add_parser("whisper", help="an inner voice: the agent takes TEXT as its own thought")
    wh.add_argument("save", metavar="SAVE")
    wh.add_argument("agent", metavar="AGENT")
    wh.add_argument("text", metavar="TEXT")
    add_backend_args(wh)

    iv = sub.add_parser("interview", help="ask an agent a question, in a persona of your choosing")
    iv.add_argument("save", metavar="SAVE")
    iv.add_argument("agent", metavar="AGENT")
    iv.add_argument("question", metavar="QUESTION")
    iv.add_argument("--as", dest="persona", default="the interviewer", metavar="PERSONA",
                    help='who is asking, e.g. "a news reporter"')
    add_backend_args(iv)
    iv.add_argument("--json", action="store_true")

    ed = sub.add_parser("edit-object", help="rewrite an object's state; agents who see it notice")
    ed.add_argument("save", metavar="SAVE")
    ed.add_argument("address", metavar="ADDRESS", help="sector:arena:object, e.g. 'Rose Cottage:kitchen:stove'")
    ed.add_argument("state", metavar="STATE", help='e.g. "burning"')

    models = sub.add_parser("models", help="local GGUF models: list them, or pull a recommended one")
    msub = models.add_subparsers(dest="models_command", metavar="ACTION")
    pull = msub.add_parser("pull", help="download a recommended model (needs the 'models' extra)")
    pull.add_argument("name", metavar="NAME")

    from smalltown.cli import eval as eval_cli

    eval_cli.add_parser(sub)
    from smalltown.cli import fork as fork_cli

    fork_cli.add_parser(sub)
    from smalltown.cli import saves as saves_cli

    saves_cli.add_parser(sub)
    from smalltown.cli import calls as calls_cli
    from smalltown.cli import why as why_cli

    why_cli.add_parser(sub)
    calls_cli.add_parser(sub)

    rp = sub.add_parser("replay", help="scrub through a recorded run in the TUI, without any model",
                        description="Open a save read-only: the map, agents, events, memories and "
                                    "conversations as they were at any moment of the run.")
    rp.add_argument("save", metavar="SAVE")
    rp.add_argument("--at", metavar="WHEN", help="start at this game time: '9:00' (the latest at or "
                    "before the run's end), "
                    "'day 2 9:00', '2023-02-13 12:00' (default: the end of the run)")
    return p


TIME_OPTIONS = ("--until", "--at", "--since")  # their value may be a negative relative time: "-1h"


def join_negative_times(argv: list[str]) -> list[str]:
    """`--until -1h` as `--until=-1h`: argparse otherwise takes "-1h" for an option."""
    out: list[str] = []
    for arg in argv:
        if out and out[-1] in TIME_OPTIONS and arg[:1] == "-" and arg[1:2].isdigit():
            out[-1] = f"{out[-1]}={arg}"
        else:
            out.append(arg)
    return out


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(join_negative_times(sys.argv[1:] if argv is None else list(argv)))
    if argv is None:  # the program itself (not a caller in this process): llama.cpp runs supervised
        from smalltown.cli import guard

        if guard.in_child():
            guard.arm()
        elif guard.loads_llama(args):
            return guard.supervise(args, guard.smalltown_command(sys.argv[1:]))
    try:
        if hasattr(args, "backend") and getattr(args, "eval_command", None) != "matrix":  # (it says its own)
            say_ignored(backend_choice(args))  # once, as the command starts: an ignored option is not swallowed
        if args.command == "run":
            from smalltown.cli.run import run

            return run(args)
        if args.command == "world" and args.world_command == "check":
            return world_check(args.path, args.json)
        if args.command == "world" and args.world_command == "generate":
            return generate_cli.world_generate(args)
        if args.command == "save" and args.save_command == "info":
            return save_info(args.path, args.json)
        if args.command in ("world", "save"):
            from smalltown.cli.files import COMMANDS

            return COMMANDS[args.command, args.world_command if args.command == "world" else args.save_command](args)
        if args.command == "models":
            from smalltown.cli.models import models

            return models(args)
        if args.command == "fork":
            from smalltown.cli.fork import fork_command

            return fork_command(args)
        if args.command == "replay":
            return replay(args)
        if args.command == "saves":
            from smalltown.cli.saves import saves_command

            return saves_command(args)
        if args.command in ("why", "calls"):
            from smalltown.cli import calls as calls_cli
            from smalltown.cli import why as why_cli

            try:
                return why_cli.why_command(args) if args.command == "why" else calls_cli.calls_command(args)
            except NoSuchAgent as e:
                print(f"error: {shown(e, lines=True)}", file=sys.stderr)
                return 2  # a misspelt name is a usage error
        if args.command == "eval":
            from smalltown.cli import eval as eval_cli

            return eval_cli.run(args)
        if args.command in ("inspect", "whisper", "interview", "edit-object"):
            from smalltown.cli import agents

            try:
                return getattr(agents, args.command.replace("-", "_"))(args)
            except (agents.UnknownAgent, NoSuchAgent) as e:
                print(f"error: {shown(e, lines=True)}", file=sys.stderr)
                return 2 if isinstance(e, NoSuchAgent) else 1  # a misspelt name is a usage error
    except WorldError as e:
        for problem in e.problems:
            print(shown(problem, lines=True), file=sys.stderr)
        n = len(e.problems)
        print(f"{n} problem{'s' if n != 1 else ''} found", file=sys.stderr)
        return 1
    except (SaveError, BackendUnavailable, SettingsError, OSError) as e:  # (SQLite's errors too: store/errors.py)
        print(f"error: {shown(e, lines=True)}", file=sys.stderr)
        return 2 if isinstance(e, SettingsError) else 1  # (a setting is a usage error)
    except KeyboardInterrupt:  # Ctrl-C before a run's own handler is in place (opening, loading a model)
        print("stopped (Ctrl-C); a save stays at its last whole tick, a new one is made whole or not at all",
              file=sys.stderr)
        return 130
    except Exception as e:  # noqa: BLE001 - the last word: one clear line, never a traceback
        print(f"error: {unexpected(args, e)}", file=sys.stderr)
        return 70
    return 2


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
