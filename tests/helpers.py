"""Paths and small helpers the tests share (tests import this, not each other)."""

from __future__ import annotations

import time
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:  # imported when used: conftest imports this module for every test
    from textual.pilot import Pilot

    from smalltown.sim.simulation import Simulation

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "worlds" / "tiny.toml"
SMALLVILLE = ROOT / "worlds" / "smallville.toml"
GULLHAVEN = ROOT / "worlds" / "gullhaven.toml"


def tiny_sim(tmp_path: Path, until: str | None = None) -> "Simulation":
    """The tiny town on the scripted backend, in tmp_path/tiny.sqlite (a fixed file name: the TUI's
    header shows it, and snapshots must not depend on tmp_path). With `until` ("07:10", a clock
    time on the first day), it is run there first: the town sleeps until its agents' waking hours
    (Isabella at 06:00, Klaus at 07:00, Maria at 08:00), so a test of what an agent does starts
    near it instead of ticking through the night in the app."""
    from smalltown.cli.when import parse_when
    from smalltown.scripted import ScriptedBackend
    from smalltown.sim.simulation import Simulation
    from smalltown.world.load import load_world

    world = load_world(TINY)
    sim = Simulation.create(world, tmp_path / "tiny.sqlite", ScriptedBackend(world.seed), overwrite=True)
    if until is not None:
        sim.run_until(parse_when(until, sim.now, world.start))
    return sim


async def wait_until(pilot: "Pilot", cond: Callable[[], bool], seconds: float = 5.0) -> None:
    """Poll while letting the app process messages (a worker may tick on its own thread)."""
    deadline = time.monotonic() + seconds
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting for the app")
        await pilot.pause(0.02)


def run_until_after(sim: "Simulation", done: Callable[[], bool], then: timedelta = timedelta(minutes=10),
                    within: timedelta = timedelta(days=3)) -> None:
    """Run `sim` until `done()` (checked between ticks), then `then` more game time. A test that
    needs something to have happened in the town (a conversation, a reflection) waits for it,
    rather than knowing the hour at which the town's current tuning makes it happen."""
    start = sim.now
    sim.run_until(start + within, stop=done)
    if not done():
        raise AssertionError(f"not happened in the {within} of game time from {start}")
    sim.run_until(sim.now + then)


class Hang(BaseException):
    """A command over its time limit (a BaseException: no `except Exception` in the CLI swallows it)."""


def cli_within(capsys, argv: list, limit: float) -> tuple[int, str]:
    """`smalltown ARGV` in this process, failing with Hang past `limit` seconds; its exit code and
    what it printed."""
    import signal

    from smalltown.cli.main import main

    def hang(signum, frame):
        raise Hang(f"smalltown {' '.join(map(str, argv))}: over {limit} s")

    old = signal.signal(signal.SIGALRM, hang)
    signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        rc = main([str(a) for a in argv])
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    out = capsys.readouterr()
    return rc, out.out + out.err


def forked(work: Callable[[], int], stdout: Path | str, stderr: Path | str, append: bool = False) -> int:
    """Run `work` in a child forked from this process (a real process, which a test may kill,
    without an interpreter's start-up), its output to the files named; returns the child's pid.
    The child exits with what `work` returns (70 and a traceback in STDERR if it raised)."""
    import os
    import sys

    import smalltown.cli.agents  # noqa: F401  (imported once, here, for every child)
    import smalltown.cli.files  # noqa: F401
    import smalltown.cli.run  # noqa: F401

    pid = os.fork()
    if pid == 0:
        code = 70
        try:
            mode = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if append else os.O_TRUNC)
            os.dup2(os.open(stdout, mode, 0o644), 1)
            os.dup2(os.open(stderr, mode, 0o644), 2)
            sys.stdout, sys.stderr = open(1, "w", closefd=False), open(2, "w", closefd=False)  # (not pytest's)
            code = work()
        except BaseException:
            import traceback

            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    return pid


def exit_code(pid: int) -> int:
    """The exit code of a forked child (minus the signal that ended it)."""
    import os

    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def file_sha(path: Path) -> str:
    """The sha256 of a file's bytes, read in blocks (to tell that a command changed nothing)."""
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
