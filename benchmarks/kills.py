"""Benchmark: kill `smalltown` at random moments and check that nothing is ever lost.

Each trial starts a real process (forked from this one, which has imported smalltown already, so
a kill can land in its first milliseconds), SIGKILLs it at a random moment, then recovers as a
user would: a file at the target is checked (`save check`) and continued to the scenario's end;
no file means the original command is run again. Every recovered save must end with the state
digest (`smalltown save info` prints the same one) of the same command run without a kill.

Scenarios, each killed at moments drawn from a seeded RNG:
  create    `run WORLD --save S --until +10m`: in the first 100 ms of the process, just after
            the new save's file appears (the creation window), or at a tick of the first game
            minute (0-6)
  save-as   `run BIG --save NEW --until +10m`: a copy of a bigger save, then its run
  fork      `fork BIG --at "day 1 12:00" --to F`, continued to 10 minutes after the fork

    python benchmarks/kills.py [--kills 150] [--world worlds/tiny.toml] [--smallville 40] [--seed N]

Prints, per scenario, how many kills landed in which state (nothing written yet, a partial file,
a save) and the failures: saves that could not be continued or re-run, digests that differ from
the uninterrupted run, files left behind (NAME.partial, a lock). All three must be 0.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import sqlite3
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from helpers import forked  # noqa: E402  (the tests' forked child, which the kill tests use too)

SCENARIOS = ("create", "save-as", "fork")
MINUTES = 10  # game minutes each recovered run goes on to


@dataclass
class Tally:
    kills: int = 0
    states: Counter = field(default_factory=Counter)  # what a kill left: nothing, partial, save tick N
    unrecoverable: list[str] = field(default_factory=list)  # could not be continued or re-run
    digests: list[str] = field(default_factory=list)  # ended elsewhere than the uninterrupted run
    leftovers: list[str] = field(default_factory=list)  # files left beside the save after recovery
    originals: list[str] = field(default_factory=list)  # the save copied or forked from was changed
    seconds: float = 0.0

    @property
    def failures(self) -> int:
        return len(self.unrecoverable) + len(self.digests) + len(self.leftovers) + len(self.originals)


# --- processes ---------------------------------------------------------------------------------


def spawn(argv: list[str], log: Path) -> int:
    """`smalltown ARGV` in a forked child (stdout dropped, stderr to `log`); its pid. The commands'
    modules are imported here first, so a kill early in the child lands in the command itself."""
    import smalltown.cli.fork  # noqa: F401
    from smalltown.cli.main import main

    return forked(lambda: main(argv), os.devnull, log, append=True)


def finish(pid: int, timeout: float = 300) -> int:
    """Wait for a child; its exit code (-signal if killed)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.005)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    raise TimeoutError(f"pid {pid} did not finish in {timeout:g} s")


def smalltown(argv: list[str], log: Path) -> int:
    return finish(spawn(argv, log))


def tick_of(path: Path) -> int:
    """The committed tick of a save being written (-1: not there, or not a save yet)."""
    if not path.exists():
        return -1
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=0.05)
        try:
            return int(conn.execute("SELECT value FROM meta WHERE key='tick'").fetchone()[0])
        finally:
            conn.close()
    except (sqlite3.Error, TypeError, ValueError):
        return -1


def kill_when(pid: int, moment, deadline: float = 60) -> bool:
    """SIGKILL the child once `moment()` says so; False if it had already finished."""
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return False
        if moment():
            break
        time.sleep(0.0005)
    os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    return os.WIFSIGNALED(status)


# --- the states a kill leaves, and recovering from them ----------------------------------------


def digest(path: Path) -> str:
    from smalltown.store.save import Save

    save = Save.open(path, readonly=True)
    try:
        return save.digest()
    finally:
        save.close()


def state_of(path: Path, base: int = 0, step: int = 10) -> str:
    """What a kill left at `path`, for a command that starts its save at tick `base`."""
    if path.exists():
        tick = tick_of(path)
        if tick < 0:
            return "an unreadable file"
        if tick == base:
            return f"a save at its first tick ({tick})"
        if tick - base <= 60 // step:
            return "a save in its first game minute"
        return "a save, later"
    if Path(f"{path}.partial").exists():
        return "a partial file (not yet at its name)"
    return "nothing"


def leftovers(folder: Path, keep: set[str]) -> list[str]:
    """Files beside the saves that a finished command should not leave: a build's .partial, a lock."""
    allowed = {f"{k}{s}" for k in keep for s in ("", "-wal", "-shm")}
    return sorted(p.name for p in folder.iterdir() if p.name not in allowed)


