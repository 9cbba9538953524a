"""A save's schema and text as smalltown writes them: checked before any row of it is used.

The schema: every entry of sqlite_master (table, index, trigger, view) is compared with the one
this version makes (store/schema.py's `reference`, built in memory), by its SQL, not only its
columns: a declared type, a CHECK, a COLLATE, a DEFAULT, NOT NULL, a generated column, an index's
columns or UNIQUE changed by hand (`PRAGMA writable_schema`, or a table rebuilt) would make a run
write rows the next open refuses, or fail mid-day. The SQL is compared token by token, with
identifiers unquoted and case folded, whitespace and comments dropped, so that how a version of
sqlite-utils quoted or laid out a name makes no difference.

An older save holds what its version made: a table may lack the columns a later migration adds
(store/validate.py names those its version must have, and the migrations add the rest), and an
index its version made must be there. Each column it has is declared as this version declares it,
in any order (a save whose version was set back by hand gets the columns of the migrations after
it in another order; smalltown names the columns it reads and writes).

The text: the save's encoding is UTF-8, and each text value is valid UTF-8 (Python cannot read
it otherwise, and the failure would name no file, table or row). Checked in SQL, a window of
rows at a time: the window's texts are joined by SQLite and decoded at once, so a save's rows
are never all in memory and Python is called once per window, not per value.
"""

from __future__ import annotations

import codecs
import re
import sqlite3
from typing import Iterator

from smalltown.store.schema import SCHEMA_VERSION, Entry, reference

EDITED = "changed outside smalltown, which opens only the schema it writes: use the save as smalltown wrote it"

_TOKEN = re.compile(r"""
    (?P<space>[ \t\n\v\f\r]+|--[^\n]*|/\*.*?(?:\*/|\Z))
  | (?P<string>'(?:[^']|'')*')
  | (?P<blob>[xX]'[^']*')
  | (?P<quoted>"(?:[^"]|"")*"|`(?:[^`]|``)*`|\[[^\]]*\])
  | (?P<word>[A-Za-z0-9_$\x80-\U0010ffff]+(?:\.[0-9]*(?:[eE][+-]?[0-9]+)?)?)
  | (?P<other>\|\||<<|>>|<=|>=|==|!=|<>|->>|->|.)
""", re.S | re.X)
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
CONSTRAINTS = ("constraint", "primary", "unique", "check", "foreign")  # a table constraint's first word


def tokens(sql: str, fold: bool = True) -> tuple[str, ...]:
    """SQL as SQLite reads it: identifiers unquoted, names and keywords in lower case (SQLite
    folds ASCII only; not `fold`: as written, to be shown), string and blob literals as written,
    whitespace and comments dropped."""
    out = []
    for m in _TOKEN.finditer(sql):
        kind, text = m.lastgroup, m.group()
        if kind == "space":
            continue
        if kind == "quoted":
            q = text[0]
            text = text[1:-1] if q == "[" else text[1:-1].replace(q + q, q)
        if fold and kind in ("quoted", "word", "blob"):
            text = text.translate(_ASCII_LOWER) if kind != "blob" else "x" + text[1:].lower()
        out.append(text)
    return tuple(out)


def shown(toks: tuple[str, ...], most: int = 160) -> str:
    """Tokens as one line of SQL for a message: printable, and cut at `most` characters."""
    text = re.sub(r"\( | (?=[),])", lambda m: m.group().strip(), " ".join(toks))
    text = "".join(c if c.isprintable() else f"\\x{ord(c):02x}" if ord(c) < 256 else f"\\u{ord(c):04x}"
                   for c in text)
    return text if len(text) <= most else text[:most - 1] + "…"


def _table_parts(toks: tuple[str, ...]) -> tuple[tuple, list[tuple], tuple] | None:
    """CREATE TABLE name ( defs ) tail -> (head, each definition, tail), each as (start, end) of
    `toks`; None when the SQL is not of that shape."""
    if len(toks) < 4 or toks[:2] != ("create", "table") or toks[3] != "(":
        return None
    depth, start, defs = 0, 4, []
    for i in range(3, len(toks)):
        if toks[i] == "(":
            depth += 1
        elif toks[i] == ")":
            depth -= 1
            if depth == 0:
                defs.append((start, i))
                return (0, 3), defs, (i + 1, len(toks))
        elif toks[i] == "," and depth == 1:
            defs.append((start, i))
            start = i + 1
    return None


class _Sql:
    """One entry's SQL as tokens: folded to compare, as written to show."""

    def __init__(self, sql: str):
        self.folded, self.raw = tokens(sql), tokens(sql, fold=False)
        self.parts = _table_parts(self.folded)

    def key(self, span: tuple[int, int]) -> tuple[str, ...]:
        return self.folded[span[0]:span[1]]

    def show(self, span: tuple[int, int] | None = None) -> str:
        return shown(self.raw if span is None else self.raw[span[0]:span[1]])

    def columns(self) -> dict[str, tuple[int, int]]:
        """name -> span of each column definition (not the table's constraints), in order."""
        assert self.parts is not None
        return {self.folded[a]: (a, b) for a, b in self.parts[1] if b > a and self.folded[a] not in CONSTRAINTS}

    def rules(self) -> list[tuple[int, int]]:
        assert self.parts is not None
        return [(a, b) for a, b in self.parts[1] if b == a or self.folded[a] in CONSTRAINTS]


