"""A save's schema is what smalltown writes, and its text is UTF-8 (store/schema_check.py).

Each save of tests/hostile/schema_edits.py (a type, a CHECK, a COLLATE, a DEFAULT, NOT NULL, a
generated or extra column, an index changed or dropped, a UTF-16 encoding, text that is not
UTF-8) is refused by `save check` and by every command that reads a save, with a message naming
the table or index and what differs, or the table, column and row; never a traceback, a write,
or a run that stops mid-day. Saves smalltown wrote, at every schema version it migrates, open."""

from __future__ import annotations

import importlib.util
import shutil
import sqlite3
import sys
from pathlib import Path

import pytest
import sqlite_utils

from helpers import cli_within, file_sha
from smalltown.cli.execute import BUG
from smalltown.store import schema_check, validate
from smalltown.store.save import Save
from smalltown.store.schema import MIGRATIONS, SCHEMA_VERSION, _create_v1, reference

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("schema_edits", ROOT / "tests" / "hostile" / "schema_edits.py")
edits = importlib.util.module_from_spec(_spec)
sys.modules["schema_edits"] = edits  # dataclasses look their module up
_spec.loader.exec_module(edits)
LIMIT = 20  # seconds one command may take on one case


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("schema-edits")
    edits.make_all(out)
    return out


def _commands(path: Path, work: Path) -> list[list]:
    """Every command that reads a save (each reads its schema and rows before anything else)."""
    scripted = ("--backend", "scripted")
    return [
        ["save", "check", path],
        ["save", "info", path],
        ["save", "strip", path, "-o", work / "stripped.sqlite"],
        ["run", path, "--headless", "--until", "+1m", *scripted],
        ["run", path, "--headless", "--until", "+1m", *scripted, "--save", work / "new.sqlite"],
        ["inspect", path, "John"],
        ["whisper", path, "John", "be kind", *scripted],
        ["interview", path, "John", "How are you?", *scripted],
        ["edit-object", path, "Lin house:kitchen:stove", "warm"],
        ["fork", path, "--to", work / "fork.sqlite"],
        ["replay", path],
    ]


def test_the_corpus_has_each_case_once():
    assert len(edits.CASES) >= 20 and len({c.name for c in edits.CASES}) == len(edits.CASES)


@pytest.mark.parametrize("case", edits.CASES, ids=lambda c: c.name)
def test_a_save_edited_outside_smalltown_is_refused_by_every_command(case, corpus: Path, tmp_path: Path, capsys,
                                                                     monkeypatch):
    import smalltown.tui.replay

    def no_screen(*a, **k):  # a replay that was not refused would open its screen here
        raise AssertionError("replay started its screen")

    monkeypatch.setattr(smalltown.tui.replay, "run_replay", no_screen)
    path = corpus / f"{case.name}.sqlite"
    before = file_sha(path)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    for argv in _commands(path, work):
        rc, out = cli_within(capsys, argv, LIMIT)
        said = f"smalltown {' '.join(map(str, argv))} -> {rc}\n{out}"
        assert "Traceback" not in out and BUG not in out, said
        assert rc == (1 if list(argv[:2]) == ["save", "check"] else 2) and case.expect in out and str(path) in out, f"expected {case.expect!r}: {said}"
        assert "damaged" not in out, said  # refused when opened, not failing mid-run
        assert file_sha(path) == before, f"{said}\nthe save was changed"
        for suffix in ("-wal", "-shm", "-journal"):
            assert not Path(f"{path}{suffix}").exists(), f"{said}\n{suffix} left beside the save"
        assert not (work / "new.sqlite").exists() and not (work / "fork.sqlite").exists(), said


def test_a_run_of_a_save_with_a_check_constraint_never_starts(corpus: Path, tmp_path: Path, capsys):
    """`save check` said ok, then a run stopped mid-day on the CHECK: it is refused before the first tick."""
    path = tmp_path / "c.sqlite"
    shutil.copyfile(corpus / "check-constraint.sqlite", path)
    rc, out = cli_within(capsys, ["run", path, "--headless", "--until", "+2h", "--backend", "scripted"], 60)
    assert rc == 2 and "has `CHECK (importance < 3)`" in out and "CHECK constraint failed" not in out, out
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT value FROM meta WHERE key = 'tick'").fetchone() == ("30",)


