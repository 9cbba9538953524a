"""Paths and small helpers the tests share (tests import this, not each other)."""

from __future__ import annotations

import html
import json
import os
import re
import sqlite3
import subprocess
import sys
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
BAD = ROOT / "tests" / "worlds_bad"  # each bad_*.toml declares on its first line what loading it reports
BAD_WORLDS = sorted(BAD.glob("bad_*.toml"))

_EXPECT = re.compile(r"^# expect: (?:(?P<file>[^\s:]*[^\s:\d][^\s:]*):)?(?P<line>\d+)(?::(?P<col>\d+))? (?P<text>.+)$")


def expectation(path: Path) -> tuple[str, int, int | None, str]:
    """What a bad world declares on its first line: `# expect: [FILE:]LINE[:COL] SUBSTRING`."""
    first = path.read_text(encoding="utf-8").split("\n", 1)[0]
    m = _EXPECT.match(first)
    assert m, f"{path.name}: the first line must be '# expect: [FILE:]LINE[:COL] SUBSTRING', got {first!r}"
    col = int(m["col"]) if m["col"] else None
    return m["file"] or path.name, int(m["line"]), col, m["text"].strip()


def smalltown(*args: str, check: bool = False, timeout: float = 600) -> subprocess.CompletedProcess:
    """Run the real command line, as a user would."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-m", "smalltown", *map(str, args)], capture_output=True,
                          text=True, timeout=timeout, env=env, cwd=ROOT)
    if check and proc.returncode != 0:
        raise AssertionError(f"smalltown {' '.join(map(str, args))} -> {proc.returncode}\n{proc.stderr}")
    return proc


def cli(*args: object, check: bool = False) -> subprocess.CompletedProcess:
    """The command line run in this process (`main` with its output captured), for a test that is
    about what a command does, not about a process: an interpreter's start-up costs more than most
    commands. What it returns reads as `smalltown`'s does (`main` returns the exit code)."""
    import contextlib
    import io

    from smalltown.cli.main import main

    argv = [str(a) for a in args]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(argv)
    proc = subprocess.CompletedProcess(["smalltown", *argv], rc, out.getvalue(), err.getvalue())
    if check and rc != 0:
        raise AssertionError(f"smalltown {' '.join(argv)} -> {rc}\n{proc.stderr}")
    return proc


def refused_code(argv) -> int:
    """The exit code of a command refusing its input (docs/cli.md): 2, but 1 from the checks
    (`world check`, `save check`), whose job is to fail a bad file."""
    return 1 if [str(a) for a in argv[:2]] in (["world", "check"], ["save", "check"]) else 2


def save_info(path: Path) -> dict:
    """`smalltown save info PATH --json`, read in this process (a read needs no process of its own:
    an interpreter's start-up costs more than the read)."""
    import contextlib
    import io

    from smalltown.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(["save", "info", str(path), "--json"])
    if rc != 0:
        raise AssertionError(f"smalltown save info {path} -> {rc}\n{err.getvalue()}")
    return json.loads(out.getvalue())


def save_digest(path: Path) -> str:
    """A save's digest, read without a process (as `save info` computes it)."""
    from smalltown.store.save import Save

    save = Save.open(path, readonly=True)
    try:
        return save.digest()
    finally:
        save.close()


# the tiny town given an economy (issue 17): the second world the economy's mechanisms are checked on
TINY_ECONOMY = """
[economy]
items = ["flowers", "coffee beans", "coffee"]
chest = "Hobbs Cafe:cafe:cafe counter"
sources = [{ item = "flowers", at = "Johnson Park:park", qty = 1 }, { item = "coffee beans", at = "Hobbs Cafe:cafe", qty = 2 }]
recipes = [{ output = "coffee", inputs = {"coffee beans" = 1}, at = "Hobbs Cafe", minutes = 5 }]
inventory = {"Maria Lopez" = {coffee = 1}, "Klaus Mueller" = {flowers = 2}}
"""


def ledger_holdings(world, rows) -> dict:
    """Holdings computed apart from the engine (sim/economy.py): the world's starting inventories
    plus the save's ledger rows, every count kept (a negative one would be a bug to catch)."""
    from collections import Counter

    held = {h: Counter(inv) for h, inv in world.economy.starting().items()}
    for _id, _t, _time, _kind, giver, taker, item, qty, _note in rows:
        if giver:
            held.setdefault(giver, Counter())[item] -= qty
        if taker:
            held.setdefault(taker, Counter())[item] += qty
    return held


