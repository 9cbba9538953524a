"""Readers write nothing, and work on read-only media.

A save on read-only media (a read-only mount; or, for a user chmod binds, a folder 0555 holding
the file 0444) is read by every reader (save info, save check, inspect, replay, eval town, fork
and strip into another folder, a run replaying it with --from), whatever SQLite left beside it
(nothing, a write-ahead log with its index, a log without its index) or in whatever journal mode
it was written; writers are refused with a clear message and write nothing. A reader of a save
of an older schema reads it without changing a byte, and leaves no -wal/-shm behind."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import ROOT, TINY, cli, query

SCRIPTED = ("--backend", "scripted")
V1 = ROOT / "tests" / "fixtures" / "tiny-v1.sqlite"


def _can_mount() -> bool:
    if os.geteuid() != 0 or not shutil.which("unshare"):
        return False
    probe = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                            "mount --bind /tmp /tmp && mount -o remount,bind,ro /tmp && ! touch /tmp/.smalltown-ro"],
                           capture_output=True)
    return probe.returncode == 0


# How a folder is made read-only: a read-only mount (as root, in a mount namespace of the command's
# own, so nothing outlives it), or the permission bits (honoured for anyone but root).
MEDIA = [pytest.param("mount", marks=pytest.mark.skipif(not _can_mount(), reason="needs root and unshare")),
         pytest.param("chmod", marks=pytest.mark.skipif(os.geteuid() == 0, reason="root writes through chmod"))]

# Runs each command of a JSON list in a forked child of one interpreter (no start-up each time),
# its output to files in OUT; prints [[exit code, stdout, stderr], ...]. "replay" starts the
# replay TUI on the save and quits it.
DRIVER = r"""
import asyncio, json, os, sys, traceback
out = sys.argv[2]
import smalltown.cli.main, smalltown.cli.agents, smalltown.cli.files, smalltown.cli.run, smalltown.tui.replay
async def replay(save):
    from smalltown.tui.replay import ReplayApp
    app = ReplayApp(save)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("comma")
        await pilot.press("q")
    return 0
results = []
for i, argv in enumerate(json.loads(sys.argv[1])):
    o, e = f"{out}/{i}.out", f"{out}/{i}.err"
    pid = os.fork()
    if pid == 0:
        code = 70
        try:
            os.dup2(os.open(o, os.O_WRONLY | os.O_CREAT, 0o644), 1)
            os.dup2(os.open(e, os.O_WRONLY | os.O_CREAT, 0o644), 2)
            sys.stdout, sys.stderr = open(1, "w", closefd=False), open(2, "w", closefd=False)
            code = asyncio.run(replay(argv[1])) if argv[0] == "replay" else smalltown.cli.main.main(argv)
        except BaseException:
            traceback.print_exc()
        finally:
            sys.stdout.flush(); sys.stderr.flush(); os._exit(code)
    code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    results.append([code, open(o).read(), open(e).read()])