def test_save_check_lists_every_text_that_is_not_utf8_by_table_column_and_row(tmp_path: Path, capsys):
    path = tmp_path / "s.sqlite"
    edits.base_save(path)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE memories SET description = description || CAST(X'ff' AS TEXT) WHERE id IN (2, 5)")
        conn.execute("UPDATE events SET text = CAST(X'c3' AS TEXT) WHERE id = 7")
    conn.close()
    rc, out = cli_within(capsys, ["save", "check", path], LIMIT)
    assert rc == 1, out
    for where in ("memories rowid 2: description", "memories rowid 5: description", "events rowid 7: text"):
        assert f"{where}: not valid UTF-8" in out, out


def test_the_text_of_every_window_is_checked_and_its_rows_named(tmp_path: Path, monkeypatch):
    """Windows of 3 rows over 20: a bad text first, last, at a window's edge, long and past LARGEST
    are each found, and named by row and column; good text, blobs and numbers are not."""
    monkeypatch.setattr(schema_check, "WINDOW", 3)
    monkeypatch.setattr(schema_check, "SMALL", 16)
    monkeypatch.setattr(schema_check, "LARGEST", 64)
    conn = sqlite3.connect(tmp_path / "t.sqlite")
    conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, a TEXT, b TEXT)")
    conn.executemany("INSERT INTO t VALUES (?, ?, ?)",
                     [(i * 7, f"café {i} naïve ☕", bytes([0xff, i]) * 30) for i in range(1, 21)])
    bad = {7: b"\xff", 21: b"ok \xc3", 42: b"x" * 40 + b"\xe2\x82", 140: b"\xc0\x80" + b"y" * 100}
    for rowid, raw in bad.items():
        conn.execute("UPDATE t SET a = CAST(? AS TEXT) WHERE id = ?", (raw, rowid))
    conn.execute("UPDATE t SET a = 12, b = 'plain' WHERE id = 70")
    conn.commit()
    found = list(schema_check.text_problems(conn, ["t"]))
    assert [p.split(":")[0] for p in found] == [f"t rowid {r}" for r in sorted(bad)]
    assert all(": a: not valid UTF-8" in p for p in found)
    assert list(schema_check.text_problems(conn, ["t"], limit=2)) == found[:2]
    conn.close()


