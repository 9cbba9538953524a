"""Messages that send the user the right way: an interrupted write's -journal beside a save is rolled
back by the next writer and read rolled back by readers (never "the save is read-only"); a full
disk names the file that could not be written (the new save, not the one it is made from; the
world or map file of a pack) and leaves nothing; a --base-url that is not a URL is a usage error
naming the option.

A full disk is a tmpfs mounted in a mount namespace of the command's own (as root, with unshare:
the real ENOSPC), or, for anyone, a file size limit (RLIMIT_FSIZE, SIGXFSZ ignored: EFBIG), both
run in a child process that reports what it printed and what it left in the folder."""

from __future__ import annotations

import importlib.util
import json
import os
import resource
import shutil
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import cli, cli_within, file_sha
from smalltown.cli.execute import BUG

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("hostile_side_logs", ROOT / "tests" / "hostile" / "side_logs.py")
side_logs = importlib.util.module_from_spec(_spec)
sys.modules["hostile_side_logs"] = side_logs
_spec.loader.exec_module(side_logs)
WORLD = ROOT / "tests" / "worlds_bad" / "ok_base.toml"
SCRIPTED = ("--backend", "scripted")


@pytest.fixture(scope="module")
def bases(tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("bases")
    paths = {"wal": out / "wal.sqlite", "rollback": out / "rollback.sqlite"}
    side_logs.base_save(paths["rollback"], wal_mode=False)
    side_logs.base_save(paths["wal"], wal_mode=True)
    return paths


# --- an interrupted write's journal ----------------------------------------------------------------

READERS = {"save check", "save info", "save strip", "run --save", "inspect", "fork", "eval town", "run --from"}


def _commands(save: Path, work: Path) -> dict[str, list]:
    return {
        "save check": ["save", "check", save],
        "save info": ["save", "info", save],
        "save strip": ["save", "strip", save, "-o", work / "stripped.sqlite"],
        "run": ["run", save, "--headless", "--until", "+1m", *SCRIPTED],
        "run --save": ["run", save, "--headless", "--until", "+1m", *SCRIPTED, "--save", work / "new.sqlite"],
        "inspect": ["inspect", save, "John"],
        "whisper": ["whisper", save, "John", "be kind", *SCRIPTED],
        "interview": ["interview", save, "John", "How are you?", *SCRIPTED],
        "edit-object": ["edit-object", save, "Lin house:kitchen:stove", "warm"],
        "fork": ["fork", save, "--to", work / "fork.sqlite"],
        "eval town": ["eval", "town", save, *SCRIPTED],
        "run --from": ["run", WORLD, "--headless", "--until", "+1m", "--from", save, "--save",
                       work / "cassette.sqlite", "--fallthrough", "scripted"],
    }


def _uncommitted(save: Path) -> int:
    """Rows of the interrupted write in the file itself (read alone: the journal ignored)."""
    conn = sqlite3.connect(f"file:{save}?immutable=1", uri=True)
    try:
        return conn.execute("SELECT count(*) FROM memories WHERE description LIKE ?",
                            (f"%{side_logs.UNCOMMITTED}",)).fetchone()[0]
    finally:
        conn.close()


@pytest.mark.parametrize("command", list(_commands(Path("x"), Path("y"))))
def test_an_interrupted_writes_journal_is_rolled_back_by_writers_and_read_rolled_back(
        command: str, bases: dict[str, Path], tmp_path: Path, capsys, monkeypatch):
    folder = tmp_path / "shared"
    folder.mkdir()
    save = folder / side_logs.SAVE
    shutil.copyfile(bases["rollback"], save)
    side_logs._hot_journal(save)
    assert _uncommitted(save) > 0  # the file alone is torn
    before = {p.name: file_sha(p) for p in folder.iterdir()}
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    argv = _commands(save, work)[command]
    rc, out = cli_within(capsys, argv, 60)
    said = f"smalltown {' '.join(map(str, argv))} -> {rc}\n{out[-2000:]}"
    assert rc == 0 and "read-only" not in out and "Traceback" not in out and BUG not in out, said
    assert side_logs.UNCOMMITTED not in out, said
    if command in READERS:  # the save and its journal as they were
        assert {p.name: file_sha(p) for p in folder.iterdir()} == before, said
    else:  # rolled back in place by the writer, as SQLite does on opening: the last commit, and on
        assert not Path(f"{save}-journal").exists(), said
        assert _uncommitted(save) == 0
        conn = sqlite3.connect(save)
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        conn.close()


# --- a full disk ---------------------------------------------------------------------------------


def _can_mount() -> bool:
    if os.geteuid() != 0 or not shutil.which("unshare"):
        return False
    probe = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                            "mount -t tmpfs -o size=8k tmpfs /mnt"], capture_output=True)
    return probe.returncode == 0