def _table_difference(name: str, got: _Sql, want: _Sql) -> str | None:
    """What differs between the save's table and this version's, column by column (None: alike;
    a column its version lacks may be missing, see the module's comment)."""
    if got.folded == want.folded:
        return None
    if got.parts is None or want.parts is None or got.key(got.parts[0]) != want.key(want.parts[0]):
        return f"the table {name} is `{got.show()}`; smalltown makes `{want.show()}`"
    theirs, ours = got.columns(), want.columns()
    for col, span in theirs.items():  # (in any order: smalltown names the columns it reads and writes)
        if col not in ours:
            return f"the table {name} has a column `{got.show(span)}` that smalltown does not make"
        if got.key(span) != want.key(ours[col]):
            return f"the table {name}: its column is `{got.show(span)}`; smalltown makes `{want.show(ours[col])}`"
    if len(got.parts[1]) != len(theirs) + len(got.rules()):  # a column twice (SQLite itself refuses that)
        return f"the table {name} is `{got.show()}`; smalltown makes `{want.show()}`"
    their_rules = {got.key(r): r for r in got.rules()}
    our_rules = {want.key(r): r for r in want.rules()}
    for rule, span in their_rules.items():
        if rule not in our_rules:
            return f"the table {name} has `{got.show(span)}`, which smalltown does not make"
    for rule, span in our_rules.items():
        if rule not in their_rules:
            return f"the table {name} lacks `{want.show(span)}`, which smalltown makes"
    if got.key(got.parts[2]) != want.key(want.parts[2]):
        ends = [f"`){' ' + t if t else ''}`" for t in (got.show(got.parts[2]), want.show(want.parts[2]))]
        return f"the table {name} ends {ends[0]}; smalltown's ends {ends[1]}"
    return None


def _decoded(row: tuple) -> tuple[str | None, ...] | None:
    try:
        return tuple(None if v is None else bytes(v).decode("utf-8") for v in row)
    except UnicodeDecodeError:
        return None


def entries(conn: sqlite3.Connection) -> list[Entry] | str:
    """(type, name, table, SQL) of every entry of the save's sqlite_master, or what is wrong
    with one that is not UTF-8 text (read as bytes: Python could not read it as text)."""
    out: list[Entry] = []
    for rowid, *row in conn.execute("SELECT rowid, CAST(type AS BLOB), CAST(name AS BLOB), "
                                    "CAST(tbl_name AS BLOB), CAST(sql AS BLOB) FROM sqlite_master"):
        text = _decoded(tuple(row))
        if text is None or None in text[:3]:
            return f"sqlite_master rowid {rowid}: its type, name or SQL is not UTF-8 text"
        out.append(text)  # type: ignore[arg-type]
    return out


def schema_problem(conn: sqlite3.Connection) -> str | None:
    """What in the save's sqlite_master this version does not make (None: nothing): a trigger or
    a view (code stored in the file), an entry it never makes, or one it makes otherwise."""
    found = entries(conn)
    if isinstance(found, str):
        return found
    want = {(kind, name): (table, sql) for kind, name, table, sql in reference(SCHEMA_VERSION)}
    for kind, name, table, sql in found:
        if kind in ("trigger", "view"):
            return (f"it holds a {kind} {name!r}, and smalltown saves never do (a {kind} runs code stored "
                    f"in the file)")
        if (kind, name) not in want:
            # an index someone added is refused too: a UNIQUE one makes a run's writes fail
            article = "an" if kind == "index" else "a"
            return f"it holds {article} {kind} {shown((name,))!r} that smalltown does not make"
        ref_table, ref_sql = want[(kind, name)]
        if table.translate(_ASCII_LOWER) != ref_table.translate(_ASCII_LOWER) or (sql is None) != (ref_sql is None):
            return f"its {kind} {name} is on the table {shown((table,))}; smalltown makes it on {ref_table} ({EDITED})"
        if sql is None:
            continue  # the index SQLite makes for a table's PRIMARY KEY: the table's SQL says which
        got, ref = _Sql(sql), _Sql(ref_sql)
        wrong = _table_difference(name, got, ref) if kind == "table" else (
            None if got.folded == ref.folded else f"the {kind} {name} is `{got.show()}`; smalltown makes `{ref.show()}`")
        if wrong:
            return f"{wrong} ({EDITED})"
    return None


def missing_indexes(conn: sqlite3.Connection, version: int) -> list[str]:
    """The indexes a save at `version` has on the tables it has (each of its version's), that are
    not there: without one a reader scans a whole table where it looked a row up."""
    have = {(kind, name) for kind, name in conn.execute("SELECT type, name FROM sqlite_master")}
    tables = {name for kind, name in have if kind == "table"}
    return [f"the index {name} on {table} is missing ({EDITED})"
            for kind, name, table, sql in reference(version)
            if kind == "index" and sql is not None and table in tables and ("index", name) not in have]


