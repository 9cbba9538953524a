"""What a save from a stranger may hold, column by column: checked when any command opens a save.

Every table smalltown reads has its columns here, each with the SQLite types it may hold, a size
limit (bytes, as world files have theirs: one 200 MB memory must not reach a reader) and, for the
JSON columns, the JSON type and the shape of what is inside. The checks run in SQL, one scan per
table, so a save is judged without loading its rows into Python; only the few JSON values with
many brackets are looked at here for their depth (SQLite accepts JSON nested deeper than Python
can parse). `save check` lists every problem; every other command refuses on the first
(Save.open). A problem names the table, the row and the column.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Iterator

KB, MB = 1024, 1024 * 1024
MAX_DEPTH = 32  # JSON nesting in a save: its deepest (an agent's plan) is about 7
MAX_TICK = 10 ** 11  # about 3,000 years at a game second a tick (sim/check.py holds the clock to its world)
MEMORY_KINDS = ("observation", "reflection", "plan", "chat")  # mind/memory.py's KINDS (a test keeps them one)
# the economy's transfers (sim/economy.py): craft_in is a craft's inputs used up, tax the town's levy
LEDGER_KINDS = ("gather", "craft", "craft_in", "give", "trade", "deposit", "tax")
TIME_GLOB = "[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9]"

TEXT, INT, REAL, BLOB, NULL = "text", "integer", "real", "blob", "null"


@dataclass(frozen=True)
class Col:
    name: str
    types: tuple[str, ...]  # what typeof() may say
    max_bytes: int = 0  # text and blobs; 0: not text
    json: str = ""  # "object" or "array": a JSON value of that type
    time: bool = False  # a game time, YYYY-MM-DD HH:MM:SS
    low: int | None = None  # integers: their range
    high: int | None = None
    rule: str = ""  # SQL, true when the value is wrong (the JSON already parses as `json` says)
    says: str = ""  # what is wrong then


def name(col: str, null: bool = False) -> Col:
    return Col(col, (TEXT, NULL) if null else (TEXT,), 1 * KB)


def text(col: str, size: int, null: bool = False) -> Col:
    return Col(col, (TEXT, NULL) if null else (TEXT,), size)


def when(col: str) -> Col:
    return Col(col, (TEXT,), 64, time=True)


def count(col: str, low: int = 0, high: int = MAX_TICK, null: bool = False) -> Col:
    return Col(col, (INT, NULL) if null else (INT,), low=low, high=high)


def _all(col: str, bad: str) -> str:
    """True when an element of the JSON array `col` is `bad` (SQL over json_each's columns)."""
    return f"EXISTS (SELECT 1 FROM json_each({col}) WHERE {bad})"


def _tile(col: str, path: str = "$") -> str:
    """True when the JSON at `path` of `col` is not a tile [x, y]."""
    return (f"json_type({col}, '{path}') IS NOT 'array' OR json_array_length({col}, '{path}') != 2 OR "
            f"json_type({col}, '{path}[0]') != 'integer' OR json_type({col}, '{path}[1]') != 'integer'")


def _not_vector(col: str) -> str:
    """True when `col` is neither bare float32 (schema 4) nor a packed vector (store/packing.py;
    its indices are checked as it is read)."""
    n = f"length({col})"
    return (f"NOT (({n} % 4 = 0 AND {n} > 0) OR (substr({col}, 1, 1) = X'44' AND {n} % 4 = 1 AND {n} > 1) "
            f"OR (substr({col}, 1, 1) = X'53' AND {n} % 6 = 3))")


_EVENT_DATA = " OR ".join((  # the events a replay reads back (sim/history.py), by kind
    f"(kind = 'moved' AND ({_tile('data', '$.src')} OR {_tile('data', '$.dst')}))",
    f"(kind = 'arrived' AND json_type(data, '$.tile') IS NOT NULL AND ({_tile('data', '$.tile')}))",
    "(kind = 'object' AND (json_type(data, '$.address') IS NOT 'text' OR json_type(data, '$.state') IS NOT 'text'))",
    "(kind = 'started' AND (json_type(data, '$.activity') NOT IN ('text', 'null') OR "
    "json_type(data, '$.address') NOT IN ('text', 'null')))",
))

# table -> (the column naming a row in messages, its columns)
TABLES: dict[str, tuple[str, tuple[Col, ...]]] = {
    "agents": ("name", (
        Col("name", (TEXT,), 1 * KB), count("x", -10 ** 9, 10 ** 9), count("y", -10 ** 9, 10 ** 9),
        Col("dest", (TEXT, NULL), 1 * KB, json="array", rule=_tile("dest"), says="not a tile [x, y]"),
        text("action", 4 * KB, null=True), text("address", 4 * KB, null=True),
        Col("state", (TEXT,), 8 * MB, json="object"),
    )),
    "objects": ("address", (text("address", 4 * KB), text("state", 1 * KB))),
    "plans": ("agent", (name("agent"), Col("plan", (TEXT, NULL), 8 * MB, json="object"))),
    "memories": ("id", (
        name("agent"),
        Col("kind", (TEXT,), 64, rule=f"kind NOT IN ({', '.join(repr(k) for k in MEMORY_KINDS)})",
            says=f"not a kind of memory ({', '.join(MEMORY_KINDS)})"),
        text("description", 64 * KB), when("created"), when("last_accessed"),
        count("importance", 0, 10, null=True),
        Col("embedding", (BLOB, NULL), 64 * KB, rule=_not_vector("embedding"), says="not a vector of float32"),
        Col("evidence", (TEXT, NULL), 64 * KB, json="array", rule=_all("evidence", "type != 'integer'"),
            says="not a list of memory ids"),
    )),
    "events": ("id", (
        count("tick"), when("time"), name("agent", null=True), text("kind", 64), text("text", 64 * KB),
        Col("data", (TEXT, NULL), 1 * MB, json="object", rule=_EVENT_DATA, says="not what an event of its kind holds"),
    )),
    "llm_calls": ("id", (
        count("tick"), when("time"), name("agent", null=True), text("task", 200), Col("prompt", (TEXT, BLOB), 4 * MB),
        Col("raw_answer", (TEXT, BLOB, NULL), 4 * MB), Col("parsed_answer", (TEXT, BLOB, NULL), 4 * MB),
        count("prompt_tokens", null=True), count("completion_tokens", null=True), count("cached_tokens", null=True),
        Col("ms", (REAL, INT, NULL)), text("backend", 1 * KB, null=True), text("model", 4 * KB, null=True),
        text("note", 64 * KB, null=True), text("key", 200, null=True), text("fallback", 200, null=True),
        Col("attempts", (TEXT, NULL), 1 * MB, json="array",
            rule=_all("attempts", "type != 'object' OR json_type(value, '$.attempt') IS NOT 'integer'"),
            says="not a list of attempts ({\"attempt\": ...})"),
    )),
    "embeddings": ("text", (
        text("text", 64 * KB),
        Col("vector", (BLOB,), 64 * KB, rule=_not_vector("vector"), says="not a vector of float32"),
    )),
    "retrievals": ("id", (
        count("tick"), when("time"), name("agent"), text("purpose", 1 * KB), text("query", 64 * KB),
        Col("results", (TEXT, BLOB), 4 * MB, json="array",  # JSON text, or packed (store/packing.py)
            rule="CASE WHEN typeof(results) = 'blob' THEN substr(results, 1, 1) != X'52' OR length(results) % 24 != 1 "
                 "ELSE " + _all("results", "type != 'object' OR json_type(value, '$.id') IS NOT 'integer'") + " END",
            says="not a list of scored memories ({\"id\": ...})"),
    )),
    "snapshots": ("tick", (when("time"), Col("state", (BLOB,), 64 * MB))),
    "conversations": ("id", (
        count("tick"), when("time"), when("end_time"), text("place", 64 * KB, null=True),
        name("initiator"), name("other"), text("reason", 64 * KB, null=True),
        Col("lines", (TEXT,), 4 * MB, json="array"), Col("chats", (TEXT,), 1 * MB, json="object"),
        Col("relationships", (TEXT,), 1 * MB, json="object"),
    )),
    "ledger": ("id", (
        count("tick"), when("time"),
        Col("kind", (TEXT,), 64, rule=f"kind NOT IN ({', '.join(repr(k) for k in LEDGER_KINDS)})",
            says=f"not a kind of transfer ({', '.join(LEDGER_KINDS)})"),
        name("giver"), name("taker"), Col("item", (TEXT,), 1 * KB, rule="item = ''", says="empty"),
        count("qty", 1, 10 ** 9), text("note", 4 * KB, null=True),
    )),
    "memes": ("id", (
        count("tick"), when("time"), name("town"),
        Col("topics", (TEXT,), 1 * MB, json="array",
            rule=_all("topics", "type != 'object' OR json_type(value, '$.topic') IS NOT 'text' "
                                "OR json_type(value, '$.keywords') IS NOT 'array'"),
            says='not a list of topics ({"topic": ..., "keywords": [...]})'),
        text("call", 1 * KB, null=True),
    )),
}
# the schema that added a table (snapshots: none, a save may lack them, every reader asks has_snapshots)
SINCE = {"embeddings": 2, "retrievals": 2, "snapshots": 10 ** 9, "conversations": 4, "plans": 5, "ledger": 8, "memes": 11}
COLUMNS_SINCE = {("llm_calls", "key"): 4, ("llm_calls", "fallback"): 4, ("llm_calls", "attempts"): 9}


def _checks(col: Col) -> list[tuple[str, str]]:
    """(SQL true when the value is wrong, what is wrong), each guarded by the ones before it."""
    c = f'"{col.name}"'
    shown_types = " or ".join("NULL" if t == NULL else t for t in col.types)
    out = [(f"typeof({c}) NOT IN ({', '.join(repr(t) for t in col.types)})", f"not {shown_types}")]
    if col.max_bytes:
        out.append((f"length(CAST({c} AS BLOB)) > {col.max_bytes}", f"larger than {col.max_bytes:,} bytes"))
    if col.low is not None:
        out.append((f"typeof({c}) = 'integer' AND NOT {c} BETWEEN {col.low} AND {col.high}",
                    f"out of range ({col.low} to {col.high:,})"))
    if col.time:
        out.append((f"NOT ({c} GLOB '{TIME_GLOB}' AND datetime({c}) IS {c} AND {c} >= '1000')",
                    "not a game time (YYYY-MM-DD HH:MM:SS)"))
    if col.json:
        # text only: a column that may also be a blob holds its packed form there (its rule judges it)
        out.append((f"typeof({c}) = 'text' AND NOT json_valid({c})", "not valid JSON (or nested too deep)"))
        out.append((f"typeof({c}) = 'text' AND json_type({c}) != '{col.json}'", f"not a JSON {col.json}"))
    if col.rule:
        out.append((f"{c} IS NOT NULL AND ({col.rule})", col.says))
    return out


@dataclass(frozen=True)
class Problem:
    table: str
    row: object
    column: str
    says: str

    def __str__(self) -> str:
        row = self.row if not isinstance(self.row, str) else repr(self.row[:60] + ("…" if len(self.row) > 60 else ""))
        return f"{self.table} row {row}: {self.column}: {self.says}"


def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {r[1] for r in conn.execute(f"SELECT * FROM pragma_table_info('{table}')")}


def problems(conn: sqlite3.Connection, version: int, limit: int = 20) -> Iterator[Problem | str]:
    """Every problem in the rows of a save at schema `version` (at most `limit` per table and
    column), missing tables and columns first. Stop reading when the first is enough."""
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    for table, (key, cols) in TABLES.items():
        if table not in tables:
            if version >= SINCE.get(table, 1):
                yield f"the table {table} is missing"
            continue
        have = _columns(conn, table)
        wanted = [c for c in cols if version >= COLUMNS_SINCE.get((table, c.name), 1)]
        missing = [c.name for c in wanted if c.name not in have] + ([key] if key not in have else [])
        if missing:
            yield f"the table {table} has no column {', '.join(dict.fromkeys(missing))}"
            continue
        yield from _rows(conn, table, key, [c for c in cols if c.name in have], limit)


def _rows(conn: sqlite3.Connection, table: str, key: str, cols: list[Col], limit: int) -> Iterator[Problem]:
    # one CASE per column: the first of its checks that fails (each guarded by the earlier ones)
    cases, says = [], []
    for col in cols:
        checks = _checks(col)
        cases.append("CASE " + " ".join(f"WHEN {sql} THEN {i}" for i, (sql, _) in enumerate(checks)) + " END")
        says.append([s for _, s in checks])
    json_cols = [c for c in cols if c.json]
    deep = [f"CASE WHEN typeof(\"{c.name}\") = 'text' AND length(CAST(\"{c.name}\" AS BLOB)) <= {c.max_bytes} AND "
            f"length(\"{c.name}\") - length(replace(replace(\"{c.name}\", '[', ''), '{{', '')) > {MAX_DEPTH} "
            f"THEN \"{c.name}\" END" for c in json_cols]
    label = f"CASE WHEN typeof(\"{key}\") = 'text' THEN substr(\"{key}\", 1, 61) " \
            f"WHEN typeof(\"{key}\") = 'integer' THEN \"{key}\" ELSE 'rowid ' || rowid END"
    names = [f"f{i}" for i in range(len(cases) + len(deep))]
    flags = ", ".join(f"{sql} AS {n}" for sql, n in zip(cases + deep, names))
    found: dict[str, int] = {}
    rows = conn.execute(f"SELECT * FROM (SELECT {label} AS at, {flags} FROM \"{table}\") "
                        f"WHERE coalesce({', '.join(names)}, NULL) IS NOT NULL")
    for row in rows:
        at, values = row[0], row[1:]
        for col, check, said in zip(cols, values[:len(cols)], says):
            if check is not None and found.get(col.name, 0) < limit:
                found[col.name] = found.get(col.name, 0) + 1
                yield Problem(table, at, col.name, said[check])
        for col, value in zip(json_cols, values[len(cols):]):
            if value is not None and depth(value) > MAX_DEPTH and found.get(col.name, 0) < limit:
                found[col.name] = found.get(col.name, 0) + 1
                yield Problem(table, at, col.name, f"JSON nested deeper than {MAX_DEPTH}")


def depth(text: str) -> int:
    """How deep JSON text nests (brackets outside strings), without parsing it: no recursion."""
    deepest = level = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            level += 1
            deepest = max(deepest, level)
        elif ch in "]}":
            level -= 1
    return deepest


def embedding_dims(conn: sqlite3.Connection) -> list[tuple[int, int]]:
    """(numbers, how many) of the vectors in memories and the embedding cache: one size in a save.
    Read from each vector's length or header (store/packing.py), grouped in SQL."""
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    cache = " UNION ALL SELECT vector FROM embeddings WHERE typeof(vector) = 'blob'" if "embeddings" in tables else ""
    dims: dict[int, int] = {}
    for head, n in conn.execute(
            "SELECT CASE WHEN length(v) % 4 = 0 OR substr(v, 1, 1) != X'53' THEN length(v) ELSE substr(v, 1, 3) END "
            "AS head, count(*) FROM (SELECT embedding AS v FROM memories WHERE typeof(embedding) = 'blob'"
            f"{cache}) GROUP BY head"):
        dim = (head // 4 if head % 4 == 0 else (head - 1) // 4) if isinstance(head, int) else \
            int.from_bytes(head[1:3], "little")
        dims[dim] = dims.get(dim, 0) + n
    return sorted(dims.items())


META_TEXTS = ("world_source", "world_text", "map_source", "map_text")  # the world a save was started from


def meta_problems(meta: dict[str, object]) -> Iterator[str]:
    """The meta values a command reads before the rows (parsed JSON, by key)."""
    tick = meta.get("tick", 0)
    if not isinstance(tick, int) or isinstance(tick, bool) or not 0 <= tick <= MAX_TICK:
        yield f"meta tick: {str(tick)[:40]!r} is not a tick (a whole number from 0 to {MAX_TICK:,})"
    game_time = meta.get("game_time", "2000-01-01 00:00:00")
    if not (isinstance(game_time, str) and _is_time(game_time)):
        yield f"meta game_time: {str(game_time)[:40]!r} is not a game time (YYYY-MM-DD HH:MM:SS)"
    for key in META_TEXTS:
        if key in meta and not isinstance(meta[key], str):
            yield f"meta {key}: not text"
    for key in ("world", "embedder", "created_with"):
        if meta.get(key) is not None and not isinstance(meta[key], str):
            yield f"meta {key}: not text"
    if meta.get("settings") is not None and not isinstance(meta["settings"], dict):
        yield f"meta settings: {str(meta['settings'])[:40]!r} is not a table of NAME: VALUE"
    seed = meta.get("world_seed")  # (a run under another seed than its world file's)
    if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed <= 2**32 - 1):
        yield f"meta world_seed: {str(seed)[:40]!r} is not a seed (a whole number from 0 to {2**32 - 1})"


def _is_time(text: str) -> bool:
    from datetime import datetime

    try:
        return len(text) == 19 and "1000" <= text[:4] <= "4000" and bool(datetime.strptime(text, "%Y-%m-%d %H:%M:%S"))
    except ValueError:
        return False


SNAPSHOT_META = ("tick", "game_time", "settings")  # (save.py's): what a rewind writes back to meta


def snapshot_problem(s: object) -> str | None:
    """What is wrong with a decoded snapshot (the format in save.py), or None: the field first."""
    if not isinstance(s, dict):
        return "not a JSON object"
    kinds = {"tick": int, "time": str, "meta": dict, "agents": list, "states_base": bool, "states": dict,
             "hash": dict, "objects": list, "memory_ids": dict, "last_ids": dict, "accessed": list}
    for key, kind in kinds.items():
        if not isinstance(s.get(key), kind):
            return f"{key}: missing, or not {kind.__name__}"
    if s.get("since") is not None and not isinstance(s["since"], str):
        return "since: not a time"
    if set(s["meta"]) - set(SNAPSHOT_META) or list(meta_problems({**_META_OK, **s["meta"]})):
        return "meta: not the clock and settings"
    row = (str, int, int, (str, type(None)), (str, type(None)), (str, type(None)), (str, type(None)))
    for i, a in enumerate(s["agents"]):
        if not (isinstance(a, list) and len(a) == len(row) and all(_is(v, t) for v, t in zip(a, row))):
            return f"agents[{i}]: not [name, x, y, dest, action, address, activity]"
        if a[0] not in s["hash"] or not isinstance(s["hash"][a[0]], str):
            return f"hash: no hash of {a[0][:60]!r}"
    for name, entry in s["states"].items():
        ok = isinstance(entry, dict) and (
            isinstance(entry.get("full"), dict) or ("text" in entry and _is(entry["text"], (str, type(None))))
            or (isinstance(entry.get("set"), dict) and isinstance(entry.get("drop"), list)
                and all(isinstance(k, str) for k in entry["drop"])))
        if not ok:
            return f"states[{name[:60]!r}]: not a state, nor a change of one"
    pairs = (("objects", s["objects"], (str, str)), ("accessed", s["accessed"], (int, str)))
    for key, items, types in pairs:
        for i, item in enumerate(items):
            if not (isinstance(item, list) and len(item) == 2 and all(_is(v, t) for v, t in zip(item, types))):
                return f"{key}[{i}]: not a pair of {' and '.join(t.__name__ for t in types)}"
    for key in ("memory_ids", "last_ids"):
        if not all(_is(v, int) for v in s[key].values()):
            return f"{key}: not ids"
    return None


_META_OK = {"tick": 0, "game_time": "2000-01-01 00:00:00", **{k: "" for k in META_TEXTS}}


def _is(value: object, kind: type | tuple) -> bool:
    if isinstance(value, bool):
        return kind is bool
    return isinstance(value, kind)


def events_off_map(conn: sqlite3.Connection, width: int, height: int, limit: int = 20) -> list[tuple[int, str]]:
    """(id, kind) of events whose tiles (a walk's ends, where an arrival stands) are outside a
    map of this size: a replay walks them (after the shapes above are checked)."""
    out = " OR ".join(f"NOT (json_extract(data, '{p}[0]') BETWEEN 0 AND {width - 1} AND "
                      f"json_extract(data, '{p}[1]') BETWEEN 0 AND {height - 1})"
                      for p in ("$.src", "$.dst"))
    tile = (f"NOT (json_extract(data, '$.tile[0]') BETWEEN 0 AND {width - 1} AND "
            f"json_extract(data, '$.tile[1]') BETWEEN 0 AND {height - 1})")
    return conn.execute(f"SELECT id, kind FROM events WHERE (kind = 'moved' AND ({out})) OR (kind = 'arrived' "
                        f"AND json_type(data, '$.tile') IS NOT NULL AND {tile}) ORDER BY id LIMIT ?",
                        (limit,)).fetchall()


def memory_agents(conn: sqlite3.Connection) -> list[tuple[str, int]]:
    """(agent, how many memories) of every owner of memories."""
    return conn.execute("SELECT agent, count(*) FROM memories GROUP BY agent").fetchall()


def memories_after(conn: sqlite3.Connection, stamp: str, limit: int = 21) -> list[tuple[int, str, str]]:
    """(id, column, time) of memories made or accessed after `stamp` (times compare as text)."""
    return conn.execute("SELECT id, 'created', created FROM memories WHERE created > ?1 UNION ALL "
                        "SELECT id, 'last accessed', last_accessed FROM memories WHERE last_accessed > ?1 "
                        "ORDER BY 1 LIMIT ?2", (stamp, limit)).fetchall()


def missing_evidence(conn: sqlite3.Connection, limit: int = 21) -> list[tuple[int, int]]:
    """(memory id, cited id) of evidence citing no memory (evidence is a list of integers here)."""
    return conn.execute("SELECT m.id, j.value FROM memories m, json_each(m.evidence) j WHERE m.evidence IS NOT NULL "
                        "AND j.value NOT IN (SELECT id FROM memories) ORDER BY m.id LIMIT ?", (limit,)).fetchall()
