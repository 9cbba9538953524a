"""Readers never write beside a save, whatever lies there (tests/hostile/side_logs.py): every command
that only reads a save (save info, save check, inspect, eval's copy, fork's and save strip's source,
a cassette's source) and what replay and the TUI's screens read leave the folder as it was, byte for
byte (its listing, each file's bytes, kind and inode, a link's target, and the files a link points
to), leave nothing in the temporary folder, and read the save as a writer would find it: a killed
run's log applied, an interrupted write rolled back. A side file that is a link, not a file or a
hard link is refused, naming it. A live writer is followed."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import signal
import stat
import sys
import tempfile
import time
from pathlib import Path

import pytest

from helpers import cli_within, query, refused_code
from smalltown.cli.execute import BUG

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("hostile_side_logs", ROOT / "tests" / "hostile" / "side_logs.py")
side_logs = importlib.util.module_from_spec(_spec)
sys.modules["hostile_side_logs"] = side_logs  # dataclasses look their module up
_spec.loader.exec_module(side_logs)
CASES = {c.name: c for c in side_logs.CASES}
WORLD = ROOT / "tests" / "worlds_bad" / "ok_base.toml"
LIMIT = 30  # seconds one command may take: a hang (a reader opening a FIFO) fails instead of blocking


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("side-logs")
    side_logs.make_all(out)
    return out


def tree(folder: Path) -> dict[str, tuple]:
    """Everything under `folder`, never following a link nor opening what is not a regular file:
    each entry's kind, inode, size and sha256 (a link: its target)."""
    seen = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in sorted(dirnames + filenames):
            p = Path(dirpath) / name
            st = os.lstat(p)
            key = str(p.relative_to(folder))
            if stat.S_ISLNK(st.st_mode):
                seen[key] = ("link", os.readlink(p))
            elif stat.S_ISREG(st.st_mode):
                seen[key] = ("file", st.st_ino, st.st_size, stat.S_IMODE(st.st_mode),
                             hashlib.sha256(p.read_bytes()).hexdigest())
            else:
                seen[key] = (stat.S_IFMT(st.st_mode), st.st_ino)
    return seen


def _tick(save: Path) -> int:
    return int(query(save, "SELECT value FROM meta WHERE key = 'tick'")[0][0])


def _readers(save: Path, work: Path) -> list[tuple[str, list]]:
    scripted = ("--backend", "scripted")
    return [
        ("save info", ["save", "info", save, "--json"]),
        ("save check", ["save", "check", save]),
        ("inspect", ["inspect", save, "John"]),
        ("eval town (its copy)", ["eval", "town", save, "--json", *scripted]),
        ("fork (its source)", ["fork", save, "--to", work / "fork.sqlite"]),
        ("save strip (its source)", ["save", "strip", save, "-o", work / "strip.sqlite"]),
        ("run --from (a cassette)", ["run", WORLD, "--headless", "--until", "+1m", "--from", save,
                                     "--save", work / "cassette.sqlite", "--fallthrough", "scripted"]),
    ]


def _replay(save: Path) -> str:
    """What replay reads (sim/history.py), and what the TUI's screens read (tui/reader.py)."""
    from smalltown.sim.history import History
    from smalltown.tui.reader import SaveReader

    with History(save) as h:
        agents = len(h.state_at(h.last_tick).agents)
    reader = SaveReader(save)
    try:
        tick, _ = reader.clock()
    finally:
        reader.close()
    return f"{agents} agents at tick {tick}"


@pytest.mark.parametrize("name", list(CASES))
def test_a_reader_changes_nothing_beside_the_save(name: str, corpus: Path, tmp_path: Path, capsys, monkeypatch):
    from smalltown.store.errors import SaveError

    case = CASES[name]
    save = corpus / name / side_logs.SAVE
    private_tmp = tmp_path / "tmp"  # where a reader's private copy goes: empty again after each
    private_tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(private_tmp))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    before = tree(save.parent)
    base_tick = _tick(corpus / f"_base-{'wal' if case.wal_mode else 'rollback'}.sqlite")
    for what, argv in _readers(save, work):
        rc, out = cli_within(capsys, argv, LIMIT)
        said = f"{what}: smalltown {' '.join(map(str, argv))} -> {rc}\n{out[-2000:]}"
        assert "Traceback" not in out and BUG not in out, said
        assert tree(save.parent) == before, f"{said}\nchanged the save's folder"
        assert not list(private_tmp.iterdir()), f"{said}\nleft {list(private_tmp.iterdir())} in the temporary folder"
        if case.refused:
            assert rc == refused_code(argv) and case.refused in out and str(save.parent) in out, said
            continue
        assert rc == 0, said
        assert side_logs.UNCOMMITTED not in out, f"{said}\nan interrupted write was read as committed"
        if what == "save info":
            tick = json.loads(out)["tick"]
            assert tick > base_tick if case.later else tick == base_tick, said
    try:
        seen = _replay(save)
    except SaveError as e:
        assert case.refused and case.refused in str(e), f"replay: {e}"
    else:
        assert not case.refused and seen.startswith("2 agents"), seen
    assert tree(save.parent) == before, "replay or the TUI's reader changed the save's folder"
    assert not list(private_tmp.iterdir())