def encoding_problem(conn: sqlite3.Connection) -> str | None:
    """A save's text is UTF-8, as smalltown writes it (SQLite would convert UTF-16 as it reads,
    and limits in bytes would measure another text)."""
    encoding = conn.execute("PRAGMA encoding").fetchone()[0]
    if encoding != "UTF-8":
        return f"its text is encoded as {encoding}; smalltown saves are UTF-8 (this file was not written by smalltown)"
    return None


# Texts are checked a window of rows at a time, those up to SMALL bytes joined by SQLite: at most
# WINDOW x SMALL bytes a column in memory. A longer one is read alone; one past LARGEST (longer than
# any text store/validate.py admits, which refuses it) only its first SMALL bytes.
WINDOW = 500
SMALL = 2048
LARGEST = 8 * 1024 * 1024


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _bad_utf8(data: bytes, whole: bool = True) -> str | None:
    """Why `data` is not UTF-8 text (None: it is). Not `whole`: the start of a longer text."""
    try:
        codecs.getincrementaldecoder("utf-8")().decode(data, final=whole)
        return None
    except UnicodeDecodeError as e:
        return f"not valid UTF-8 (byte 0x{data[e.start]:02x} at offset {e.start:,})"


def text_problems(conn: sqlite3.Connection, tables: list[str], limit: int = 20) -> Iterator[str]:
    """'TABLE rowid N: COLUMN: not valid UTF-8 ...' for each value of a TEXT column that is not
    UTF-8, at most `limit` a column, table by table. Stop reading when the first is enough."""
    for table in tables:
        # the columns declared TEXT (as smalltown makes them, once the schema is checked): a text in
        # another is refused for its type by store/validate.py, which never reads it
        columns = [r[0] for r in conn.execute("SELECT name FROM pragma_table_info(?) WHERE upper(type) = 'TEXT'",
                                              (table,))]
        if columns:
            yield from _table_text(conn, table, columns, limit)


def _table_text(conn: sqlite3.Connection, table: str, columns: list[str], limit: int) -> Iterator[str]:
    # each column's short texts joined; a long one stands in as a byte that is never UTF-8, so that
    # its window is read again value by value (_window_rows)
    joined = ", ".join(f"CAST(group_concat(CASE WHEN typeof({_q(c)}) = 'text' THEN CASE WHEN length(CAST({_q(c)} "
                       f"AS BLOB)) <= {SMALL} THEN {_q(c)} ELSE X'FF' END END, X'0A') AS BLOB)" for c in columns)
    t = _q(table)
    found: dict[str, int] = {}
    after = None  # the last rowid of the window before (None: the first window)
    while True:
        since = "" if after is None else f"WHERE rowid > {after}"
        end = conn.execute(f"SELECT rowid FROM {t} {since} ORDER BY rowid LIMIT 1 OFFSET {WINDOW - 1}").fetchone()
        upto = "" if end is None else f"rowid <= {end[0]}"
        where = " AND ".join(w for w in (since.removeprefix("WHERE "), upto) if w)
        parts = conn.execute(f"SELECT {joined} FROM {t} {'WHERE ' + where if where else ''}").fetchone()
        if any(p is not None and _bad_utf8(p) for p in parts):
            yield from _window_rows(conn, table, columns, where, found, limit)
        if end is None:
            return
        after = end[0]


def _window_rows(conn: sqlite3.Connection, table: str, columns: list[str], where: str,
                 found: dict[str, int], limit: int) -> Iterator[str]:
    """The values of one window (rows `where`) decoded one by one, to name the row and column."""
    where = f"WHERE {where}" if where else ""
    values = ", ".join(f"CASE WHEN typeof({_q(c)}) = 'text' THEN CASE WHEN length(CAST({_q(c)} AS BLOB)) <= {SMALL} "
                       f"THEN CAST({_q(c)} AS BLOB) ELSE length(CAST({_q(c)} AS BLOB)) END END" for c in columns)
    for rowid, *row in conn.execute(f"SELECT rowid, {values} FROM {_q(table)} {where} ORDER BY rowid"):
        for column, value in zip(columns, row):
            if value is None or found.get(column, 0) >= limit:
                continue
            whole = isinstance(value, bytes) or value <= LARGEST
            if not isinstance(value, bytes):  # a long text (its length): read alone, or its start only
                (value,) = conn.execute(f"SELECT substr(CAST({_q(column)} AS BLOB), 1, ?) FROM {_q(table)} "
                                        f"WHERE rowid = ?", (LARGEST if whole else SMALL, rowid)).fetchone()
            why = _bad_utf8(value, whole)
            if why:
                found[column] = found.get(column, 0) + 1
                yield f"{table} rowid {rowid}: {column}: {why}"
