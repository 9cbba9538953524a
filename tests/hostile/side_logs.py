"""Writes saves with hostile files beside them: SQLite's `-wal`, `-shm` and `-journal`, as a stranger's
archive or an interrupted write may leave them.

    python tests/hostile/side_logs.py DIR

Each case is a folder DIR/NAME holding `town.sqlite` (a real save, in the journal mode the case
names) and what lies beside it; a link points into DIR/NAME/mine/, files that stand for the user's
own. A command that only reads a save must change no byte in that folder, nor in mine/
(tests/test_readers_write_nothing.py), and read the save as a writer would find it (`tick`: the
tick a reader must see, None when the case is refused, `refused`: a substring of the message).
"""

from __future__ import annotations

import os
import random
import shutil
import sqlite3
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SAVE = "town.sqlite"
UNCOMMITTED = "(never committed)"  # what an interrupted write left in a torn file
MINE = "mine"  # the user's own files, which a link beside the save points to


@dataclass(frozen=True)
class SideCase:
    name: str
    wal_mode: bool  # the save's header says write-ahead log (every save smalltown writes), else rollback
    make: Callable[[Path], None]  # given the save, puts what lies beside it
    refused: str = ""  # a substring of the message of a reader that refuses it ("": it is read)
    later: bool = False  # the side files hold commits the file lacks: a reader sees a later tick


CASES: list[SideCase] = []


def _noise(n: int, seed: int) -> bytes:
    return random.Random(seed).randbytes(n)


def _write(path: Path, data: bytes) -> None:
    path.write_bytes(data)


