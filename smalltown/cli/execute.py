"""Running one command: supervised when it loads llama.cpp, every error said in one line, and
the exit code it ends with (docs/cli.md): 0 ok, 1 failed, 2 a usage error or input refused,
130 and 143 stopped by Ctrl-C and SIGTERM, 70 a bug."""

from __future__ import annotations

import argparse
import errno
import sys
from typing import Any, Callable

import click

from smalltown.cli.options import FAILED, REFUSED, STOPPED_INT, namespace

BUG_CODE = 70  # an exception no command expected (EX_SOFTWARE): a bug, said as one


def handle(command: str, handler: Callable[[argparse.Namespace], int], **params: Any) -> int:
    """A command's parameters handed to the function that does its work, under `execute`."""
    return execute(namespace(command, **params), handler)


def execute(args: argparse.Namespace, handler: Callable[[argparse.Namespace], int]) -> int:
    """Run one command's `handler` on its parameters: supervised when it loads llama.cpp (as the
    program itself, not a caller in this process), every error said in one line with its code."""
    # (imported here, as a command runs: `smalltown --help` need not load the backends)
    from smalltown.cli.common import backend_choice, say_ignored
    from smalltown.config import SettingsError
    from smalltown.llm.backend import BackendUnavailable
    from smalltown.shown import shown
    from smalltown.store.save import SaveError
    from smalltown.world.errors import WorldError
    from smalltown.world.names import NoSuchAgent

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
        say_problems(e)
        return FAILED if failed_while_working(e) else REFUSED  # (a world refused; a disk full as it is written)
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


def say_problems(e: Any) -> None:
    """A refused world's problems (world.errors.WorldError), one each, then how many."""
    from smalltown.shown import shown

    for problem in e.problems:
        print(shown(problem, lines=True), file=sys.stderr)
    n = len(e.problems)
    print(f"{n} problem{'s' if n != 1 else ''} found", file=sys.stderr)


# errors of the machine, not of what the user gave: a full disk or quota, a file too big, a failing device
MACHINE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO, errno.ENOMEM})


def failed_while_working(e: BaseException) -> bool:
    """Whether `e` is a failure of the work (exit 1), not a refusal of what the user gave (exit 2):
    the machine failing (a full disk, a device: an OSError or SQLite's word for one anywhere in
    what led to it), SQLite failing on a save that is not damaged, a server failing mid-request,
    or any error once a run was under way (`while_running`: a backend gone, a cassette that ran
    out). A missing or bad file, a model that is not there, a backend lacking what it needs, a
    server not answering as the run starts: refused (2)."""
    from smalltown.llm.wrappers import Transient
    from smalltown.store.errors import SQLiteError

    seen: set[int] = set()
    x: BaseException | None = e
    while x is not None and id(x) not in seen:
        seen.add(id(x))
        if getattr(x, "while_running", False) or isinstance(x, Transient):
            return True
        if isinstance(x, OSError) and x.errno in MACHINE_ERRNOS:
            return True
        if isinstance(x, SQLiteError) and not any(w in x.said for w in ("malformed", "not a database")):
            return True
        if type(x).__module__ == "sqlite3" and any(w in str(x) for w in ("full", "I/O error", "locked", "busy")):
            # (SQLite's own error behind a store error: told by its module, SQL lives in store/)
            return True
        x = x.__cause__ or x.__context__
    return False


BUG = "this is a bug in smalltown: please report it"


def unexpected(args: argparse.Namespace, e: BaseException) -> str:
    """An exception no command expected, as one line: which command, which file, what went wrong."""
    command = " ".join(str(getattr(args, k)) for k in ("command", "world_command", "save_command", "eval_command")
                       if getattr(args, k, None))
    files = [str(getattr(args, k)) for k in ("save", "path", "target", "world") if getattr(args, k, None)]
    on = f" on {files[0]}" if files else ""
    from smalltown.shown import shown

    return shown(f"smalltown {command}{on} failed: {type(e).__name__}: {str(e)[:200]} ({BUG})")
