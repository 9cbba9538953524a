"""Writes saves whose schema or text was changed outside smalltown: one real save, copied and edited.

    python tests/hostile/schema_edits.py DIR

Each case changes what a table or index is (through `PRAGMA writable_schema`, as a stranger can,
or through ALTER TABLE), the database's text encoding, or puts text that is not UTF-8 in a row.
Every command that reads a save must refuse it with a message naming what differs (`expect`, a
substring), never a traceback, a write, or a failure mid-run. tests/test_schema_check.py runs them.
"""

from __future__ import annotations

import shutil
import sqlite3
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


@dataclass(frozen=True)
class EditCase:
    name: str
    expect: str  # a substring of the message every reading command gives
    make: Callable[[Path, Path], None]  # (the base save, the case's file)


CASES: list[EditCase] = []


def _copy_and(*sql: str | tuple, writable_schema: bool = False) -> Callable[[Path, Path], None]:
    """A copy of the base save with `sql` run on it (each a statement, or (statement, parameters))."""
    def make(base: Path, path: Path) -> None:
        shutil.copyfile(base, path)
        conn = sqlite3.connect(path, isolation_level=None)
        if writable_schema:
            conn.execute("PRAGMA writable_schema=ON")
        conn.execute("BEGIN")
        for s in sql:
            conn.execute(*s) if isinstance(s, tuple) else conn.execute(s)
        conn.execute("COMMIT")
        if writable_schema:
            conn.execute("PRAGMA writable_schema=OFF")
        conn.execute("PRAGMA journal_mode=DELETE")  # one file, as a shared save is
        conn.close()
    return make


def case(name: str, expect: str, *sql: str | tuple) -> None:
    CASES.append(EditCase(name, expect, _copy_and(*sql)))


def schema_case(name: str, expect: str, entry: str, old: str, new: str) -> None:
    """The SQL sqlite_master holds for `entry` with `old` replaced by `new`, the rows untouched."""
    sql = ("UPDATE sqlite_master SET sql = replace(sql, ?, ?) WHERE name = ? AND instr(sql, ?)", (old, new, entry, old))
    CASES.append(EditCase(name, expect, _copy_and(sql, writable_schema=True)))


# --- a table's columns --------------------------------------------------------------------------
schema_case("type-text", "its column is `importance TEXT`; smalltown makes `importance INTEGER`",
            "memories", '"importance" INTEGER', '"importance" TEXT')
schema_case("check-constraint", "has `CHECK (importance < 3)`",
            "memories", '"evidence" TEXT\n)', '"evidence" TEXT,\n   CHECK (importance < 3)\n)')
schema_case("collate", "its column is `agent TEXT COLLATE NOCASE`", "memories", '"agent" TEXT', '"agent" TEXT COLLATE NOCASE')
schema_case("default-changed", "its column is `fallback TEXT NOT NULL DEFAULT 'invalid'`",
            "llm_calls", "NOT NULL DEFAULT ''", "NOT NULL DEFAULT 'invalid'")
schema_case("not-null-dropped", "its column is `fallback TEXT DEFAULT ''`",
            "llm_calls", "NOT NULL DEFAULT ''", "DEFAULT ''")
schema_case("unique-column", "its column is `kind TEXT UNIQUE`", "events", '"kind" TEXT', '"kind" TEXT UNIQUE')
schema_case("generated-in-place", "its column is `importance INTEGER GENERATED ALWAYS AS (10) VIRTUAL`",
            "memories", '"importance" INTEGER', '"importance" INTEGER GENERATED ALWAYS AS (10) VIRTUAL')
case("generated-column", "has a column `bonus INTEGER GENERATED ALWAYS AS (importance * 2) VIRTUAL`",
     "ALTER TABLE memories ADD COLUMN bonus INTEGER GENERATED ALWAYS AS (importance * 2) VIRTUAL")
case("extra-column", "has a column `mood TEXT` that smalltown does not make", "ALTER TABLE agents ADD COLUMN mood TEXT")
case("renamed-column", "has a column `words TEXT` that smalltown does not make",
     "ALTER TABLE memories RENAME COLUMN description TO words")

# --- indexes ------------------------------------------------------------------------------------
schema_case("index-columns", "smalltown makes `CREATE INDEX idx_memories_agent_id ON memories (agent, id)`",
            "idx_memories_agent_id", '("agent", "id")', '("agent")')
schema_case("index-unique", "the index idx_events_tick is `CREATE UNIQUE INDEX",
            "idx_events_tick", "CREATE INDEX", "CREATE UNIQUE INDEX")
case("index-dropped", "the index idx_memories_agent_id on memories is missing", "DROP INDEX idx_memories_agent_id")
schema_case("index-on-expression", "the index idx_events_tick is `CREATE INDEX idx_events_tick ON events (abs (tick))`",
            "idx_events_tick", '("tick")', '(abs("tick"))')