def test_the_corpus_has_each_kind_of_side_file():
    names = set(CASES)
    for kind in ("wal-empty", "wal-garbage", "wal-other-database", "shm-garbage", "journal-hot", "killed-run",
                 "wal-symlink", "shm-symlink", "journal-symlink", "wal-hard-link", "shm-is-a-fifo"):
        assert any(n.startswith(kind + "-") for n in names), kind
    assert len(CASES) >= 40


# --- a live writer is followed -------------------------------------------------------------------


def _live_writer(save: Path, go: Path, ready: Path) -> int:
    """A child process that opens `save` to write (holding its writer lock), writes `ready`, waits
    for `go` to exist, commits one more tick, and stays until killed."""
    pid = os.fork()
    if pid == 0:
        try:
            from smalltown.scripted import ScriptedBackend
            from smalltown.sim.open import resume

            sim = resume(save, ScriptedBackend(0))
            sim.snapshot()
            ready.write_text(str(sim.tick))
            while not go.exists():
                time.sleep(0.02)
            for _ in range(6):
                sim.step()
            sim.snapshot()
            ready.write_text(str(sim.tick))
            while True:
                time.sleep(1)
        finally:
            os._exit(0)
    return pid


def _wait_for(cond, seconds: float = 60) -> None:
    end = time.monotonic() + seconds
    while not cond():
        assert time.monotonic() < end, "the writer did not get there"
        time.sleep(0.02)


def test_a_reader_beside_a_live_writer_follows_it(corpus: Path, tmp_path: Path):
    from smalltown.store.reading import writer_running
    from smalltown.store.save import open_reader

    save = tmp_path / side_logs.SAVE
    save.write_bytes((corpus / "_base-wal.sqlite").read_bytes())
    go, ready = tmp_path / "go", tmp_path / "ready"
    pid = _live_writer(save, go, ready)
    try:
        _wait_for(ready.exists)
        first = int(ready.read_text())
        assert writer_running(save)
        reader = open_reader(save)  # opened while the run goes on: it must see the run's next commits
        try:
            assert reader.meta("tick") == first
            go.touch()
            _wait_for(lambda: (ready.read_text().strip() or "0").isdigit() and int(ready.read_text() or 0) > first)
            assert reader.meta("tick") == int(ready.read_text()) > first, "the reader did not follow the run"
        finally:
            reader.close()
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    assert not writer_running(save)  # its flock died with it; its lock file is left, stale


def test_a_reader_opened_before_a_writer_starts_follows_it_and_what_it_leaves(corpus: Path, tmp_path: Path):
    """Opened with no writer (the file alone, immutable), a reader must not keep reading the file
    as it was once a run starts: it connects again (as the writer's `mode=ro` reader), and again
    when the run is killed and leaves its log (read from a private copy)."""
    from smalltown.store.save import open_reader

    save = tmp_path / side_logs.SAVE
    save.write_bytes((corpus / "_base-wal.sqlite").read_bytes())
    reader = open_reader(save)
    try:
        start = reader.meta("tick")
        go, ready = tmp_path / "go", tmp_path / "ready"
        pid = _live_writer(save, go, ready)
        try:
            _wait_for(ready.exists)
            go.touch()
            _wait_for(lambda: (ready.read_text().strip() or "0").isdigit() and int(ready.read_text() or 0) > start)
            assert reader.meta("tick") == int(ready.read_text()) > start, "the reader kept the file as it was"
        finally:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        assert reader.meta("tick") == int(ready.read_text())  # the killed run's log, applied in a copy
        assert reader.count("memories") == query(save, "SELECT count(*) FROM memories")[0][0]
    finally:
        reader.close()


@pytest.mark.parametrize("lock", ["none", "stale", "symlink", "fifo", "folder"])
def test_only_a_held_lock_is_a_live_writer_and_the_probe_makes_nothing(tmp_path: Path, lock: str):
    from smalltown.store.reading import writer_running

    save = tmp_path / side_logs.SAVE
    save.write_bytes(b"")
    file = Path(f"{save}.lock")
    mine = tmp_path / "mine"
    mine.write_bytes(b"my own file\n")
    if lock == "stale":
        file.write_text("12345\nsmalltown run town.sqlite\n")
    elif lock == "symlink":
        file.symlink_to(mine)
    elif lock == "fifo":
        os.mkfifo(file)
    elif lock == "folder":
        file.mkdir()
    before = tree(tmp_path)
    assert writer_running(save) is False
    assert tree(tmp_path) == before
