"""A fault inside llama.cpp never ends a run silently: a command that loads a llama.cpp model runs
as a supervised child (smalltown/cli/guard.py), and when that child dies by a signal the user is
told which, whether it was inside llama.cpp, where the save stands and what to try; the exit code
is 128 + the signal. Stops still stop: a signal to the supervisor reaches the child once.

The faults here are real: a child that reads through a bad pointer inside libllama (through
llama-cpp-python's own code), one that does so in plain Python, and a real `smalltown run
--backend llama` whose child is sent SIGSEGV as a crash would deliver it."""

from __future__ import annotations

import os
import re
import select
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from helpers import ROOT, TINY, cli, query
from tinymodel import build_tiny_gguf

ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def tick(save: Path) -> int:
    return int(query(save, "SELECT value FROM meta WHERE key = 'tick'")[0][0])


def saved_tick(save: Path) -> int:
    """The save's tick as a run writes it; -1 before there is one (no file, no table, no row yet)."""
    try:
        return tick(save) if save.exists() else -1
    except (sqlite3.Error, IndexError):
        return -1


@pytest.fixture(scope="module")
def morning(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("fault") / "morning.sqlite"
    cli("run", "--headless", TINY, "--until", "+30m", "--save", path, "--backend", "scripted", check=True)
    return path


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory) -> Path:
    return build_tiny_gguf(tmp_path_factory.mktemp("model") / "tiny.gguf")


# a child that opens the save, starts writing a tick into it, and faults before it commits
CHILD = """
import ctypes, sys
from smalltown.cli import guard
guard.arm()
from smalltown.store.save import Save
save = Save.open(sys.argv[1])
save.conn.execute("BEGIN IMMEDIATE")
save.conn.execute("UPDATE meta SET value = '99999' WHERE key = 'tick'")
if sys.argv[2] == "llama":
    from llama_cpp._internals import LlamaModel
    model = object.__new__(LlamaModel)
    model.model = ctypes.c_void_p(16)  # no model there: llama.cpp reads through it
    model.n_ctx_train()
else:
    ctypes.string_at(0)
"""
PARENT = """
import argparse, sys
from smalltown.cli import guard
args = argparse.Namespace(command="run", target=sys.argv[1], save=None, headless=True, until="18:00")
sys.exit(guard.supervise(args, [sys.executable, "-c", sys.argv[3], sys.argv[1], sys.argv[2]]))
"""


@pytest.mark.parametrize("where", ["llama", "python"])
def test_a_fault_in_the_child_is_told_with_the_save_kept_and_exit_139(morning: Path, tmp_path: Path, where: str):
    save = tmp_path / "copy.sqlite"
    save.write_bytes(morning.read_bytes())
    before = tick(save)
    proc = subprocess.run([sys.executable, "-c", PARENT, str(save), where, textwrap.dedent(CHILD)], env=ENV,
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 139, proc.stderr
    err = proc.stderr
    assert "smalltown run ended abruptly: Segmentation fault (SIGSEGV)" in err
    assert ("inside llama.cpp" in err) == (where == "llama")
    assert "last Python frames (most recent first):" in err
    if where == "llama":
        assert "llama_cpp/_internals.py:" in err and "in n_ctx_train" in err
    assert f"the save is safe at its last whole tick: {save} at " in err and f"(tick {before})" in err
    assert f"continue it: smalltown run {save} --headless --until 18:00" in err
    assert "--repack off" in err and "--ctx 2048" in err and "--backend openai" in err
    assert tick(save) == before  # the tick being written when it died is not in the save
    assert cli("save", "check", save).returncode == 0


def launch(tmp_path: Path, *args: object) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "smalltown", *map(str, args)], env=ENV, cwd=ROOT,
                            stdout=(tmp_path / "out.txt").open("w"), stderr=(tmp_path / "err.txt").open("w"))