# --- a table's options, and what SQLite makes ---------------------------------------------------
schema_case("strict", "the table objects ends `) STRICT`; smalltown's ends `)`", "objects", "\n)", "\n) STRICT")
case("autoincrement-sequence", "it holds a table 'sqlite_sequence' that smalltown does not make",
     "CREATE TABLE counter (id INTEGER PRIMARY KEY AUTOINCREMENT)", "INSERT INTO counter VALUES (NULL)", "DROP TABLE counter")
CASES.append(EditCase("name-not-utf8", "sqlite_master rowid", _copy_and(  # the index renamed, in its SQL too
    ("UPDATE sqlite_master SET name = CAST(X'69647878ff' AS TEXT), sql = replace(sql, '\"idx_events_tick\"', "
     "CAST(X'2269647878ff22' AS TEXT)) WHERE name = 'idx_events_tick'",), writable_schema=True)))
CASES.append(EditCase("name-not-utf8-malformed", "its schema is malformed (a name that is not UTF-8 text)", _copy_and(  # SQLite's message names it
    "UPDATE sqlite_master SET name = CAST(X'69647878ff' AS TEXT) WHERE name = 'idx_events_tick'", writable_schema=True)))

# --- text ---------------------------------------------------------------------------------------
_LAST = "(SELECT max(id) FROM memories)"
case("description-not-utf8", "memories rowid", f"UPDATE memories SET description = CAST(X'48656c6c6fff21' AS TEXT) WHERE id = {_LAST}")
case("description-cut-utf8", "description: not valid UTF-8",  # a character cut short, the text going on
     f"UPDATE memories SET description = CAST(X'636166c3' AS TEXT) || ' au lait' WHERE id = {_LAST}")
case("long-text-not-utf8", "events rowid 1: text: not valid UTF-8",  # longer than a window joins
     "UPDATE events SET text = printf('%.5000c', 'e') || CAST(X'ed' AS TEXT) WHERE id = 1")
case("agent-name-not-utf8", "agents rowid 1: name: not valid UTF-8",
     "UPDATE agents SET name = name || CAST(X'c0' AS TEXT) WHERE rowid = 1",
     "UPDATE plans SET agent = agent || CAST(X'c0' AS TEXT) WHERE rowid = 1")
case("meta-not-utf8", "meta rowid", "UPDATE meta SET value = CAST(X'22e282' AS TEXT) || '\"' WHERE key = 'created_with'")
case("past-unicode", "memories rowid 1: description: not valid UTF-8",  # a code point past U+10FFFF
     "UPDATE memories SET description = 'x' || CAST(X'f4908080' AS TEXT) WHERE id = 1")
case("meta-key-not-utf8", "meta rowid", "INSERT INTO meta VALUES (CAST(X'6bff' AS TEXT), '1')")
case("surrogate-in-call", "llm_calls rowid 1: note: not valid UTF-8",  # UTF-16's surrogates are not UTF-8
     "UPDATE llm_calls SET note = 'fallback ' || CAST(X'eda080' AS TEXT) WHERE id = 1")


def _utf16(base: Path, path: Path) -> None:
    """The base save's tables and rows in a new database whose text is UTF-16."""
    path.unlink(missing_ok=True)
    src, dst = sqlite3.connect(base), sqlite3.connect(path)
    dst.execute("PRAGMA encoding='UTF-16le'")
    for (sql,) in src.execute("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY type DESC").fetchall():
        dst.execute(sql)  # tables, then indexes
    for (table,) in src.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall():
        rows = src.execute(f'SELECT * FROM "{table}"').fetchall()
        if rows:
            dst.executemany(f'INSERT INTO "{table}" VALUES ({", ".join("?" * len(rows[0]))})', rows)
    dst.commit()
    src.close()
    dst.close()


CASES.append(EditCase("utf-16", "its text is encoded as UTF-16le; smalltown saves are UTF-8", _utf16))


def base_save(path: Path) -> None:
    """A real save: tests/hostile/make.py's base world run 30 ticks by the scripted backend."""
    sys.path.insert(0, str(HERE))
    import make

    make.base_save(path)


def make_all(out: Path, base: Path | None = None) -> list[EditCase]:
    """Every case as OUT/NAME.sqlite, each from one base save (made once)."""
    out.mkdir(parents=True, exist_ok=True)
    if base is None:
        base = out / "_base.sqlite"
        base_save(base)
    for c in CASES:
        c.make(base, out / f"{c.name}.sqlite")
    return CASES


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.path.insert(0, str(ROOT))
    for c in make_all(Path(sys.argv[1])):
        print(f"{c.name:24} {c.expect}")