def recover(target: Path, again: list[str], go_on: list[str], log: Path, tally: Tally, what: str) -> bool:
    """After a kill: a file at `target` is checked and continued (`go_on`); none, and the original
    command (`again`) is run again, then `go_on`. False (and tallied) if either fails."""
    from smalltown.sim.check import check_save

    if target.exists():
        try:
            problems = check_save(target).problems
        except Exception as e:  # (SaveError: refused outright)
            problems = [str(e)]
        if problems:
            tally.unrecoverable.append(f"{what}: save check: {problems[:3]}")
            return False
    elif smalltown(again, log) != 0:
        tally.unrecoverable.append(f"{what}: re-running failed: {log.read_text()[-500:]}")
        return False
    if go_on and smalltown(go_on, log) != 0:
        tally.unrecoverable.append(f"{what}: continuing failed: {log.read_text()[-500:]}")
        return False
    return True


# --- scenarios ---------------------------------------------------------------------------------


class Scenario:
    def __init__(self, name: str, world: Path, work: Path, big: Path | None):
        from smalltown.world.load import load_world

        self.name, self.world, self.work, self.big = name, world, work, big
        w = load_world(world)
        self.start, self.step = w.start, w.step_seconds
        self.log = work / "log"
        self.reference: str | None = None
        self.big_digest = digest(big) if big is not None else None
        # the tick the command's save starts at: a new run's 0, the copy's, the fork's
        self.fork_at = self.start.replace(hour=12, minute=0, second=0)  # (on day 1)
        self.base = {"create": 0, "save-as": tick_of(big) if big else 0,
                     "fork": int((self.fork_at - self.start).total_seconds()) // self.step}[name]

    def target(self, folder: Path) -> Path:
        return folder / {"create": "s.sqlite", "save-as": "new.sqlite", "fork": "f.sqlite"}[self.name]

    def argv(self, target: Path) -> list[str]:
        if self.name == "create":
            end = self.start + timedelta(minutes=MINUTES)
            return ["run", "--headless", str(self.world), "--until", f"{end:%Y-%m-%d %H:%M:%S}", "--save",
                    str(target), "--backend", "scripted"]
        if self.name == "save-as":
            return ["run", "--headless", str(self.big), "--save", str(target), "--until", self.big_end(),
                    "--backend", "scripted"]
        return ["fork", str(self.big), "--at", f"{self.fork_at:%Y-%m-%d %H:%M:%S}", "--to", str(target)]

    def go_on(self, target: Path) -> list[str]:
        if self.name == "create":
            end = self.start + timedelta(minutes=MINUTES)
        elif self.name == "save-as":
            return ["run", "--headless", str(target), "--until", self.big_end(), "--backend", "scripted"]
        else:
            end = self.fork_at + timedelta(minutes=MINUTES)
        return ["run", "--headless", str(target), "--until", f"{end:%Y-%m-%d %H:%M:%S}", "--backend", "scripted"]

    def big_end(self) -> str:
        from smalltown.store.save import Save

        save = Save.open(self.big, readonly=True)
        try:
            tick = save.meta("tick")
        finally:
            save.close()
        end = self.start + timedelta(seconds=tick * self.step, minutes=MINUTES)
        return f"{end:%Y-%m-%d %H:%M:%S}"

    def uninterrupted(self) -> str:
        folder = self.work / "reference"
        folder.mkdir()
        target = self.target(folder)
        assert smalltown(self.argv(target), self.log) == 0, self.log.read_text()[-2000:]
        if self.name == "fork":
            assert smalltown(self.go_on(target), self.log) == 0, self.log.read_text()[-2000:]
        return digest(target)

    def moment(self, rng: random.Random, target: Path):
        """When to kill: early in the process, just after the new file appears, or (creating) at a
        tick of the first game minute."""
        t0 = time.monotonic()
        kind = rng.choice(("early", "appears", "minute") if self.name == "create" else ("early", "appears"))
        if kind == "early":
            at = rng.uniform(0, 0.1 if self.name == "create" else 0.25)
            return kind, lambda: time.monotonic() - t0 >= at
        if kind == "appears":
            after, seen = 10 ** rng.uniform(-4, -1.3), []  # 0.1 to 50 ms, as many under 1 ms as over 10

            def appeared() -> bool:
                if not seen and (Path(f"{target}.partial").exists() or target.exists()):
                    seen.append(time.monotonic())
                return bool(seen) and time.monotonic() - seen[0] >= after
            return kind, appeared
        k = rng.randint(0, 60 // self.step)
        return f"minute (tick {k})", lambda: tick_of(target) >= k

    def trial(self, i: int, rng: random.Random, tally: Tally) -> None:
        folder = self.work / f"{i:03d}"
        folder.mkdir()
        target = self.target(folder)
        kind, moment = self.moment(rng, target)
        pid = spawn(self.argv(target), self.log)
        if not kill_when(pid, moment):
            shutil.rmtree(folder)
            return  # finished before the moment came: not a kill
        tally.kills += 1
        left = state_of(target, self.base, self.step)
        tally.states[left] += 1
        what = f"{self.name} #{i} ({kind}, left {left})"
        go_on = self.go_on(target)
        if self.name == "fork":  # a fork that exists is a finished one: continue it, as the reference was
            ok = recover(target, self.argv(target), go_on, self.log, tally, what)
        else:
            ok = recover(target, self.argv(target), go_on if target.exists() else [], self.log, tally, what)
        if ok:
            got = digest(target)
            if got != self.reference:
                tally.digests.append(f"{what}: digest {got[:12]} != {self.reference[:12]}")
            extra = leftovers(folder, {target.name})
            if extra:
                tally.leftovers.append(f"{what}: {extra}")
        if self.big is not None and digest(self.big) != self.big_digest:
            tally.originals.append(f"{what}: {self.big} changed")
        shutil.rmtree(folder)


def make_big(world: Path, work: Path) -> Path:
    """The save copied and forked from: a game day and a half of `world`."""
    big = work / "big.sqlite"
    assert smalltown(["run", "--headless", str(world), "--until", "+1d12h", "--save", str(big),
                      "--backend", "scripted"], work / "log") == 0, (work / "log").read_text()[-2000:]
    return big


def run_kills(world: Path, kills: dict[str, int], seed: int = 20230213, work: Path | None = None) -> dict[str, Tally]:
    """Kill each scenario `kills[name]` times; the tallies by scenario."""
    rng = random.Random(seed)
    own = work is None
    work = Path(tempfile.mkdtemp(prefix="smalltown-kills-")) if own else work
    try:
        big = make_big(world, work) if any(kills.get(s) for s in ("save-as", "fork")) else None
        out = {}
        for name in SCENARIOS:
            if not kills.get(name):
                continue
            t0 = time.monotonic()
            (work / name).mkdir()
            scenario = Scenario(name, world, work / name, big)
            scenario.reference = scenario.uninterrupted()
            tally = Tally()
            i = 0
            while tally.kills < kills[name] and i < kills[name] * 3:
                scenario.trial(i, rng, tally)
                i += 1
            tally.seconds = time.monotonic() - t0
            out[name] = tally
        return out
    finally:
        if own:
            shutil.rmtree(work, ignore_errors=True)


def report(world: Path, tallies: dict[str, Tally]) -> str:
    lines = [f"{world.name}:"]
    for name, t in tallies.items():
        lines.append(f"  {name:8} {t.kills:4} kills in {t.seconds:5.1f} s; unrecoverable {len(t.unrecoverable)}, "
                     f"digest differences {len(t.digests)}, files left behind {len(t.leftovers)}, "
                     f"originals changed {len(t.originals)}")
        for state, n in sorted(t.states.items(), key=lambda kv: -kv[1]):
            lines.append(f"           {n:4}  left {state}")
        for problem in (*t.unrecoverable, *t.digests, *t.leftovers, *t.originals)[:10]:
            lines.append(f"           ! {problem}")
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--kills", type=int, default=150, help="kills of the first world, over the three scenarios")
    p.add_argument("--world", default=str(ROOT / "worlds" / "tiny.toml"))
    p.add_argument("--smallville", type=int, default=40,
                   help="kills of Smallville's creation and first minute besides (0: none)")
    p.add_argument("--seed", type=int, default=20230213)
    args = p.parse_args()
    share = {"create": args.kills // 2, "save-as": args.kills // 4, "fork": args.kills - args.kills // 2 - args.kills // 4}
    total = failures = 0
    runs = [(Path(args.world), share)]
    if args.smallville:
        runs.append((ROOT / "worlds" / "smallville.toml", {"create": args.smallville}))
    for world, kills in runs:
        tallies = run_kills(world, kills, args.seed)
        print(report(world, tallies), flush=True)
        total += sum(t.kills for t in tallies.values())
        failures += sum(t.failures for t in tallies.values())
    print(f"{total} kills; {failures} failures")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
