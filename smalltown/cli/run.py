"""`smalltown run`: start or continue a simulation, in the TUI or headless."""

from __future__ import annotations

import argparse
import contextlib
import os
import shlex
import signal
import sys
import threading
import time
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path

from rich.console import Console
from rich.table import Table

from smalltown.cli.common import backend_choice
from smalltown.cli.progress import RunProgress
from smalltown.llm.backend import Stopped, capabilities
from smalltown.llm.models import HOW_TO_ADD
from smalltown.shown import shown, shown_text
from smalltown.sim.files import SavePathError
from smalltown.sim.open import RunOptions, SeedError, UntilError, open_run
from smalltown.sim.simulation import Simulation
from smalltown.state.saved import saved_at
from smalltown.store.calls import describe_reasons
from smalltown.world.bundled import default_world


def run(args: argparse.Namespace) -> int:
    target = Path(args.target) if args.target else default_world()
    if not target.exists():
        print(f"error: {shown(target)}: no such world or save", file=sys.stderr)
        return 2
    if not target.is_file():  # a folder, or a named pipe (reading it would wait for a writer)
        print(f"error: {shown(target)}: not a regular file (a world, a pack or a save)", file=sys.stderr)
        return 2
    if args.headless and not args.until:
        print("error: --headless needs --until WHEN (e.g. --until +1d)", file=sys.stderr)
        return 2
    from smalltown.store.checks import is_save

    made = not is_save(target)  # a new save: the calls its creation made (tick 0) are this run's
    early = catch_early_signals()
    try:
        sim, until = open_simulation(target, args, started=early.started)
    except UntilError as e:
        print(f"error: --until: {shown(e)}", file=sys.stderr)
        return 2
    except SavePathError as e:
        print(f"error: --out: {shown(e)}", file=sys.stderr)
        return 2
    except SeedError as e:
        print(f"error: --world-seed: {shown(e)}", file=sys.stderr)
        return 2
    except Stopped:  # a stop while a new save's first memories were rated: creation is whole or nothing
        code = EXIT_CODES.get(early.signals[0], 130) if early.signals else 130
        print(f"stopped ({SIGNAL_NAMES.get(early.signals[0], 'a signal') if early.signals else 'a stop'}) "
              "while the save was being created: nothing was saved", file=sys.stderr)
        leave_if_stuck(code)
        return code
    finally:
        early.restore()
    print(f"saving to {shown(sim.save.path)}", file=sys.stderr)
    if about := capabilities(sim.backend).about:  # how a server is asked (its structured-output mode)
        print(f"{sim.backend.name}: {about}", file=sys.stderr)
    notice = HOW_TO_ADD if args.backend is None and sim.backend.name == "scripted" else None
    if args.headless:
        return run_headless(sim, until, notice, early=early.signals, made=made)
    if early.signals:  # stopped while opening: the TUI is not started
        sim.close()
        return EXIT_CODES.get(early.signals[0], 130)
    return start_tui(sim, until, notice, args)


def start_tui(sim: Simulation, until: datetime | None, notice: str | None, args: argparse.Namespace) -> int:
    """The TUI on `sim`; the files it opens (O), goes on in (S) or rewinds to (r) are opened with
    the same backend and settings (not --out, --overwrite or --until, which were this start's).
    When it ends, says where the save it ended on is and how to go on."""
    from smalltown.tui.session import run_tui

    options = RunOptions(backend=backend_choice(args), sets=args.set or [],
                         say=lambda text: print(text, file=sys.stderr))
    current = [sim.save.path]

    def reopen(path: Path) -> Simulation:
        opened, _ = open_run(path, options)
        current.append(opened.save.path)
        return opened

    try:
        return run_tui(sim, until, notice, reopen, running=args.running)
    finally:
        say_where(current[-1])


def say_where(path: Path) -> None:
    """After the TUI: the save, its last whole tick, and the commands to continue and replay it
    (quoted, to be copied)."""
    try:
        tick, now, _ = saved_at(path)
    except Exception:  # noqa: BLE001 - (a save that could not be read has its own error, above)
        return
    for line in (f"saved in {path} at {now:%Y-%m-%d %H:%M:%S} (tick {tick}, its last whole tick)",
                 *how_to_go_on(path)):
        print(shown(line), file=sys.stderr)  # (a file name may hold anything: shown, not printed raw)