def civics_table(influencers: list[str] | tuple[str, ...], manager: str = "Lio Corwin", extra: str = "") -> str:
    """A [civics] table for a test world (issue 17): a 20% constitution, Sid's two sides as short
    stances, and `extra` lines (a timeline, a persuasion step) after them."""
    return (f"""
[civics]
constitution = "Everyone pays the town its share: 20% of what each holds, each tax season, into the town chest."
tax_rate = 20
influencers = {json.dumps(list(influencers))}
election_manager = "{manager}"
stances = {{anti = "believes taxes are too high and argues to cut them", pro = "believes the tax keeps the town alive and argues to raise it"}}
""" + extra)


def market_with(table: str, edit: tuple[str, str] | None = None):
    """The market town with `table` (e.g. a [civics]) before its agents, and `edit` (old, new) made
    in its text: (the world, the text)."""
    from smalltown.world.load import load_world_text

    text = (ROOT / "worlds" / "market.toml").read_text()
    i = text.index("[[agents]]")
    text = text[:i] + table + "\n" + text[i:]
    if edit:
        assert edit[0] in text
        text = text.replace(edit[0], edit[1], 1)
    m = ROOT / "maps" / "market.toml"
    return load_world_text("market.toml", text, m.name, m.read_text()), text


def query(path: Path, sql: str, *params) -> list[tuple]:
    """Read a save without ever creating it (a plain connect would make an empty file)."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def stored_state(conn: sqlite3.Connection, name: str) -> dict:
    """An agent's state as a save keeps it, whole (its plan put back from the plans table)."""
    from smalltown.store.plans import agent_rows

    return json.loads(agent_rows(conn, name=name)[0][6])


def store_state(conn: sqlite3.Connection, name: str, state: dict) -> None:
    """Hand-write an agent's whole state into its row (plan and all, the plans table's row
    dropped), as a stranger or an older version may have."""
    conn.execute("UPDATE agents SET state = ? WHERE name = ?", (json.dumps(state), name))
    conn.execute("DELETE FROM plans WHERE agent = ?", (name,))


def stopped_and_resumed(path: Path, sets: list[str], stop: Callable[["Simulation"], bool],
                        held: Callable[["Simulation"], bool], hours: float) -> str:
    """The tiny town run with `sets` until `stop` holds, closed, resumed (where `held` must still
    hold), and run on to `hours` after its start: the resumed run's digest."""
    from smalltown.scripted import ScriptedBackend
    from smalltown.sim.open import create, resume
    from smalltown.world.load import load_world

    world = load_world(TINY)
    sim = create(world, path, ScriptedBackend(world.seed), sets=sets)
    try:
        while not stop(sim):
            sim.step()
    finally:
        sim.close()
    again = resume(path, ScriptedBackend(world.seed))
    try:
        assert held(again)
        again.run_until(world.start + timedelta(hours=hours))
        return again.save.digest()
    finally:
        again.close()


def server_hour(path: Path, url: str, concurrency: int, sets: list[str]) -> str:
    """A game hour of the tiny town against the OpenAI-compatible server at `url`: the save's digest."""
    from smalltown.cli.backends import BackendOptions, make_backend, make_fallback
    from smalltown.sim.open import create
    from smalltown.world.load import load_world

    world = load_world(TINY)
    opts = BackendOptions(base_url=url, concurrency=concurrency, timeout=30, retries=0)
    sim = create(world, path, make_backend("openai", world.seed, opts),
                 fallback=make_fallback("openai", world.seed, opts), sets=sets)
    try:
        sim.run_until(sim.now + timedelta(hours=1))
        return sim.save.digest()
    finally:
        sim.close()


def tiny_sim(tmp_path: Path, until: str | None = None) -> "Simulation":
    """The tiny town on the scripted backend, in tmp_path/tiny.sqlite (a fixed file name: the TUI's
    header shows it, and snapshots must not depend on tmp_path). With `until` ("07:10", a clock
    time on the first day), it is run there first: the town sleeps until its agents' waking hours
    (Isabella at 06:00, Klaus at 07:00, Maria at 08:00), so a test of what an agent does starts
    near it instead of ticking through the night in the app."""
    from smalltown.sim.clock import parse_when
    from smalltown.scripted import ScriptedBackend
    from smalltown.sim.open import create
    from smalltown.world.load import load_world

    world = load_world(TINY)
    sim = create(world, tmp_path / "tiny.sqlite", ScriptedBackend(world.seed), overwrite=True)
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


# --- hostile text (issue 12): what must never reach a terminal raw, and how to look -------------

AGENT = "Isabella Rodriguez"
LINK = "[link=file:///etc/passwd]L[/link]"

