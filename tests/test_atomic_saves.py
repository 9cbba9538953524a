"""A new save, a copy (save-as, the TUI's save-as and fork) and a fork appear at their name whole
or not at all: a process killed while making one, or a disk that fills, leaves nothing there (so
the same command works again), and a start that fails (a bad argument, a server that does not
answer) writes nothing."""

from __future__ import annotations

import os
import signal
import sqlite3
import time
from pathlib import Path
from typing import Callable

import pytest

from helpers import TINY, query
from helpers import exit_code, forked, save_digest

SCRIPTED = ["--backend", "scripted"]


def _in_child(work: Callable[[], int], log: Path) -> int:
    """Run `work` in a forked child (a real process, killed for real); its exit code, or minus
    the signal that ended it."""
    return exit_code(forked(work, os.devnull, log, append=True))


def _die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def _smalltown(*argv: object) -> Callable[[], int]:
    import smalltown.cli.fork  # noqa: F401  (imported once, here, not in every child)
    import smalltown.cli.main  # noqa: F401
    import smalltown.cli.run  # noqa: F401

    def work() -> int:
        from smalltown.cli.main import main

        return main([str(a) for a in argv])
    return work


def _files(folder: Path) -> list[str]:
    """What is in a folder, without SQLite's own files beside a save (-wal, -shm)."""
    return sorted(p.name for p in folder.iterdir() if not p.name.endswith(("-wal", "-shm")))


# --- creation ------------------------------------------------------------------------------------


def _kill_in_create_schema():
    """Killed just after the new file was made, before its schema (the old 'no meta table')."""
    from smalltown.store import save

    def die(db):
        _die()
    save._create_schema = die


def _kill_in_first_flush():
    """Killed after the schema and meta were committed, before the agents (the old 'unborn')."""
    from smalltown.sim.simulation import Simulation

    def die(self, *args, **kwargs):
        _die()
    Simulation._flush = die


@pytest.mark.parametrize("kill", [_kill_in_create_schema, _kill_in_first_flush], ids=["file made", "meta written"])
def test_a_run_killed_while_its_save_is_made_leaves_nothing_and_runs_again(tmp_path: Path, kill):
    reference = tmp_path / "reference" / "s.sqlite"
    reference.parent.mkdir()  # (--save names a file in a folder that exists)
    argv = ["run", "--headless", TINY, "--until", "+10m", *SCRIPTED, "--save"]
    assert _in_child(_smalltown(*argv, reference), tmp_path / "log") == 0
    folder = tmp_path / "killed"
    folder.mkdir()
    save = folder / "s.sqlite"

    def killed() -> int:
        kill()
        return _smalltown(*argv, save)()
    assert _in_child(killed, tmp_path / "log") == -signal.SIGKILL
    assert not save.exists(), f"a kill while creating left {_files(folder)}"
    # the same command again: no "a file is already there", and it ends where an unbroken run does
    assert _in_child(_smalltown(*argv, save), tmp_path / "log") == 0, (tmp_path / "log").read_text()
    assert save_digest(save) == save_digest(reference)
    assert _files(folder) == ["s.sqlite"]  # the killed build's s.sqlite.partial and lock are gone


def test_a_disk_that_fills_while_the_save_is_made_leaves_nothing(tmp_path: Path, capsys, monkeypatch):
    from smalltown.cli.main import main
    from smalltown.store import save as save_module

    connect = save_module.Save._connect

    def small_disk(p, readonly=False, **kw):
        conn = connect(p, readonly, **kw)
        if not readonly:
            conn.execute("PRAGMA max_page_count = 12")  # the schema fits, the town does not
        return conn

    monkeypatch.setattr(save_module.Save, "_connect", staticmethod(small_disk))
    folder = tmp_path / "saves"
    folder.mkdir()
    rc = main(["run", "--headless", str(TINY), "--until", "+10m", *SCRIPTED, "--save", str(folder / "s.sqlite")])
    err = capsys.readouterr().err
    assert rc == 1 and "the disk is full" in err and "Traceback" not in err
    assert _files(folder) == []
    monkeypatch.undo()
    assert main(["run", "--headless", str(TINY), "--until", "+10m", *SCRIPTED, "--save", str(folder / "s.sqlite")]) == 0
    assert _files(folder) == ["s.sqlite"]


# --- copies: save-as (command line and TUI), fork -------------------------------------------------


class _KilledMidCopy:
    """A read-only connection (the original's, in every copy) whose backup copies a few pages,
    then kills the process: a copy cut off half-way."""

    def __init__(self, conn: sqlite3.Connection):
        self._conn = conn

    def backup(self, target, **kwargs):
        def die(status, remaining, total):
            _die()
        self._conn.backup(getattr(target, "_conn", target), pages=8, progress=die)
        _die()

    def __getattr__(self, name):
        return getattr(self._conn, name)