def how_to_go_on(path: Path, until: datetime | None = None) -> list[str]:
    """The commands to continue a save and to replay it, as the TUI's quit and the headless run's
    summary both end (quoted, to be copied); `until`: a headless run stopped before it, continued
    to it."""
    name = shlex.quote(str(path))
    rest = f" --headless --until {shlex.quote(f'{until:%Y-%m-%d %H:%M:%S}')}" if until is not None else ""
    return [f"continue it: smalltown run {name}{rest}", f"replay it:   smalltown replay {name}"]


class EarlySignals:
    """Ctrl-C or SIGTERM while a run opens (a save checked, a model loaded) is remembered, not
    raised: a KeyboardInterrupt can be lost where Python ignores exceptions (a finaliser), and
    then the run would never stop. The run stops before its first tick instead; a second signal
    leaves at once (KeyboardInterrupt, which main reports)."""

    def __init__(self) -> None:
        self.signals: list[int] = []
        self.old: dict = {}
        self.sim: Simulation | None = None  # a new save's, while it is created (its questions are stopped)

    def __call__(self, signum, frame) -> None:
        self.signals.append(signum)
        if len(self.signals) > 1:
            raise KeyboardInterrupt
        if self.sim is not None:
            self.sim.stop()  # (flags and cut connections only: safe in a handler)

    def started(self, sim: Simulation) -> None:
        """A new save's simulation exists: a stop asked for already, or from now on, stops the
        questions its creation asks (they raise Stopped and nothing is saved)."""
        self.sim = sim
        if self.signals:
            sim.stop()

    def restore(self) -> None:
        for s, h in self.old.items():
            signal.signal(s, h)
        self.old = {}


def catch_early_signals() -> EarlySignals:
    early = EarlySignals()
    if threading.current_thread() is threading.main_thread():  # (signals go to the main thread only)
        early.old = {s: signal.signal(s, early) for s in (signal.SIGINT, signal.SIGTERM)}
    return early


def open_simulation(target: Path, args: argparse.Namespace,
                    started=lambda sim: None) -> tuple[Simulation, datetime | None]:
    """The simulation to run and when to stop it: the command line's options, handed to sim/open;
    `started` is given a new save's simulation before its creation asks anything."""
    return open_run(target, RunOptions(started=started,
        backend=backend_choice(args), save=Path(args.save) if args.save else None,
        overwrite=args.overwrite, sets=args.set or [], until=args.until,
        say=lambda text: print(text, file=sys.stderr), world_seed=getattr(args, "world_seed", None)))


EXIT_CODES = {signal.SIGINT: 130, signal.SIGTERM: 143}  # 128 + the signal, as shells report them
SIGNAL_NAMES = {signal.SIGINT: "Ctrl-C", signal.SIGTERM: "SIGTERM"}
STUCK_SECONDS = 3.0  # after a stop, how long the exit waits for a worker a backend has not let go