print(json.dumps(results))
"""


def _run_read_only(media: str, folder: Path, out: Path, commands: list[list[str]]) -> list[tuple[int, str, str]]:
    """The commands, each in its own process, while `folder` is read-only."""
    out.mkdir(exist_ok=True)
    argv = [sys.executable, "-c", DRIVER, json.dumps([[str(a) for a in c] for c in commands]), str(out)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if media == "mount":
        argv = ["unshare", "--mount", "--propagation", "private", "sh", "-c",
                'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec "$@"', str(folder), *argv]
        done = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=ROOT, timeout=600)
    else:
        modes = {p: p.stat().st_mode for p in folder.iterdir()}
        for p in modes:
            p.chmod(0o444)
        folder.chmod(0o555)
        try:
            done = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=ROOT, timeout=600)
        finally:
            folder.chmod(0o755)
            for p, mode in modes.items():
                p.chmod(mode)
    assert done.returncode == 0, done.stderr
    return [tuple(r) for r in json.loads(done.stdout)]


def _files(folder: Path) -> dict[str, str]:
    """Every file in the folder, by name, with its sha256."""
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    save = tmp_path_factory.mktemp("base") / "town.sqlite"
    cli("run", "--headless", TINY, "--until", "+1h", "--save", save, *SCRIPTED, check=True)
    return save


def _left_a_log(save: Path, keep_index: bool) -> int:
    """Run the save on by some ticks in a process that then dies without closing it: its ticks
    are committed in the -wal beside the save (never checkpointed). Returns the tick reached."""
    pid = os.fork()
    if pid == 0:
        try:
            from smalltown.scripted import ScriptedBackend
            from smalltown.sim.open import resume

            sim = resume(save, ScriptedBackend(0))
            sim.save.conn.execute("PRAGMA wal_autocheckpoint=0")
            for _ in range(30):
                sim.step()
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    assert Path(f"{save}-wal").stat().st_size > 0
    Path(f"{save}.lock").unlink(missing_ok=True)  # (the dead holder's; flock went with it)
    if not keep_index:
        Path(f"{save}-shm").unlink()
    shadow = save.with_name("shadow.sqlite")  # what a reader must see: the log applied
    shutil.copyfile(save, shadow)
    shutil.copyfile(f"{save}-wal", f"{shadow}-wal")
    try:
        return int(query(shadow, "SELECT value FROM meta WHERE key = 'tick'")[0][0])
    finally:
        for s in ("", "-wal", "-shm"):
            Path(f"{shadow}{s}").unlink(missing_ok=True)


def _make(kind: str, base: Path, folder: Path) -> tuple[Path, int]:
    """The save of this kind in `folder`, and the tick a reader must find in it."""
    folder.mkdir()
    save = folder / "town.sqlite"
    shutil.copyfile(base, save)
    tick = int(query(base, "SELECT value FROM meta WHERE key = 'tick'")[0][0])  # (a read of `save` makes its -shm)
    if kind == "rollback journal":
        conn = sqlite3.connect(save)
        conn.execute("PRAGMA journal_mode=DELETE")
        conn.close()
    elif kind in ("wal and its index left", "wal left without its index"):
        tick = _left_a_log(save, keep_index=kind == "wal and its index left")
        assert tick > int(query(base, "SELECT value FROM meta WHERE key = 'tick'")[0][0])
    else:
        assert [p.name for p in folder.iterdir()] == ["town.sqlite"]
    return save, tick


KINDS = ["wal, nothing beside it", "wal and its index left", "wal left without its index", "rollback journal"]


@pytest.mark.parametrize("media", MEDIA)
@pytest.mark.parametrize("kind", KINDS)
def test_every_reader_reads_a_save_on_read_only_media_and_writers_are_refused(
        tmp_path: Path, base: Path, media: str, kind: str):
    save, tick = _make(kind, base, tmp_path / "ro")
    before = _files(save.parent)
    elsewhere = tmp_path / "out"
    elsewhere.mkdir()
    readers = [
        ["save", "info", save, "--json"],
        ["save", "check", save],
        ["inspect", save, "Isabella"],
        ["replay", save],
        ["eval", "town", save, "--json"],
        ["fork", save, "--to", elsewhere / "fork.sqlite"],
        ["save", "strip", save, "-o", elsewhere / "strip.sqlite"],
        ["run", "--headless", TINY, "--from", save, "--until", "+10m", "--save", elsewhere / "re.sqlite",
         "--fallthrough", "scripted"],
    ]
    writers = [
        ["run", "--headless", save, "--until", "+10m", *SCRIPTED],
        ["whisper", save, "Isabella", "hello", *SCRIPTED],
        ["edit-object", save, "Hobbs Cafe:cafe:cafe customer seating", "wet"],
    ]
    results = _run_read_only(media, save.parent, tmp_path / "logs", readers + writers)
    for argv, (code, out, err) in zip(readers, results):
        assert code == 0 and "Traceback" not in err, f"{argv[:2]}: {code}\n{out}\n{err}"
    assert json.loads(results[0][1])["tick"] == tick  # the log beside it applied
    assert "Isabella Rodriguez" in results[2][1]
    for p in ("fork.sqlite", "strip.sqlite", "re.sqlite"):
        assert cli("save", "check", elsewhere / p).returncode == 0, p
    assert json.loads(cli("save", "info", elsewhere / "fork.sqlite", "--json", check=True).stdout)["tick"] == tick
    for argv, (code, out, err) in zip(writers, results[len(readers):]):
        assert code == 2 and "Traceback" not in err, f"{argv[:2]}: {code}\n{out}\n{err}"
        assert "read-only" in err, f"{argv[:2]}: {err}"
    assert _files(save.parent) == before  # not a byte written, nothing made beside the save


# --- readers never migrate -----------------------------------------------------------------------


def test_readers_of_an_older_save_change_no_byte_and_leave_nothing_beside_it(tmp_path: Path):
    save = tmp_path / "v1.sqlite"  # (a write-ahead-log save, as every smalltown save is)
    shutil.copyfile(V1, save)
    assert _version(save) == 1
    assert [p.name for p in tmp_path.iterdir()] == ["v1.sqlite"]
    before = _files(tmp_path)
    elsewhere = tmp_path / "out"
    elsewhere.mkdir()
    agent = "Isabella Rodriguez"
    readers = [
        ["save", "info", save, "--json"],
        ["save", "check", save],
        ["inspect", save, agent.split()[0]],
        ["replay", save],
        ["eval", "town", save, "--json"],
        ["fork", save, "--to", elsewhere / "fork.sqlite"],
        ["save", "strip", save, "-o", elsewhere / "strip.sqlite"],
    ]
    out = tmp_path.parent / f"{tmp_path.name}-logs"
    out.mkdir()
    argv = [sys.executable, "-c", DRIVER, json.dumps([[str(a) for a in c] for c in readers]), str(out)]
    done = subprocess.run(argv, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)},
                          cwd=ROOT, timeout=600)
    assert done.returncode == 0, done.stderr
    for argv, (code, stdout, err) in zip(readers, json.loads(done.stdout)):
        assert code == 0 and "Traceback" not in err, f"{argv[:2]}: {code}\n{stdout}\n{err}"
        now = _files(tmp_path)
        assert now == before, f"{argv[:2]} changed the save or left files beside it: {sorted(now)}"
    assert _version(elsewhere / "fork.sqlite") > 1
    # a writer still migrates it, in place
    cli("whisper", save, agent.split()[0], "hello", *SCRIPTED, check=True)
    assert _version(save) > 1


def _version(path: Path) -> int:
    """The save's schema version, read without making anything beside it (immutable: nobody writes it now)."""
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?immutable=1", uri=True)
    try:
        return int(conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0])
    finally:
        conn.close()