def children(pid: int) -> list[int]:
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def running_llama(tmp_path: Path, model: Path, save: Path) -> tuple[subprocess.Popen, int]:
    """`smalltown run --backend llama` started, once its child runs and has saved a tick past
    the start; the supervisor and the child's pid."""
    proc = launch(tmp_path, "run", "--headless", TINY, "--until", "+12h", "--save", save, "--backend", "llama",
                  "--model", model, "--threads", "1", "--ctx", 1024)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        kids = children(proc.pid)
        if kids and saved_tick(save) >= 1:
            return proc, kids[0]
        time.sleep(0.2)
    proc.kill()
    pytest.fail(f"no supervised child with a saved tick: {(tmp_path / 'err.txt').read_text()}")


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return Path(f"/proc/{pid}/stat").read_text().split(") ")[-1].startswith("Z")  # a zombie: ended


def test_run_backend_llama_runs_supervised_and_a_crash_in_it_is_told(tiny_model: Path, tmp_path: Path):
    save = tmp_path / "run.sqlite"
    proc, child = running_llama(tmp_path, tiny_model, save)
    cmdline = Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")
    assert [b"run", b"--headless", str(TINY).encode()] == cmdline[3:6]  # the same command, in the child
    os.kill(child, signal.SIGSEGV)  # as a fault delivers it
    assert proc.wait(60) == 139
    err = (tmp_path / "err.txt").read_text()
    assert "smalltown run ended abruptly: Segmentation fault (SIGSEGV)" in err
    assert f"the save is safe at its last whole tick: {save}" in err
    assert f"continue it: smalltown run {save} --headless --until WHEN" in err
    assert cli("save", "check", save).returncode == 0


@pytest.mark.parametrize("sig, code", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_stop_sent_to_the_supervisor_reaches_the_child(tiny_model: Path, tmp_path: Path, sig: int, code: int):
    save = tmp_path / "run.sqlite"
    proc, child = running_llama(tmp_path, tiny_model, save)
    proc.send_signal(sig)
    assert proc.wait(60) == code
    err = (tmp_path / "err.txt").read_text()
    assert "ended abruptly" not in err and "left at once" not in err  # one stop, taken at a tick's end
    assert gone(child)
    assert cli("save", "check", save).returncode == 0


def test_the_child_stops_when_its_supervisor_is_killed(tiny_model: Path, tmp_path: Path):
    save = tmp_path / "run.sqlite"
    proc, child = running_llama(tmp_path, tiny_model, save)
    proc.kill()
    proc.wait()
    deadline = time.monotonic() + 30
    while not gone(child) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert gone(child)
    assert cli("save", "check", save).returncode == 0


def test_ctrl_c_at_a_terminal_reaches_the_child_once(tiny_model: Path, tmp_path: Path):
    """The terminal sends Ctrl-C's SIGINT to the supervisor and the child both: not passed on
    again (a second SIGINT would make the run leave at once, mid-tick)."""
    import pty

    save = tmp_path / "run.sqlite"
    argv = [sys.executable, "-m", "smalltown", "run", "--headless", str(TINY), "--until", "+12h", "--save",
            str(save), "--backend", "llama", "--model", str(tiny_model), "--threads", "1", "--ctx", "1024"]
    pid, fd = pty.fork()
    if pid == 0:  # the command, on the pty as its terminal
        os.chdir(ROOT)
        os.execve(sys.executable, argv, ENV)
    out = bytearray()
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline and not (children(pid) and saved_tick(save) >= 1):
            time.sleep(0.2)
        os.write(fd, b"\x03")  # Ctrl-C, as typed
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if not select.select([fd], [], [], 1.0)[0]:
                continue
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # the pty closed: the command ended
                break
            if not chunk:
                break
            out += chunk
        else:
            os.kill(pid, signal.SIGKILL)
    finally:
        _, status = os.waitpid(pid, 0)
        os.close(fd)
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out.decode("utf-8", "replace"))  # its colours
    assert os.waitstatus_to_exitcode(status) == 130, text
    assert "stopping (Ctrl-C)" in text and "left at once" not in text and "ended abruptly" not in text