def run_headless(sim: Simulation, until: datetime, notice: str | None = None,
                 early: list[int] | None = None, made: bool = False) -> int:
    """Run to `until` with a progress bar. Ctrl-C or SIGTERM stops it at once, even mid-answer: the
    tick in flight is dropped, the save stays at the last whole tick (exit 130, or 143 on SIGTERM);
    a second signal leaves immediately, whatever a worker is doing. `made`: the save was created
    by this run, so the summary counts the calls of its creation (tick 0) too."""
    console = Console(stderr=True)
    stop = threading.Event()
    signals: list[int] = []

    def on_signal(signum, frame):
        signals.append(signum)
        if stop.is_set():  # the second: leave now (the save is whole at its last commit)
            os.write(2, f"\nleft at once; the save is at its last whole tick: {shown(sim.save.path)}\n".encode())
            os._exit(EXIT_CODES.get(signals[0], 130))
        stop.set()
        sim.stop()  # cuts off the answer in flight: no waiting for the tick
        console.print(f"[yellow]stopping ({SIGNAL_NAMES.get(signum, signum)}): the tick in flight is dropped… "
                      "(again to leave at once)[/]")

    old = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    if early:  # a stop asked for while the run was opening: no tick is run
        signals.extend(early)
        stop.set()
    start_tick, start_time = sim.tick, sim.now
    total = max(0, int((until - sim.now).total_seconds() // sim.world.step_seconds))
    kinds: Counter[str] = Counter()
    t0 = time.perf_counter()
    failed = False
    try:
        with RunProgress(console, sim, total):  # (drawn from sim, also while a call takes minutes)
            sim.run_until(until, stop=stop.is_set, on_tick=lambda events: kinds.update(e.kind for e in events))
    except BaseException as e:
        failed = True  # (main says what went wrong, after the summary)
        with contextlib.suppress(AttributeError):
            e.while_running = True  # type: ignore[attr-defined] - a failure of the run (exit 1), not a refusal
        raise
    finally:
        wall = time.perf_counter() - t0
        why = SIGNAL_NAMES.get(signals[0], "a signal") if signals else "an error, below" if failed else ""
        summarise(console, sim, start_time, start_tick, wall, kinds, interrupted=why, until=until,
                  calls_after=-1 if made else start_tick)
        if notice:
            console.print(shown_text(notice, "dim"))  # it names a folder: not markup
        sim.close()
        if not signals:  # (after a stop, a second signal while this winds up still leaves at once)
            for s, h in old.items():
                signal.signal(s, h)
    if not signals:
        return 0
    code = EXIT_CODES.get(signals[0], 130)
    leave_if_stuck(code)
    return code


def leave_if_stuck(code: int) -> None:
    """After a stop, exit now if a worker thread is still held by a backend (a connection that
    will not close): the interpreter would otherwise wait for it at exit. The save is closed."""
    deadline = time.monotonic() + STUCK_SECONDS
    for t in threading.enumerate():
        if t is not threading.current_thread() and not t.daemon:
            t.join(max(0.0, deadline - time.monotonic()))
    if any(t.is_alive() and not t.daemon for t in threading.enumerate() if t is not threading.current_thread()):
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def summarise(console: Console, sim: Simulation, start: datetime, start_tick: int, wall: float,
              kinds: Counter[str], interrupted: str = "", until: datetime | None = None,
              calls_after: int | None = None) -> None:
    """The end-of-run table; `calls_after`: the tick after which the calls counted were made
    (default `start_tick`; -1 for a save this run created: its creation's calls are at tick 0)."""
    try:  # the last whole tick: a tick cut off by an error is not in the save
        tick = int(sim.save.meta("tick"))
    except Exception:  # (the error being reported may be the save's own)
        tick = sim.tick
    now = sim.world.start + timedelta(seconds=tick * sim.world.step_seconds)
    game = (tick - start_tick) * sim.world.step_seconds
    t = Table(title=f"stopped early ({interrupted}); the save is intact at its last whole tick" if interrupted
              else "run complete",
              show_header=False, box=None)
    t.add_row("world", shown_text(sim.world.name))
    t.add_row("save", shown_text(sim.save.path))
    t.add_row("backend", shown_text(f"{sim.backend.name} ({sim.backend.model})" if sim.backend.model != sim.backend.name
              else sim.backend.name))
    after = start_tick if calls_after is None else calls_after
    saved = sim.save.reader()
    calls = saved.call_totals(after)
    if calls.calls:
        cached = f", {calls.cached_tokens / calls.prompt_tokens:.0%} of prompt tokens from cache" \
            if calls.prompt_tokens else ""
        t.add_row("model calls", f"{calls.calls:,} ({calls.noted} with a fallback or note{cached})")
        if reasons := saved.fallbacks_after(after):  # ("failed": the server failed every attempt)
            t.add_row("fallbacks", describe_reasons(reasons))
    t.add_row("game time", f"{start:%Y-%m-%d %H:%M:%S} → {now:%Y-%m-%d %H:%M:%S} ({tick - start_tick} ticks)")
    t.add_row("wall time", f"{wall:.1f} s ({game / wall if wall else 0:,.0f} game seconds per second)")
    t.add_row("events", ", ".join(f"{k} {v}" for k, v in kinds.most_common()) or "none")
    console.print(t)
    for line in how_to_go_on(sim.save.path, until if interrupted and until is not None and now < until else None):
        console.print(shown_text(line), soft_wrap=True)  # one line each, to copy