# In a child: fill the folder's disk if asked, run one command, and print what it said and what
# it left in the folder (the filler aside).
DRIVER = r"""
import contextlib, io, json, os, sys
argv, folder, fill = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3] == "fill"
if fill:
    try:
        with open(os.path.join(folder, ".filler"), "wb", buffering=0) as f:
            while True:
                f.write(b"\0" * 4096)
    except OSError:
        pass
from smalltown.cli.main import main
out, err = io.StringIO(), io.StringIO()
with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
    try:
        rc = main(argv)
    except SystemExit as e:
        rc = e.code
left = sorted(os.path.relpath(os.path.join(d, n), folder) for d, ds, fs in os.walk(folder) for n in ds + fs
              if n != ".filler")
print(json.dumps([rc, out.getvalue(), err.getvalue(), left]))
"""

# How the disk is full: a tmpfs of SIZE, filled first ("fill") or with room for part of the work;
# or a file size limit of LIMIT bytes.
DISKS = [
    pytest.param(("tmpfs", "64k", "fill"), id="tmpfs-full", marks=pytest.mark.skipif(not _can_mount(), reason="needs root and unshare")),
    pytest.param(("tmpfs", "256k", ""), id="tmpfs-part", marks=pytest.mark.skipif(not _can_mount(), reason="needs root and unshare")),
    pytest.param(("fsize", 0, ""), id="fsize-0"),
    pytest.param(("fsize", 200_000, ""), id="fsize-200k"),
]


def _on_full_disk(disk: tuple, folder: Path, argv: list) -> tuple[int, str, str, list[str]]:
    kind, size, fill = disk
    folder.mkdir(exist_ok=True)
    cmd = [sys.executable, "-c", DRIVER, json.dumps([str(a) for a in argv]), str(folder), fill or "-"]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"}
    if kind == "tmpfs":
        cmd = ["unshare", "--mount", "--propagation", "private", "sh", "-c",
               'mount -t tmpfs -o size="$0" tmpfs "$1" && shift && exec "$@"', size, str(folder), *cmd]
        done = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    else:
        def limit() -> None:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # (a write past the limit fails, EFBIG)
            resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
        done = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT, timeout=300,
                              preexec_fn=limit)
    assert done.returncode == 0, done.stderr
    rc, out, err, left = json.loads(done.stdout.strip().splitlines()[-1])
    return rc, out, err, left


def _pack(tmp_path: Path) -> Path:
    out = tmp_path / "mini.smalltown-world"
    cli("world", "pack", WORLD, "-o", out, check=True)
    return out


# (a pack's files are small: the world's 929 bytes fit in a tmpfs of one 4 KiB page, its map does not)
UNPACK_DISKS = [
    pytest.param(("tmpfs", "4k", "fill"), id="tmpfs-full", marks=pytest.mark.skipif(not _can_mount(), reason="needs root and unshare")),
    pytest.param(("tmpfs", "4k", ""), id="tmpfs-room-for-the-world", marks=pytest.mark.skipif(not _can_mount(), reason="needs root and unshare")),
    pytest.param(("fsize", 0, ""), id="fsize-0"),
    pytest.param(("fsize", 500, ""), id="fsize-500"),
]


@pytest.mark.parametrize("disk", UNPACK_DISKS)
def test_a_full_disk_in_world_unpack_names_the_file_and_leaves_nothing(disk: tuple, tmp_path: Path):
    pack = _pack(tmp_path)
    folder = tmp_path / "disk"
    rc, out, err, left = _on_full_disk(disk, folder, ["world", "unpack", pack, "--to", folder / "town"])
    said = f"{rc}\n{out}\n{err}"
    assert rc == 1 and "Traceback" not in err and BUG not in err, said
    assert f"{folder}/town/worlds/" in err or f"{folder}/town/maps/" in err, f"no file named: {said}"
    assert "cannot write it" in err and "nothing was installed" in err, said
    assert left == [], f"left {left}: {said}"


