"""SQLite stays inside store/: no other module imports sqlite3 or touches a save's connection
(`.conn`), and every SQLite error a save meets (damage, a lock, a table it lacks) comes out of
store/ as a SaveError naming the save's file."""

from __future__ import annotations

import ast
import inspect
import sqlite3
from pathlib import Path

import pytest

from handmade import KLAUS, HandSave
from helpers import ROOT
from smalltown.store.errors import SaveError, SQLiteError
from smalltown.store.reader import Reader
from smalltown.store.records import TickChanges
from smalltown.store.save import Save, open_reader

PACKAGE = ROOT / "smalltown"


def _outside_store() -> list[Path]:
    return [p for p in sorted(PACKAGE.rglob("*.py")) if "store" not in p.relative_to(PACKAGE).parts[:1]]


def test_no_module_outside_store_imports_sqlite3():
    found = []
    for path in _outside_store():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            found += [f"{path.relative_to(ROOT)}:{node.lineno}" for n in names if n.split(".")[0] == "sqlite3"]
    assert len(_outside_store()) > 100 and found == []


def test_no_module_outside_store_touches_a_connection():
    found = [f"{path.relative_to(ROOT)}:{node.lineno}" for path in _outside_store()
             for node in ast.walk(ast.parse(path.read_text(), str(path)))
             if isinstance(node, ast.Attribute) and node.attr == "conn"]
    assert found == []


def test_the_scans_see_what_they_look_for():
    """The two scans above would find a module that broke the rule (store/ itself does both)."""
    tree = ast.parse((PACKAGE / "store" / "save.py").read_text())
    assert any(isinstance(n, ast.Import) and n.names[0].name == "sqlite3" for n in ast.walk(tree))
    assert any(isinstance(n, ast.Attribute) and n.attr == "conn" for n in ast.walk(tree))


@pytest.mark.parametrize("cls", [Save, Reader])
def test_every_public_method_says_sqlite_errors_as_save_errors(cls):
    public = [(name, f) for name, f in inspect.getmembers(cls, inspect.isfunction) if not name.startswith("_")]
    assert len(public) > 20
    assert [name for name, f in public if not hasattr(f, "__wrapped__")] == []


@pytest.fixture
def hand(tmp_path: Path) -> HandSave:
    h = HandSave(tmp_path / "seam.sqlite")
    for tick in range(1, 40):
        h.at(tick, memories=[h.memory(KLAUS, "observation", f"Klaus sees the {tick}th bird", tick)])
    h.close()
    return h


def _scramble(path: Path, table: str) -> None:
    """The table's root page: its b-tree header scrambled (what a bad disk or a cut copy leaves)."""
    conn = sqlite3.connect(path)
    page = conn.execute("PRAGMA page_size").fetchone()[0]
    root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)).fetchone()[0]
    conn.close()
    data = bytearray(path.read_bytes())
    start = (root - 1) * page
    data[start:start + 12] = b"\x0d\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff"
    path.write_bytes(bytes(data))


def test_a_damaged_save_read_is_a_save_error_naming_the_file(hand: HandSave):
    _scramble(hand.path, "memories")
    save = Save.open(hand.path, readonly=True, rows=False)  # (as `save check` opens it: rows not read yet)
    try:
        with pytest.raises(SQLiteError) as e:
            save.reader().memories()
        assert str(e.value).startswith(f"{hand.path}: the save is damaged") and "malformed" in e.value.said
        assert isinstance(e.value, SaveError)
    finally:
        save.close()
    with pytest.raises(SaveError, match=f"^{hand.path}: "):  # opened as every command opens one: refused
        open_reader(hand.path)