# What must never reach a terminal raw: C0 controls but newline (tab included: the checks look at
# text shown, where a tab is made spaces), DEL, C1 controls, bidirectional controls, line and
# paragraph separators.
RAW = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")

FRAGMENTS = (
    "[/bold]", "[/]", "[red]", "[bold red on white]", "[b]", "[i]", LINK, "[link=https://x.invalid]",
    "[@click=app.quit]q[/]", "[$accent]", ":smile:", "\\[", "[", "]",
    "\x1b]0;pwned\x07",  # OSC: set the window title
    "\x1b]8;;file:///etc/passwd\x1b\\a link\x1b]8;;\x1b\\",  # OSC 8: a hyperlink
    "\x1b[2J", "\x1b[H", "\x1b[3J", "\x1bc",  # clear the screen, cursor home, clear scrollback, reset
    "\x1b[5A", "\x1b[10;10H", "\x1b[31m", "\x1b7", "\x1b8",  # cursor moves, colour, save / restore
    "\x07", "\x00", "\x08", "\r", "\x0b", "\x0c", "\x7f", "\t",  # bell, NUL, backspace, CR, VT, FF, DEL
    "\x9b2J", "\x9d0;t\x9c", "\x85", "\x90q\x9c",  # C1: CSI, OSC .. ST, NEL, DCS
    "\u202e", "\u202d", "\u2066", "\u2069", "\u200f", "\u2028", "\u2029",  # bidi, separators
    "plain words", "Ann", " ",
)

OBJECT = "Hobbs Cafe:cafe:coffee machine"  # an object of the tiny town


def assert_safe(out: str, *expected: str) -> None:
    """No raw control character in `out`, no traceback, and each of `expected` shown in it."""
    bad = RAW.search(out)
    assert bad is None, f"raw {bad.group()!r} in the output: …{out[max(0, bad.start() - 60):bad.end() + 60]!r}…"
    assert "Traceback" not in out
    for text in expected:
        assert text in out, f"{text!r} not shown in:\n{out[:3000]}"


def hostile_world(tmp_path: Path, name: str, news: str = "") -> Path:
    """The tiny town with Isabella renamed (and its party's news and gathering)."""
    def toml(s: str) -> str:  # in a TOML string: a control character only as an escape
        return json.dumps(s)[1:-1]

    text = TINY.read_text(encoding="utf-8").replace(AGENT, toml(name))
    text = text.replace('name = "The tiny town"', f'name = "{toml(name)} town"')
    if news:
        for key in ("name", "fact"):
            text = text.replace(f'{key} = "party"', f'{key} = "{toml(news)} fact"')
        text = text.replace('name = "Valentine\'s Day party"', f'name = "{toml(news)} gathering"')
    path = tmp_path / "worlds" / "hostile.toml"
    path.parent.mkdir()
    path.write_text(text.replace('map = "../maps/tiny.toml"', f'map = "{TINY.parent.parent / "maps" / "tiny.toml"}"'),
                    encoding="utf-8")
    return path


def screen_text(app) -> str:
    """What the screen shows, line by line (from its SVG export: the same lines as drawn)."""
    svg = app.export_screenshot()
    assert RAW.search(svg) is None, f"raw {RAW.search(svg).group()!r} drawn on the screen"
    rows: dict[str, list[str]] = {}
    for y, text in re.findall(r'<text [^>]*?y="([\d.]+)"[^>]*>(.*?)</text>', svg, re.S):
        rows.setdefault(y, []).append(html.unescape(re.sub(r"<[^>]+>", "", text)).replace("\xa0", " "))
    return "\n".join("".join(parts) for _, parts in sorted(rows.items(), key=lambda r: float(r[0])))


def terminal_bytes(app) -> str:
    """What the app would write to the terminal for its whole screen, with Textual's own cursor
    moves and colours taken out: any escape left came from the data."""
    from rich.console import Console

    console = Console(force_terminal=True, color_system="truecolor", width=app.size.width, legacy_windows=False)
    update = app.screen._compositor.render_update(full=True)
    out = update.render_segments(console)
    return re.sub(r"\x1b\[[0-9;]*[mHK]|\x1b\]8;[^\x1b]*\x1b\\", "", out)


def file_sha(path: Path) -> str:
    """The sha256 of a file's bytes, read in blocks (to tell that a command changed nothing)."""
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def answer_at_once(backend, jobs: list) -> list:
    """(task, prompt) pairs asked of `backend` all at once, each on its own thread (as the engine's
    crowd asks a phase's questions), the answers in the jobs' order; an exception is raised."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=max(len(jobs), 1)) as pool:
        return list(pool.map(lambda job: backend.answer(*job), jobs))
