"""A headless run with a model says what it waits on: the progress line names the call in flight
(agent, task, seconds so far) and is redrawn while a single slow call is answered. The run is the
real command line in a pseudo-terminal (as a user's shell runs it), against a real loopback
OpenAI-compatible server that takes seconds per answer."""

from __future__ import annotations

import fcntl
import os
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

from fakes import FakeServer
from helpers import ROOT, TINY, cli
from smalltown.cli.progress import in_flight_text, per_minute
from smalltown.world.load import load_world

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\r")
SLOW_SECONDS = 4.0


def _read_until(fd: int, pattern: re.Pattern[str], seconds: float) -> tuple[re.Match[str] | None, str]:
    """What the terminal has shown (escapes removed) until `pattern` is in it, or `seconds` pass."""
    seen = ""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                seen += ANSI.sub("\n", os.read(fd, 65536).decode("utf-8", "replace"))
            except OSError:  # the child closed the terminal
                break
        if m := pattern.search(seen):
            return m, seen
    return None, seen


def test_a_headless_run_shows_the_call_in_flight_while_a_slow_server_answers(tmp_path: Path):
    save = tmp_path / "slow.sqlite"
    cli("run", "--headless", TINY, "--until", "+1m", "--save", save, "--backend", "scripted", check=True)
    names = [a.name for a in load_world(TINY).agents]
    srv = FakeServer()
    srv.delay = SLOW_SECONDS  # every answer takes seconds: one call is on the line a while
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 160, 0, 0))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TERM": "xterm-256color", "COLUMNS": "160"}
    env.pop("NO_COLOR", None)
    try:
        proc = subprocess.Popen([sys.executable, "-m", "smalltown", "run", "--headless", str(save), "--until", "+1h",
                                 "--backend", "openai", "--base-url", srv.url, "--timeout", "60",
                                 "--concurrency", "1"],
                                stdin=slave, stdout=slave, stderr=slave, cwd=ROOT, env=env)
        os.close(slave)
        who = "|".join(re.escape(n) for n in names)
        # the same call, seen at two moments of its wait: the line moves while the server thinks
        first, seen = _read_until(master, re.compile(rf"({who}): (\w+) (\d+)s"), 90)
        assert first is not None, seen[-2000:]
        later, seen2 = _read_until(master, re.compile(rf"{re.escape(first[1])}: {first[2]} ([2-9]|\d\d+)s"),
                                   SLOW_SECONDS + 10)
        assert later is not None, (seen + seen2)[-2000:]
        assert re.search(r"\d[\d.,]* ticks/(min|s)", seen + seen2), (seen + seen2)[-2000:]  # and a rate
        proc.send_signal(signal.SIGINT)
        assert proc.wait(30) == 130
        _read_until(master, re.compile("a pattern never shown$"), 1)  # (drain)
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
        srv.close()
    assert srv.requests, "the server was asked"


def test_the_line_names_the_oldest_question_and_counts_the_others():
    asking = [("Ann Lee", "next_action", 100.0), ("Bob Stone", "reflect", 40.0), ("Cy", "rate", 90.0)]
    assert in_flight_text(asking, 112.5) == "Bob Stone: reflect 1m12s +2"
    assert in_flight_text([("Ann Lee", "next_action", 100.0)], 103.2) == "Ann Lee: next_action 3s"
    assert in_flight_text([], 5.0) == ""
    assert per_minute(3, 60, "calls") == "3.0 calls/min"
    assert per_minute(30, 60, "ticks") == "30 ticks/min"
    assert per_minute(600, 1, "ticks") == "600 ticks/s"


def test_where_the_output_is_a_log_a_long_wait_is_said_on_a_line_of_its_own(tmp_path: Path, monkeypatch):
    """Not a terminal (here: the output captured): the progress line is drawn once, at the end, so
    a call that waits long is said as a line. The first question takes seconds, the rest none."""
    import smalltown.cli.progress as progress

    monkeypatch.setattr(progress, "WAITING_SAID_AFTER", 1.0)
    save = tmp_path / "log.sqlite"
    cli("run", "--headless", TINY, "--until", "+1m", "--save", save, "--backend", "scripted", check=True)
    srv = FakeServer()
    srv.script(("sleep", 2.6))
    try:
        proc = cli("run", "--headless", save, "--until", "+1h", "--backend", "openai", "--base-url", srv.url,
                   "--timeout", "60", "--concurrency", "1")
    finally:
        srv.close()
    assert proc.returncode == 0, proc.stderr
    names = "|".join(re.escape(a.name) for a in load_world(TINY).agents)
    said = re.findall(rf"^2023-02-13 \S+ · tick \d+ · .*waiting on ({names}): (\w+) (\d+)s$", proc.stderr, re.M)
    assert said and said[0][2] in ("1", "2"), proc.stderr  # said once a second had passed, and again after
    assert len(said) == len({s[2] for s in said}) <= 3  # once per second waited, not once per refresh
    assert "run complete" in proc.stderr


def test_a_scripted_runs_output_says_no_wait(tmp_path: Path):
    proc = cli("run", "--headless", TINY, "--until", "+10m", "--save", tmp_path / "s.sqlite", "--backend", "scripted",
               check=True)
    assert "waiting on" not in proc.stderr and "run complete" in proc.stderr
