"""Files beside a save that a stranger's archive may bring (made by tests/hostile/side_files.py):
a link, a second name, a named pipe or a folder at NAME.lock, NAME-wal, NAME-shm, NAME-journal or
NAME.partial. Every writer refuses, naming the file and what to do, and changes nothing: not the
user's file a link points at, not the save, not the folder. A save with two names (hard links) is
refused for writing; a save that is a link is written, and locked, at its target."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from helpers import ROOT, forked, query

_spec = importlib.util.spec_from_file_location("hostile_side_files", ROOT / "tests" / "hostile" / "side_files.py")
hostile = importlib.util.module_from_spec(_spec)
sys.modules["hostile_side_files"] = hostile  # dataclasses look their module up
_spec.loader.exec_module(hostile)

SCRIPTED = ("--backend", "scripted")
HANG = "hang"  # a child still running at its deadline (killed)
WRITERS = {  # name -> (the hostile file is beside the new save, not the one read; the command)
    "whisper": (False, ("whisper", "{save}", "Isabella", "the cafe smells of smoke", *SCRIPTED)),
    "run": (False, ("run", "--headless", "{save}", "--until", "+10m", *SCRIPTED)),
    "edit-object": (False, ("edit-object", "{save}", "Hobbs Cafe:cafe:coffee machine", "brewing")),
    "run --save NEW": (True, ("run", "--headless", "{save}", "--save", "{new}", "--until", "+10m", *SCRIPTED)),
    "fork --to NEW": (True, ("fork", "{save}", "--to", "{new}")),
    "save strip -o NEW": (True, ("save", "strip", "{save}", "-o", "{new}")),
}


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    """A short run of the tiny town (copied for each case)."""
    return hostile.make_save(tmp_path_factory.mktemp("side-files") / "base.sqlite")


def _main(argv: list[str], deadline: float = 30) -> tuple[int | str, str]:
    """`smalltown ARGV` in a child forked from this process; (its exit code, or HANG if it was
    still running at the deadline, and its stderr)."""
    from smalltown.cli.main import main

    return _child(lambda: main(argv), deadline)


def _child(work, deadline: float = 30) -> tuple[int | str, str]:
    with tempfile.TemporaryDirectory() as d:  # (its output apart from the folders compared)
        err = Path(d) / "err"
        return _wait(forked(work, Path(d) / "out", err), deadline), err.read_text()


def _wait(pid: int, deadline: float) -> int | str:
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.02)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return HANG


def _case_folder(tmp_path: Path, base: Path) -> tuple[Path, Path]:
    folder = tmp_path / "shared"
    folder.mkdir()
    save = folder / "town.sqlite"
    shutil.copyfile(base, save)
    hostile.victim(folder)
    return folder, save


def _refused_and_untouched(folder: Path, before: dict, rc: int | str, err: str, side: Path, expect: str) -> None:
    """Refused (exit 2) naming the hostile file and what it is, saying what to do, and nothing
    changed: the folder (the save, the user's file, the hostile file itself), no file made."""
    assert rc == 2, f"exit {rc}\n{err}"
    assert "Traceback" not in err, err
    named = Path(os.path.realpath(side.parent)) / side.name
    assert f"{named}: {expect}" in err, err
    assert "then try again" in err and ("remove it" in err or "move it away" in err), err
    assert (folder / hostile.VICTIM).read_bytes() == hostile.VICTIM_TEXT, "the user's file was written"
    assert not (folder / hostile.GONE).exists(), "a file was made through a link"
    assert hostile.listing(folder) == before


CASES = {c.name: c for c in hostile.CASES}
LOCK_CASES = [c for c in CASES if c.startswith("lock-")]
LOG_CASES = [c for c in CASES if c.split("-")[0] in ("wal", "shm", "journal")]
PARTIAL_CASES = [c for c in CASES if c.startswith("partial-")]


@pytest.mark.parametrize("writer", WRITERS)
@pytest.mark.parametrize("name", LOCK_CASES)
def test_a_hostile_lock_file_is_refused_by_every_writer_and_nothing_is_written(tmp_path, base, name, writer):
    """`town.sqlite.lock -> ~/notes.txt` beside a save: the lock never follows it, truncates it or
    writes its note into it (nor into a second name of the user's file, a pipe, a folder)."""
    case, (beside_new, argv) = CASES[name], WRITERS[writer]
    folder, save = _case_folder(tmp_path, base)
    new = folder / "new.sqlite"
    side = hostile.plant(new if beside_new else save, case, folder)
    before = hostile.listing(folder)
    rc, err = _main([a.format(save=save, new=new) for a in argv])
    _refused_and_untouched(folder, before, rc, err, side, case.expect)


@pytest.mark.parametrize("writer", ["run", "whisper", "edit-object"])
@pytest.mark.parametrize("name", LOG_CASES)
def test_a_hostile_sqlite_file_beside_a_save_is_refused_before_it_is_opened(tmp_path, base, name, writer):
    """SQLite writes into a second name of a user's file at NAME-wal or NAME-shm (and follows a
    link there, and waits on a pipe at NAME-journal): a writer refuses before it opens the save,
    even to read it first, so the user's file stays as it was."""
    case, (_, argv) = CASES[name], WRITERS[writer]
    folder, save = _case_folder(tmp_path, base)
    side = hostile.plant(save, case, folder)
    before = hostile.listing(folder)
    rc, err = _main([a.format(save=save) for a in argv])
    _refused_and_untouched(folder, before, rc, err, side, case.expect)


def _open_to_write(save: str) -> int:
    """Open a save to write, as whisper, interview and edit-object do once they have read it."""
    from smalltown.store.save import Save, SaveError

    try:
        Save.open(save).close()
    except SaveError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2  # (as the commands refuse it)
    return 0


@pytest.mark.parametrize("name", LOG_CASES)
def test_opening_a_save_to_write_refuses_a_hostile_sqlite_file_beside_it(tmp_path, base, name):
    case = CASES[name]
    folder, save = _case_folder(tmp_path, base)
    side = hostile.plant(save, case, folder)
    before = hostile.listing(folder)
    rc, err = _child(lambda: _open_to_write(str(save)))
    _refused_and_untouched(folder, before, rc, err, side, case.expect)


@pytest.mark.parametrize("writer", ["run --save NEW", "fork --to NEW"])
@pytest.mark.parametrize("name", PARTIAL_CASES + ["wal-folder", "shm-fifo", "journal-folder"])
def test_a_hostile_file_where_a_new_save_is_built_is_refused_before_the_build(tmp_path, base, name, writer):
    """A new save is built at NEW.partial and put at NEW: a link, a second name, a pipe or a folder
    there (or a pipe or a folder at NEW's own log names) is refused before anything is built."""
    case, (_, argv) = CASES[name], WRITERS[writer]
    folder, save = _case_folder(tmp_path, base)
    new = folder / "new.sqlite"
    side = hostile.plant(new, case, folder)
    before = hostile.listing(folder)
    rc, err = _main([a.format(save=save, new=new) for a in argv])
    _refused_and_untouched(folder, before, rc, err, side, case.expect)


def _popen_run(save: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-m", "smalltown", "run", "--headless", str(save), "--until", "+3h",
                             *SCRIPTED], cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)