def _kill_mid_copy() -> None:
    connect = sqlite3.connect

    def connecting(database, *args, **kwargs):
        conn = connect(database, *args, **kwargs)
        return _KilledMidCopy(conn) if any(r in str(database) for r in ("mode=ro", "immutable=1")) else conn
    sqlite3.connect = connecting


@pytest.fixture(scope="module")
def big(tmp_path_factory) -> Path:
    """A save worth copying: half a game day of the tiny town (some MB)."""
    path = tmp_path_factory.mktemp("big") / "big.sqlite"
    assert _in_child(_smalltown("run", "--headless", TINY, "--until", "+12h", *SCRIPTED, "--save", path),
                     path.with_name("log")) == 0
    return path


def _tui_copy(big: Path, to: Path) -> Callable[[], int]:
    """The TUI's save-as and fork: its runner copies the running save."""
    def work() -> int:
        from smalltown.scripted import ScriptedBackend
        from smalltown.sim.commands import CopySave, Quit
        from smalltown.sim.open import resume
        from smalltown.tui.runner import SimRunner

        sim = resume(big, ScriptedBackend(0))
        runner = SimRunner(sim, lambda frame: None, paused=True)
        runner.send(CopySave(str(to)), lambda result: None)
        runner.send(Quit())
        runner.run()  # (on this thread: it copies, then quits)
        sim.close()
        return 0
    return work


@pytest.mark.parametrize("how", ["run --save", "tui copy", "fork"])
def test_a_copy_killed_half_way_leaves_nothing_at_its_name(tmp_path: Path, big: Path, how: str):
    before = save_digest(big)
    folder = tmp_path / "copies"
    folder.mkdir()
    new = folder / "new.sqlite"
    work = {"run --save": _smalltown("run", "--headless", big, "--save", new, "--until", "+10m", *SCRIPTED),
            "tui copy": _tui_copy(big, new),
            "fork": _smalltown("fork", big, "--to", new)}[how]

    def killed() -> int:
        _kill_mid_copy()
        return work()
    assert _in_child(killed, tmp_path / "log") == -signal.SIGKILL
    assert not new.exists(), f"a copy killed half-way left {_files(folder)}"
    assert save_digest(big) == before
    assert _in_child(work, tmp_path / "log") == 0, (tmp_path / "log").read_text()  # and it works again
    assert query(new, "PRAGMA integrity_check") == [("ok",)]
    assert _files(folder) == ["new.sqlite"]
    if how == "tui copy":
        assert save_digest(new) == before


# --- failed starts -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def small(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("small") / "small.sqlite"
    assert _in_child(_smalltown("run", "--headless", TINY, "--until", "+10m", *SCRIPTED, "--save", path),
                     path.with_name("log")) == 0
    return path


@pytest.mark.parametrize("wrong, rc, message", [
    (["--until", "+1x", *SCRIPTED], 2, "cannot read the time"),
    (["--until", "+1h", "--set", "nonsense=1", *SCRIPTED], 2, "unknown setting"),
    (["--until", "+1h", "--backend", "openai", "--base-url", "http://127.0.0.1:9/v1"], 2, "connection refused"),
], ids=["until", "set", "server"])
@pytest.mark.parametrize("start", ["world", "save-as"])
def test_a_start_that_fails_writes_nothing(tmp_path: Path, capsys, small: Path, start: str, wrong, rc, message):
    from smalltown.cli.main import main

    folder = tmp_path / "out"
    folder.mkdir()
    target = TINY if start == "world" else small
    before = save_digest(small)
    t0 = time.monotonic()
    assert main(["run", "--headless", str(target), "--save", str(folder / "s.sqlite"), *wrong]) == rc
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert time.monotonic() - t0 < 30
    assert _files(folder) == [], "a start that failed left files"
    assert save_digest(small) == before
    # the corrected command needs no --overwrite
    assert main(["run", "--headless", str(target), "--save", str(folder / "s.sqlite"), "--until", "+10m",
                 *SCRIPTED]) == 0


def test_a_server_is_reached_once_before_the_run_starts():
    """Any HTTP answer shows a server is there (even a 404 for /models, which not every server
    has); no answer is a BackendError naming the address."""
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer

    from smalltown.llm.openai_compat import BackendError, OpenAIBackend
    from smalltown.sim.backends import connect

    class NotFound(BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_error(404)

        def log_message(self, *args):
            pass

    httpd = HTTPServer(("127.0.0.1", 0), NotFound)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        connect(OpenAIBackend(f"http://127.0.0.1:{httpd.server_port}/v1"))
    finally:
        httpd.shutdown()
        httpd.server_close()
    with pytest.raises(BackendError, match=r"http://127\.0\.0\.1:9/v1: connection refused"):
        connect(OpenAIBackend("http://127.0.0.1:9/v1"))