def test_a_long_text_is_read_one_at_a_time_and_a_huge_one_only_its_start(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(schema_check, "LARGEST", 1000)
    conn = sqlite3.connect(tmp_path / "t.sqlite")
    conn.execute("CREATE TABLE t (a TEXT)")
    conn.execute("INSERT INTO t VALUES (CAST(? AS TEXT))", ("é".encode() * 2000 + b"\xff",))  # past LARGEST: not read
    conn.execute("INSERT INTO t VALUES (CAST(? AS TEXT))", ("é".encode() * 5 + b"\xff" + b"x" * 4000,))
    assert [p.split(":")[0] for p in schema_check.text_problems(conn, ["t"])] == ["t rowid 2"]
    conn.close()


def test_every_text_a_save_may_hold_is_bounded_below_largest():
    """A text past LARGEST is checked only at its start: store/validate.py refuses it for its size."""
    for table, (_, cols) in validate.TABLES.items():
        for col in cols:
            if validate.TEXT in col.types:
                assert 0 < col.max_bytes <= schema_check.LARGEST, (table, col.name)
    ours = {(t, c) for t, (key, cols) in validate.TABLES.items() for c in (key, *(c.name for c in cols))}
    for kind, name, _, sql in reference():
        if kind == "table" and name != "meta":
            conn = sqlite3.connect(":memory:")
            conn.execute(sql)
            assert {(name, r[1]) for r in conn.execute(f"PRAGMA table_info({name})")} <= ours, name


def test_a_column_not_declared_text_holds_no_text_a_reader_reads():
    """Only TEXT columns are checked as UTF-8: in any other, a text is refused for its type, unread
    (an INTEGER PRIMARY KEY cannot hold one)."""
    conn = sqlite3.connect(":memory:")
    for kind, name, _, sql in reference():
        if kind == "table":
            conn.execute(sql)
    types = {(t, c.name): c.types for t, (_, cols) in validate.TABLES.items() for c in cols}
    for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall():
        for _, col, declared, _, _, pk in conn.execute(f"PRAGMA table_info({table})").fetchall():
            if declared.upper() != "TEXT" and not (pk and declared.upper() == "INTEGER"):
                assert validate.TEXT not in types[(table, col)], (table, col)


@pytest.mark.parametrize("version", range(1, SCHEMA_VERSION + 1))
def test_a_save_of_every_version_smalltown_migrates_has_the_schema_it_wrote(version: int, tmp_path: Path):
    """A database built as smalltown built a save of each version (schema 1, then each migration),
    with its meta: the schema check finds nothing wrong, and neither does opening it."""
    path = tmp_path / f"v{version}.sqlite"
    conn = sqlite3.connect(path)
    db = sqlite_utils.Database(conn)
    _create_v1(db)
    for v in range(1, version):
        MIGRATIONS[v](db)
    conn.commit()
    assert schema_check.schema_problem(conn) is None
    assert schema_check.missing_indexes(conn, version) == []
    conn.close()


def test_the_fixture_of_schema_1_and_the_saves_in_saves_open(tmp_path: Path):
    saves = [ROOT / "tests" / "fixtures" / "tiny-v1.sqlite", *sorted((ROOT / "saves").glob("*.sqlite"))]
    for save in saves:
        path = tmp_path / save.name
        shutil.copyfile(save, path)
        Save.open(path, readonly=True).close()


def test_sql_written_otherwise_but_meaning_the_same_is_the_same():
    ours = 'CREATE TABLE "memories" (\n   "id" INTEGER PRIMARY KEY,\n   "agent" TEXT\n)'
    for same in ("CREATE TABLE [memories] ([id] INTEGER PRIMARY KEY, [agent] TEXT)",
                 "create table memories (id integer primary key,agent text)",
                 "CREATE TABLE `memories` ( -- the memory stream\n `id` INTEGER /* key */ PRIMARY KEY, \"agent\" TEXT )"):
        assert schema_check.tokens(same) == schema_check.tokens(ours), same
    for other in ("CREATE TABLE memories (id INTEGER PRIMARY KEY, agent TEXT COLLATE NOCASE)",
                  "CREATE TABLE memories (id INT PRIMARY KEY, agent TEXT)",
                  "CREATE TABLE memories (id INTEGER PRIMARY KEY, agent TEXT DEFAULT 'a')",
                  "CREATE TABLE memories (id INTEGER PRIMARY KEY, agent TEXT) STRICT"):
        assert schema_check.tokens(other) != schema_check.tokens(ours), other
    assert schema_check.tokens("DEFAULT 'A'") != schema_check.tokens("DEFAULT 'a'")  # a literal is as written


def test_a_save_whose_sql_is_written_otherwise_opens(tmp_path: Path, capsys):
    """Quoting, case, spaces and comments are SQLite's to ignore, and smalltown's too."""
    path = tmp_path / "s.sqlite"
    edits.base_save(path)
    conn = sqlite3.connect(path)
    sql = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'memories'").fetchone()[0]
    conn.execute("PRAGMA writable_schema=ON")
    conn.execute("UPDATE sqlite_master SET sql = ? WHERE name = 'memories'",
                 (sql.replace('"', "").replace("\n  ", " /* was here */\n\t ").replace("TEXT", "text"),))
    conn.commit()
    conn.close()
    rc, out = cli_within(capsys, ["save", "check", path], LIMIT)
    assert rc == 0 and "ok" in out, out


def test_what_sqlite_itself_makes_for_a_key_is_no_stranger(tmp_path: Path):
    """sqlite_autoindex_* (a text PRIMARY KEY's index) are the save's; an ANALYZE's table is not."""
    path = tmp_path / "s.sqlite"
    edits.base_save(path)
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT count(*) FROM sqlite_master WHERE name LIKE 'sqlite_autoindex%'").fetchone()[0] > 0
        assert schema_check.schema_problem(conn) is None
        conn.execute("ANALYZE")
        assert "sqlite_stat1" in (schema_check.schema_problem(conn) or "")
    conn.close()