def test_a_save_with_two_names_is_refused_for_writing_and_two_runs_never_damage_it(tmp_path, base):
    """`ln a.sqlite b.sqlite`, then `run a.sqlite` and `run b.sqlite` together: SQLite keeps a log
    per name, so each would write the file without the other's. Both are refused, naming the
    reason; the save is as it was and checks; reading it and continuing it into a copy work."""
    a, b = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    shutil.copyfile(base, a)
    os.link(a, b)
    before = a.read_bytes()
    procs = [_popen_run(p) for p in (a, b)]
    try:
        results = [(p.wait(timeout=300), p.stderr.read()) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    for path, (rc, err) in zip((a, b), results):
        assert rc == 2, f"run {path.name}: exit {rc}\n{err}"
        assert f"{path}: this save file has 2 names (hard links" in err, err
        assert "-o NEW.sqlite" in err and "Traceback" not in err, err
    assert a.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.sqlite", "b.sqlite"]  # no log, no lock left
    rc, err = _main(["whisper", str(b), "Isabella", "hello", *SCRIPTED])
    assert rc == 2 and "2 names (hard links" in err, err
    rc, err = _main(["save", "check", str(b)])
    assert rc == 0, err
    copy = tmp_path / "copy.sqlite"
    rc, err = _main(["run", "--headless", str(b), "--save", str(copy), "--until", "+10m", *SCRIPTED])
    assert rc == 0, err
    assert a.read_bytes() == before and os.stat(copy).st_nlink == 1


def test_a_save_that_is_a_link_is_written_and_locked_at_its_target(tmp_path, base):
    """A link to a save is followed: the run writes the target, takes the target's lock (a run
    through the link and one through the real name are one writer at a time), and the files
    beside the target are the ones checked."""
    from smalltown.store.lock import lock_file

    real = tmp_path / "real" / "town.sqlite"
    real.parent.mkdir()
    shutil.copyfile(base, real)
    link = tmp_path / "link.sqlite"
    link.symlink_to(real)
    assert lock_file(link) == lock_file(real)
    tick = query(real, "SELECT value FROM meta WHERE key = 'tick'")
    rc, err = _main(["run", "--headless", str(link), "--until", "+10m", *SCRIPTED])
    assert rc == 0, err
    assert query(real, "SELECT value FROM meta WHERE key = 'tick'") != tick and link.is_symlink()
    proc = _popen_run(real)
    try:
        deadline = time.monotonic() + 60
        while not lock_file(real).exists() and time.monotonic() < deadline:
            assert proc.poll() is None, proc.stderr.read()
            time.sleep(0.02)
        rc, err = _main(["whisper", str(link), "Isabella", "hello", *SCRIPTED])
        assert rc == 2 and f"another process is writing this save: pid {proc.pid}" in err, err
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
    hostile.victim(tmp_path)
    side = hostile.plant(real, CASES["wal-symlink"], tmp_path)  # beside the target, not the link
    before = hostile.listing(tmp_path)
    rc, err = _main(["run", "--headless", str(link), "--until", "+10m", *SCRIPTED])
    _refused_and_untouched(tmp_path, before, rc, err, side, "is a symbolic link")


@pytest.mark.parametrize("kind", ["symlink", "hardlink", "fifo"])
def test_the_lock_file_opened_is_the_one_looked_at(tmp_path, monkeypatch, kind):
    """The look before opening (lstat) and the open are two steps: a lock file changed between
    them is still refused, by the open (no link followed) or by what it opened (fstat), and
    nothing is written to it."""
    from smalltown.store import lock
    from smalltown.store.errors import SaveError

    save = tmp_path / "town.sqlite"
    hostile.victim(tmp_path)
    side = hostile.plant(save, CASES[f"lock-{kind}"], tmp_path)
    before = hostile.listing(tmp_path)
    monkeypatch.setattr(lock, "problem", lambda path, own=False: None)  # the look saw a plain file
    named = Path(os.path.realpath(side.parent)) / side.name
    with pytest.raises(SaveError, match=re.escape(f"{named}: {CASES[f'lock-{kind}'].expect}")):
        lock.WriterLock.take(save)
    assert hostile.listing(tmp_path) == before


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="making another user's file needs root")
def test_a_lock_file_of_another_user_is_not_written(tmp_path):
    from smalltown.store.errors import SaveError
    from smalltown.store.lock import WriterLock, lock_file

    save = tmp_path / "town.sqlite"
    theirs = lock_file(save)
    theirs.write_bytes(hostile.VICTIM_TEXT)
    os.chown(theirs, 65534, 65534)
    with pytest.raises(SaveError, match="belongs to another user"):
        WriterLock.take(save)
    assert theirs.read_bytes() == hostile.VICTIM_TEXT
    theirs.unlink()
    WriterLock.take(save).release()  # (once it is gone, the lock is made anew)
    assert not theirs.exists()