def test_a_locked_save_is_a_save_error_naming_the_file(hand: HandSave):
    save = Save.open(hand.path)
    other = sqlite3.connect(hand.path, isolation_level=None)  # not smalltown: it takes no writer lock
    try:
        other.execute("BEGIN IMMEDIATE")
        save.conn.execute("PRAGMA busy_timeout=50")  # (SQLite waits 5 s by default)
        with pytest.raises(SaveError, match="another process is writing this save") as e:
            save.commit(TickChanges(40, hand.time(40), meta={"tick": 40}))
        assert str(e.value).startswith(f"{hand.path}: ") and "locked" in e.value.said
        other.execute("ROLLBACK")
        assert save.meta("tick") == 39  # nothing of the tick was written
    finally:
        other.close()
        save.close()


def test_a_read_of_a_missing_table_is_a_save_error_naming_the_file(tmp_path: Path):
    path = tmp_path / "bare.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
    conn.commit()
    with pytest.raises(SaveError, match=f"^{path}: no such table: events"):
        Reader(conn, path=path).events()
    with pytest.raises(SaveError, match=f"^{path}: no such table: llm_calls"):  # its own file, when not told
        Reader(conn).calls()
    conn.close()


def test_a_streamed_read_says_its_errors_as_it_goes(tmp_path: Path):
    """A generator's error comes when it is iterated, and is a SaveError too."""
    path = tmp_path / "bare.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
    rows = Reader(conn, path=path).snapshot_rows()  # (a save without snapshots has none: no error)
    assert list(rows) == []
    with pytest.raises(SaveError, match=f"^{path}: no such column"):
        conn.execute("CREATE TABLE conversations (id INTEGER PRIMARY KEY)")  # its columns missing
        list(Reader(conn, path=path).raw_conversations())
    conn.close()


# --- one way to make tables: sqlite-utils; a save whose tables were made by hand-written SQL still opens

HAND_SQL = {  # as smalltown wrote these before every table was made through sqlite-utils
    "conversations": "CREATE TABLE conversations (id INTEGER PRIMARY KEY, tick INTEGER, time TEXT, end_time TEXT, "
                     "place TEXT, initiator TEXT, other TEXT, reason TEXT, lines TEXT, chats TEXT, relationships TEXT)",
    "idx_conversations_tick": "CREATE INDEX idx_conversations_tick ON conversations (tick)",
    "plans": "CREATE TABLE plans (agent TEXT PRIMARY KEY, plan TEXT)",
}
HAND_COLUMNS = "\n, key TEXT, fallback TEXT NOT NULL DEFAULT '', attempts TEXT)"  # llm_calls' ALTER TABLEs


def test_a_save_with_tables_made_by_hand_written_sql_opens_and_checks_clean(hand: HandSave, capsys):
    from smalltown.cli.main import main

    conn = sqlite3.connect(hand.path)
    made = dict(conn.execute("SELECT name, sql FROM sqlite_master WHERE sql IS NOT NULL"))
    assert all(made[name] != sql for name, sql in HAND_SQL.items())  # (a new save's spelling is another)
    calls = made["llm_calls"]
    assert not calls.endswith(HAND_COLUMNS)
    conn.execute("PRAGMA writable_schema=ON")
    for name, sql in {**HAND_SQL, "llm_calls": calls[:calls.index('\n, "key"')] + HAND_COLUMNS}.items():
        conn.execute("UPDATE sqlite_master SET sql = ? WHERE name = ?", (sql, name))
    conn.commit()
    conn.close()
    conn = sqlite3.connect(hand.path)
    assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert conn.execute("SELECT sql FROM sqlite_master WHERE name = 'plans'").fetchone()[0] == HAND_SQL["plans"]
    conn.close()
    capsys.readouterr()
    assert main(["save", "check", str(hand.path)]) == 0, capsys.readouterr()
    save = Save.open(hand.path)  # to continue it: its schema checked, as every open checks it
    try:
        save.commit(TickChanges(40, hand.time(40), meta={"tick": 40, "game_time": hand.time(40)}))
        assert save.meta("tick") == 40
    finally:
        save.close()