def _copies(src: Path, folder: Path) -> dict[str, tuple[list, Path]]:
    """Commands that make a new save in `folder` (the full disk), from `src` (elsewhere) or a world."""
    return {
        "run --save (save as)": (["run", src, "--headless", "--until", "+1m", *SCRIPTED, "--save", folder / "new.sqlite"],
                                 folder / "new.sqlite"),
        "fork": (["fork", src, "--to", folder / "fork.sqlite"], folder / "fork.sqlite"),
        "save strip": (["save", "strip", src, "-o", folder / "strip.sqlite"], folder / "strip.sqlite"),
        "eval --copy": (["eval", "town", src, "--copy", folder / "e.sqlite", *SCRIPTED], folder / "e.sqlite"),
        "a new run's save": (["run", WORLD, "--headless", "--until", "+1m", *SCRIPTED, "--save", folder / "w.sqlite"],
                             folder / "w.sqlite"),
    }


@pytest.mark.parametrize("disk", DISKS)
@pytest.mark.parametrize("command", list(_copies(Path("x"), Path("y"))))
def test_a_full_disk_while_a_save_is_made_names_the_new_save_not_its_source(
        command: str, disk: tuple, bases: dict[str, Path], tmp_path: Path):
    if command == "eval --copy" and disk == ("fsize", 0, ""):
        pytest.skip("no file at all can be written: eval's temporary folder fails first, and Python's "
                    "tempfile names the folders it tried")
    src = tmp_path / "source" / "town.sqlite"
    src.parent.mkdir()
    shutil.copyfile(bases["wal"], src)
    before = file_sha(src)
    folder = tmp_path / "disk"
    argv, new = _copies(src, folder)[command]
    rc, out, err, left = _on_full_disk(disk, folder, argv)
    said = f"{command}: {rc}\n{out[-1500:]}\n{err}"
    assert rc == 1 and "Traceback" not in err and BUG not in err, said
    line = next((l for l in err.splitlines() if l.startswith("error:")), "")
    assert line.startswith(f"error: {new}: "), f"the new save is not the file named: {said}"
    assert str(src) not in line and ".partial" not in line and "continue it" not in line, said
    assert "nothing was made" in line, said
    assert left == [], f"left {left}: {said}"
    assert file_sha(src) == before and sorted(p.name for p in src.parent.iterdir()) == ["town.sqlite"]


# --- --base-url ----------------------------------------------------------------------------------


@pytest.mark.parametrize("url", ["http://[::1", "http://127.0.0.1:99999/v1", "http://127.0.0.1:x/v1",
                                 "ftp://127.0.0.1/v1", "http:///v1"])
def test_a_base_url_that_is_not_an_http_address_is_a_usage_error_naming_the_option(url: str, tmp_path: Path):
    done = cli("run", WORLD, "--headless", "--until", "+1m", "--backend", "openai", "--base-url", url,
               "--save", tmp_path / "s.sqlite")
    assert done.returncode == 2, f"{done.returncode}\n{done.stderr}"
    assert "'--base-url': " in done.stderr and BUG not in done.stderr, done.stderr
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("text", ['base_url = "http://[::1"\n', 'ctx = 2048\nbase_url = ["http://127.0.0.1:8080/v1", "http://[::1"]\n'])
def test_a_config_files_base_url_that_is_not_a_url_is_an_error_naming_the_file_and_line(text: str, tmp_path: Path,
                                                                                       monkeypatch):
    config = tmp_path / "config" / "smalltown" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(text, encoding="utf-8")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    done = cli("run", WORLD, "--headless", "--until", "+1m", "--backend", "openai", "--save", tmp_path / "s.sqlite")
    assert done.returncode == 2, f"{done.returncode}\n{done.stderr}"
    assert "http://[::1" in done.stderr and "not a URL" in done.stderr and BUG not in done.stderr, done.stderr
    assert f"{config}:{text.count(chr(10))}: base_url" in done.stderr, done.stderr
    assert not (tmp_path / "s.sqlite").exists()