@pytest.mark.parametrize("text", [b"1234", b"my notes\nsecond line\n", b"\xff\xfe\n"])
def test_a_lock_file_that_holds_no_writers_note_is_not_written(tmp_path, text):
    """A regular file of one name, ours, at NAME.lock, that no writer left (a link to a save puts
    its lock beside the target, where another program may keep `passwd.lock`): refused, kept. A
    note a killed writer left, or an empty file, is taken over."""
    from smalltown.store.errors import SaveError
    from smalltown.store.lock import WriterLock, lock_file

    save = tmp_path / "town.sqlite"
    theirs = lock_file(save)
    theirs.write_bytes(text)
    with pytest.raises(SaveError, match="holds something other than a writer lock's note"):
        WriterLock.take(save)
    assert theirs.read_bytes() == text
    for stale in (b"", b"999999999\nsmalltown run 'a\nb.sqlite'\n"):
        theirs.write_bytes(stale)
        WriterLock.take(save).release()
        assert not theirs.exists()


@pytest.mark.parametrize("writer", ["run WORLD --save NEW", "run --save NEW", "fork --to NEW"])
def test_a_new_save_is_never_made_at_a_link(tmp_path, base, writer):
    """`--save NEW --overwrite` where NEW is a link (to a file of the user's, to nothing, or a
    loop of links): the new save would replace the link, but its lock would be made beside the
    link's target, in a folder that is not the save's: refused, and nothing made anywhere."""
    folder, save = _case_folder(tmp_path, base)
    new = folder / "new.sqlite"
    (folder / "loop.sqlite").symlink_to(new)
    for target in (folder / hostile.VICTIM, folder / hostile.GONE, folder / "loop.sqlite"):
        new.symlink_to(target)
        before = hostile.listing(folder)
        argv = {"run WORLD --save NEW": ("run", "--headless", ROOT / "worlds" / "tiny.toml", "--save", new, "--until",
                                         "+10m", "--overwrite", *SCRIPTED),
                "run --save NEW": ("run", "--headless", save, "--save", new, "--until", "+10m", "--overwrite", *SCRIPTED),
                "fork --to NEW": ("fork", save, "--to", new, "--overwrite")}[writer]
        rc, err = _main([str(a) for a in argv])
        assert rc == 2 and f"{new}: is a symbolic link (to {target}); a new save is never made at a link" in err, err
        assert hostile.listing(folder) == before
        new.unlink()