def _other_database_wal(save: Path) -> None:
    """The -wal of another database (a table `t`, 40 commits), never checkpointed."""
    folder = save.parent / "other"
    folder.mkdir()
    conn = sqlite3.connect(folder / "o.sqlite", isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA wal_autocheckpoint=0")
    conn.execute("CREATE TABLE t(x)")
    for i in range(40):
        conn.execute("INSERT INTO t VALUES (?)", (_noise(100, i),))
    shutil.copyfile(folder / "o.sqlite-wal", f"{save}-wal")  # (copied while open: its log is whole)
    conn.close()
    shutil.rmtree(folder)


def _link(save: Path, suffix: str, content: bytes) -> None:
    mine = save.parent / MINE
    mine.mkdir(exist_ok=True)
    target = mine / f"precious{suffix}"
    target.write_bytes(content)
    os.symlink(target, f"{save}{suffix}")


def _hard_link(save: Path, suffix: str, content: bytes) -> None:
    mine = save.parent / MINE
    mine.mkdir(exist_ok=True)
    target = mine / f"precious{suffix}"
    target.write_bytes(content)
    os.link(target, f"{save}{suffix}")


def _hot_journal(save: Path) -> None:
    """A real interrupted write: a process marks every memory and event "(never committed)" and adds
    4 MB of rows in one transaction, whose pages spill into the file before the commit (a small
    cache), and dies: the file is torn (it holds the marks), and the -journal beside it holds the
    pages as they were, which SQLite rolls back when a writer opens the save."""
    pid = os.fork()
    if pid == 0:
        try:
            conn = sqlite3.connect(save, isolation_level=None)
            conn.execute("PRAGMA cache_size=10")
            conn.execute("BEGIN")
            conn.execute(f"UPDATE memories SET description = description || ' {UNCOMMITTED}'")
            conn.execute(f"UPDATE events SET text = text || ' {UNCOMMITTED}'")
            conn.execute("CREATE TABLE filler(x)")
            conn.execute("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 400) "
                         "INSERT INTO filler SELECT randomblob(10000) FROM n")
        finally:
            os._exit(0)  # (dies in the transaction: nothing is rolled back or removed)
    os.waitpid(pid, 0)
    assert Path(f"{save}-journal").stat().st_size > 0
    torn = sqlite3.connect(f"file:{save}?immutable=1", uri=True)  # the file alone, the journal ignored
    try:
        assert torn.execute(f"SELECT count(*) FROM memories WHERE description LIKE '%{UNCOMMITTED}'").fetchone()[0]
    finally:
        torn.close()


def _killed_run(save: Path) -> None:
    """A run killed after some ticks, its commits in the -wal beside the save (never checkpointed)
    with its -shm; the dead writer's lock file left too (flock died with it)."""
    pid = os.fork()
    if pid == 0:
        try:
            from smalltown.scripted import ScriptedBackend
            from smalltown.sim.open import resume

            sim = resume(save, ScriptedBackend(0))
            sim.save.conn.execute("PRAGMA wal_autocheckpoint=0")
            sim.save._stop_checkpointer()
            sim.save._checkpointer = False  # (none: every tick stays in the log)
            for _ in range(12):
                sim.step()
            sim.snapshot()  # (ticks that changed nothing wrote nothing: this commits the clock)
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    assert Path(f"{save}-wal").stat().st_size > 0


def case(name: str, make: Callable[[Path], None], modes: tuple[bool, ...] = (True, False), refused: str = "",
         later: bool = False) -> None:
    for wal_mode in modes:
        CASES.append(SideCase(f"{name}-{'wal' if wal_mode else 'rollback'}", wal_mode, make, refused, later))


case("nothing-beside", lambda s: None)
case("wal-empty", lambda s: _write(Path(f"{s}-wal"), b""))
case("wal-garbage", lambda s: _write(Path(f"{s}-wal"), _noise(5000, 1)))
case("wal-other-database", _other_database_wal, refused="that smalltown does not make")
case("shm-empty", lambda s: _write(Path(f"{s}-shm"), b""))
case("shm-garbage", lambda s: _write(Path(f"{s}-shm"), _noise(32768, 2)))
case("wal-and-shm-garbage", lambda s: (_write(Path(f"{s}-wal"), _noise(5000, 3)),
                                       _write(Path(f"{s}-shm"), _noise(32768, 4))))
case("wal-empty-shm-garbage", lambda s: (_write(Path(f"{s}-wal"), b""), _write(Path(f"{s}-shm"), _noise(32768, 5))))
case("journal-empty", lambda s: _write(Path(f"{s}-journal"), b""))
case("journal-garbage", lambda s: _write(Path(f"{s}-journal"), _noise(3000, 6)))
case("journal-hot", _hot_journal, modes=(False,))
case("killed-run", _killed_run, modes=(True,), later=True)
case("stale-lock", lambda s: _write(Path(f"{s}.lock"), b"12345\nsmalltown run town.sqlite\n"))
case("wal-symlink", lambda s: _link(s, "-wal", b"my notes\n"), refused="a symbolic link")
case("shm-symlink", lambda s: _link(s, "-shm", b"my notes\n"), refused="a symbolic link")
case("journal-symlink", lambda s: _link(s, "-journal", b"my notes\n"), refused="a symbolic link")
case("wal-dangling-symlink", lambda s: os.symlink(s.parent / "nowhere", f"{s}-wal"), refused="a symbolic link")
case("wal-hard-link", lambda s: _hard_link(s, "-wal", _noise(5000, 7)), refused="hard links")
case("shm-hard-link", lambda s: _hard_link(s, "-shm", _noise(32768, 8)), refused="hard links")
case("wal-is-a-folder", lambda s: Path(f"{s}-wal").mkdir(), refused="is a folder")
case("shm-is-a-fifo", lambda s: os.mkfifo(f"{s}-shm"), refused="is a named pipe")


def base_save(path: Path, wal_mode: bool) -> None:
    """A real save (tests/hostile/make.py's: a short scripted run), in the journal mode asked."""
    sys.path.insert(0, str(HERE))
    import make  # (tests/hostile/make.py)

    make.base_save(path)  # (rollback mode: one file, as a shared save is)
    if wal_mode:
        conn = sqlite3.connect(path)
        conn.execute("PRAGMA journal_mode=WAL")  # (closed, the log is folded in and removed)
        conn.close()


def make_case(c: SideCase, out: Path, bases: dict[bool, Path]) -> Path:
    """The case as OUT/NAME/town.sqlite with its side files; returns the save's path."""
    folder = out / c.name
    folder.mkdir(parents=True)
    save = folder / SAVE
    shutil.copyfile(bases[c.wal_mode], save)
    c.make(save)
    return save


def make_all(out: Path) -> list[tuple[SideCase, Path]]:
    out.mkdir(parents=True, exist_ok=True)
    bases = {mode: out / f"_base-{'wal' if mode else 'rollback'}.sqlite" for mode in (True, False)}
    for mode, path in bases.items():
        base_save(path, mode)
    return [(c, make_case(c, out, bases)) for c in CASES]


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.path.insert(0, str(ROOT))
    for c, path in make_all(Path(sys.argv[1])):
        print(f"{c.name:36} {sorted(p.name for p in path.parent.iterdir())}")
