"""What opening a save checks before anything in it is used: a save from a stranger is data.

The header (a file cut short), the schema and the text encoding (store/schema_check.py: only the
tables and indexes smalltown makes, as it makes them; no triggers or views, which run code; UTF-8
text), the meta values (bounded, JSON) and the rows (store/validate.py).
"""

from __future__ import annotations

import json
import sqlite3
import struct
from pathlib import Path
from typing import Any, Iterator

from smalltown.store import schema_check as _schema
from smalltown.store import validate as _validate
from smalltown.store.errors import SaveError

SQLITE_MAGIC = b"SQLite format 3\x00"


def is_save(path: str | Path) -> bool:
    try:
        if not Path(path).is_file():  # a named pipe or a device would be waited on, not read
            return False
        with open(path, "rb") as f:
            return f.read(16) == SQLITE_MAGIC
    except OSError:
        return False


# A save from a stranger is data. Its meta values are bounded (the world and map texts as their
# files are, see world/load.py), and it may hold only the tables and indexes smalltown makes.
# The limits are on a text itself; its JSON in the meta row may be longer (a quote or a newline
# is two characters there, a control character six), so the row is bounded at JSON_SPREAD times.
META_MAX_CHARS = {"world_text": 4_000_000, "map_text": 4_000_000}  # = world/load_text.py's limits
META_MAX_OTHER = 1_000_000
JSON_SPREAD = 6
META_MAX_ROWS = 10_000


def check_header(path: Path) -> None:
    """A save cut short (a partial download or copy): the header says how long it should be."""
    with open(path, "rb") as f:
        header = f.read(100)
    if len(header) < 100:
        raise SaveError(f"{path}: truncated: {len(header)} bytes, shorter than an SQLite header")
    page = struct.unpack(">H", header[16:18])[0]
    page = 65536 if page == 1 else page
    change, pages, valid_for = (struct.unpack(">I", header[i:i + 4])[0] for i in (24, 28, 92))
    for side in (Path(f"{path}-wal"), Path(f"{path}-journal")):
        if side.exists() and side.stat().st_size > 0:
            return  # a log SQLite will apply (or roll back) first: the file alone is not the save
    size = path.stat().st_size
    if change == valid_for and pages and pages * page > size:
        raise SaveError(f"{path}: truncated: its header says {pages * page:,} bytes, the file has "
                        f"{size:,} (an interrupted copy or download?)")



def check_contents(conn: sqlite3.Connection, path: Path) -> None:
    """Refuse what smalltown never writes: a text encoding other than UTF-8, triggers and views
    (code that would run when the save is read or written), unknown tables and indexes, those
    whose SQL is not as this version makes them (store/schema_check.py), meta values that are not
    UTF-8, oversized or not JSON."""
    problem = _schema.encoding_problem(conn) or _schema.schema_problem(conn)
    if problem:
        raise SaveError(f"{path}: refusing to open: {problem}")
    if not conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'").fetchone():
        raise SaveError(f"{path}: not a smalltown save (no meta table)")
    for problem in _schema.text_problems(conn, ["meta"], limit=1):
        raise SaveError(f"{path}: refusing to open: {problem}")
    rows = conn.execute("SELECT count(*) FROM meta").fetchone()[0]
    if rows > META_MAX_ROWS:
        raise SaveError(f"{path}: refusing to open: meta has {rows:,} rows (at most {META_MAX_ROWS:,})")
    for key, value in conn.execute("SELECT key, value FROM meta"):
        limit = META_MAX_CHARS.get(key, META_MAX_OTHER)
        if not isinstance(key, str) or not isinstance(value, str):
            raise SaveError(f"{path}: meta {key!r}: not text")
        if len(value) > limit * JSON_SPREAD:
            raise SaveError(f"{path}: refusing to open: meta {key!r} is {len(value):,} characters "
                            f"(at most {limit:,})")
        try:
            decoded = json.loads(value)
        except (ValueError, RecursionError):
            raise SaveError(f"{path}: meta {key!r} is not valid JSON (or nested too deep)") from None
        size = len(decoded) if isinstance(decoded, str) else len(value)
        if size > limit:
            raise SaveError(f"{path}: refusing to open: meta {key!r} is {size:,} characters (at most {limit:,})")


def meta_values(conn: sqlite3.Connection) -> dict[str, Any]:
    """Every meta value, parsed (after check_contents: each is JSON)."""
    return {k: json.loads(v) for k, v in conn.execute("SELECT key, value FROM meta")}


def row_problems(conn: sqlite3.Connection, version: int, limit: int = 20) -> Iterator[str]:
    """What is wrong in the indexes, meta values and rows of a save (store/schema_check.py, then
    store/validate.py), first to last. Rows with text that is not UTF-8 are all there is to say:
    the checks after them read text."""
    yield from _schema.missing_indexes(conn, version)
    tables = [name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                               "AND name != 'meta' ORDER BY rowid")]
    not_text = False
    for problem in _schema.text_problems(conn, tables, limit):
        not_text = True
        yield problem
    if not_text:
        return
    for problem in _validate.meta_problems(meta_values(conn)):
        yield problem
    for problem in _validate.problems(conn, version, limit):
        yield str(problem)
    dims = _validate.embedding_dims(conn)
    if len(dims) > 1:
        yield "memories and embeddings: vectors of different lengths: " + ", ".join(
            f"{n} numbers ({k:,})" for n, k in dims)


def check_rows(conn: sqlite3.Connection, path: Path, version: int) -> None:
    """Refuse on the first problem in the rows: a command reads them as the simulation wrote them."""
    for problem in row_problems(conn, version, limit=1):
        raise SaveError(f"{path}: refusing to open: {problem}; `smalltown save check {path}` lists "
                        f"every problem")

