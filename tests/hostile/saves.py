"""Writes the corpus of hostile saves: one real save, copied and edited with sqlite3 once per case.

    python tests/hostile/saves.py DIR

Each case breaks one thing a stranger's save could break (issue 12, "A stranger's file"); every
command that reads a save must refuse it with a message naming what is wrong (`expect`, a
substring), never a traceback, a hang or a write to it. tests/test_hostile_saves.py runs them.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import sys
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


@dataclass(frozen=True)
class SaveCase:
    name: str
    expect: str  # a substring of the message every reading command gives
    edit: Callable[[sqlite3.Connection], None]
    level: str = "open"  # who refuses it: "open" every command (Save.open); "world" also those that
    # bring the town back (run, inspect, whisper, ..., replay, save check); "snapshots" what reads them


CASES: list[SaveCase] = []


def case(name: str, expect: str, *sql: str, level: str = "open") -> None:
    def edit(conn: sqlite3.Connection) -> None:
        for s in sql:
            conn.execute(s)
    CASES.append(SaveCase(name, expect, edit, level))


def edit_case(name: str, expect: str, level: str = "open"):
    def register(fn: Callable[[sqlite3.Connection], None]):
        CASES.append(SaveCase(name, expect, fn, level))
        return fn
    return register


LAST = "(SELECT max(id) FROM memories)"
JOHN = "name = 'John Lin'"
BIG = 70 * 1024  # just over the 64 KB limit of most text columns

# --- meta --------------------------------------------------------------------------------------
case("tick-huge", "is not a tick", "UPDATE meta SET value = '1000000000000000000000000000000' WHERE key = 'tick'")
case("tick-negative", "is not a tick", "UPDATE meta SET value = '-5' WHERE key = 'tick'")
case("tick-float", "is not a tick", "UPDATE meta SET value = '30.5' WHERE key = 'tick'")
case("tick-text", "is not a tick", "UPDATE meta SET value = '\"thirty\"' WHERE key = 'tick'")
case("tick-past-the-game", "past the game's last time", "UPDATE meta SET value = '90000000000' WHERE key = 'tick'", level="world")
case("no-tick", "is not a tick", "DELETE FROM meta WHERE key = 'tick'", level="world")
case("no-world-text", "world and map texts", "DELETE FROM meta WHERE key = 'world_text'", level="world")
case("game-time-not-a-time", "meta game_time", "UPDATE meta SET value = '\"yesterday\"' WHERE key = 'game_time'")
case("game-time-future", "does not match tick", "UPDATE meta SET value = '\"2999-01-01 00:00:00\"' WHERE key = 'game_time'", level="world")
case("settings-list", "meta settings", "UPDATE meta SET value = '[1,2]' WHERE key = 'settings'")
case("settings-out-of-range", "chat_cooldown_hours",
     "UPDATE meta SET value = '{\"chat_cooldown_hours\": 1e300}' WHERE key = 'settings'", level="world")
case("settings-wrong-type", "reflection", "UPDATE meta SET value = '{\"reflection\": \"maybe\"}' WHERE key = 'settings'", level="world")
case("settings-unknown", "no_such_setting", "UPDATE meta SET value = '{\"no_such_setting\": 1}' WHERE key = 'settings'", level="world")
case("meta-deep", "nested too deep", "UPDATE meta SET value = printf('%.100000c', '[') || printf('%.100000c', ']') "
     "WHERE key = 'created_with'")
case("world-not-text", "meta world_text: not text", "UPDATE meta SET value = '42' WHERE key = 'world_text'")
case("meta-text-too-long", "characters (at most 1,000,000)",
     "UPDATE meta SET value = '\"' || printf('%.1000001c', 'x') || '\"' WHERE key = 'created_with'")

# --- schema ------------------------------------------------------------------------------------
case("extra-unique-index", "that smalltown does not make",
     "CREATE UNIQUE INDEX evil ON memories(description)")
case("view-recursive", "holds a view",
     "CREATE VIEW forever AS WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT n FROM r")
case("missing-table", "the table events is missing", "DROP TABLE events")
case("missing-column", "has no column", "ALTER TABLE memories DROP COLUMN evidence")

# --- memories ----------------------------------------------------------------------------------
case("evidence-nested-list", "evidence: not a list of memory ids", f"UPDATE memories SET evidence = '[[1]]' WHERE id = {LAST}")
case("evidence-20k-deep", "evidence: not valid JSON",
     f"UPDATE memories SET evidence = printf('%.20000c', '[') || printf('%.20000c', ']') WHERE id = {LAST}")
case("evidence-900-deep", "evidence: not a list of memory ids",  # valid for SQLite, too deep for Python
     f"UPDATE memories SET evidence = printf('%.900c', '[') || printf('%.900c', ']') WHERE id = {LAST}")
case("evidence-object", "evidence: not a JSON array", f"UPDATE memories SET evidence = '{{}}' WHERE id = {LAST}")
case("evidence-missing", "evidence id 999999 does not exist", f"UPDATE memories SET evidence = '[999999]' WHERE id = {LAST}", level="world")
case("memory-kind-unknown", "kind: not a kind of memory", f"UPDATE memories SET kind = 'dream' WHERE id = {LAST}")
case("memory-description-huge", "description: larger than", f"UPDATE memories SET description = printf('%.{BIG}c', 'x') WHERE id = {LAST}")
case("memory-description-blob", "description: not text", f"UPDATE memories SET description = x'00ff00' WHERE id = {LAST}")
case("memory-description-null", "description: not text", f"UPDATE memories SET description = NULL WHERE id = {LAST}")
case("memory-created-not-a-time", "created: not a game time", f"UPDATE memories SET created = '2023-13-45 99:00:00' WHERE id = {LAST}")
case("memory-created-future", "after the save's clock", f"UPDATE memories SET created = '2031-01-01 00:00:00' WHERE id = {LAST}", level="world")
case("memory-importance-out-of-range", "importance: out of range", f"UPDATE memories SET importance = 99 WHERE id = {LAST}")
case("memory-importance-text", "importance: not integer", f"UPDATE memories SET importance = 'high' WHERE id = {LAST}")
case("memory-stranger", "who is not an agent of the save", f"UPDATE memories SET agent = 'Nobody Atall' WHERE id = {LAST}", level="world")
case("embedding-short", "embedding: not a vector of float32", f"UPDATE memories SET embedding = x'000102' WHERE id = {LAST}")
case("embedding-other-length", "vectors of different lengths", f"UPDATE memories SET embedding = zeroblob(512) WHERE id = {LAST}")
case("embedding-text", "embedding: not blob", f"UPDATE memories SET embedding = 'vector' WHERE id = {LAST}")
case("embedding-all-wrong-dim", "makes 256", "UPDATE memories SET embedding = zeroblob(64)",
     "UPDATE embeddings SET vector = zeroblob(64)", level="world")
case("memory-nul-in-kind", "kind: not a kind of memory", f"UPDATE memories SET kind = 'chat' || char(0) WHERE id = {LAST}")

# --- agents ------------------------------------------------------------------------------------
case("agent-state-not-json", "state: not valid JSON", f"UPDATE agents SET state = '{{oops' WHERE {JOHN}")
case("agent-state-list", "state: not a JSON object", f"UPDATE agents SET state = '[1,2]' WHERE {JOHN}")
case("agent-state-plan-number", "state: plan", f"UPDATE agents SET state = json_set(state, '$.plan', 3) WHERE {JOHN}",
     "DELETE FROM plans WHERE agent = 'John Lin'", level="world")
case("plans-plan-number", "plan: not a JSON object", "UPDATE plans SET plan = '3' WHERE agent = 'John Lin'")
case("plans-plan-shape", "state: plan", "UPDATE plans SET plan = json('{\"items\": 3}') WHERE agent = 'John Lin'",
     level="world")
case("agent-state-action-shape", "state: action", f"UPDATE agents SET state = json_set(state, '$.action', json('{{\"activity\": 1}}')) WHERE {JOHN}", level="world")
case("agent-state-known-shape", "state: known", f"UPDATE agents SET state = json_set(state, '$.known', json('[1]')) WHERE {JOHN}", level="world")
case("agent-state-intention-time", "state: intentions", f"UPDATE agents SET state = json_set(state, '$.intentions', "
     f"json('[{{\"id\": 1, \"time\": \"soon\", \"text\": \"x\"}}]')) WHERE {JOHN}", level="world")
case("agent-state-summary-date", "state: summary_date", f"UPDATE agents SET state = json_set(state, '$.summary_date', 'soon') WHERE {JOHN}", level="world")
case("agent-state-pending-shape", "state: pending", f"UPDATE agents SET state = json_set(state, '$.pending', json('[[1]]')) WHERE {JOHN}", level="world")
case("agent-state-deep", "state: JSON nested deeper",
     f"UPDATE agents SET state = json_set(state, '$.recent', json(printf('%.500c', '[') || printf('%.500c', ']'))) WHERE {JOHN}")
case("agent-dest-shape", "dest: not a tile", f"UPDATE agents SET dest = '[1]' WHERE {JOHN}")
case("agent-dest-deep", "dest: not a tile",
     f"UPDATE agents SET dest = printf('%.400c', '[') || printf('%.400c', ']') WHERE {JOHN}")
case("agent-dest-huge", "dest: larger than", f"UPDATE agents SET dest = printf('%.100000c', '[') WHERE {JOHN}")
case("agent-x-text", "x: not integer", f"UPDATE agents SET x = 'left' WHERE {JOHN}")
case("agent-action-huge", "action: larger than", f"UPDATE agents SET action = printf('%.{BIG}c', 'a') WHERE {JOHN}")
case("agent-duplicate", "in the save, not in its world",
     "INSERT INTO agents SELECT 'John Lin ', x, y, dest, action, address, state FROM agents WHERE name = 'John Lin'", level="world")
case("agent-missing", "in the world, missing from the save", f"DELETE FROM agents WHERE {JOHN}", level="world")
case("agent-name-escape", "in the save, not in its world",
     "UPDATE agents SET name = 'Mei Lin' || char(27) || ']0;owned' || char(7) WHERE name = 'Mei Lin'", level="world")

# --- objects, events, calls, retrievals ----------------------------------------------------------
case("object-state-huge", "state: larger than", "UPDATE objects SET state = printf('%.5000c', 's') WHERE rowid = 1")
case("object-state-null", "state: not text", "UPDATE objects SET state = NULL WHERE rowid = 1")
case("event-data-not-json", "data: not valid JSON", "UPDATE events SET data = '{' WHERE id = (SELECT max(id) FROM events)")
case("event-data-list", "data: not a JSON object", "UPDATE events SET data = '[]' WHERE id = (SELECT max(id) FROM events)")
case("event-moved-shape", "not what an event of its kind holds",
     "UPDATE events SET data = '{\"src\": \"here\", \"dst\": [1, 1]}' WHERE id = (SELECT max(id) FROM events WHERE kind = 'moved')")
case("event-object-shape", "not what an event of its kind holds",
     "UPDATE events SET data = '{\"address\": 5}' WHERE id = (SELECT max(id) FROM events WHERE kind = 'object')")
case("event-moved-off-map", "tile is outside the map",
     "UPDATE events SET data = '{\"src\": [1, 1], \"dst\": [5000, 5000]}' WHERE id = (SELECT max(id) FROM events WHERE kind = 'moved')", level="world")
case("event-text-huge", "text: larger than", f"UPDATE events SET text = printf('%.{BIG}c', 'e') WHERE id = 1")
case("event-tick-text", "tick: not integer", "UPDATE events SET tick = 'now' WHERE id = 1")
case("call-prompt-huge", "prompt: larger than", "UPDATE llm_calls SET prompt = printf('%.4200000c', 'p') WHERE id = 1")
case("call-tokens-negative", "prompt_tokens: out of range", "UPDATE llm_calls SET prompt_tokens = -7 WHERE id = 1")
case("retrieval-results-shape", "results: not a list of scored memories", "UPDATE retrievals SET results = '[1, 2]' WHERE id = 1")
case("retrieval-query-huge", "query: larger than", f"UPDATE retrievals SET query = printf('%.{BIG}c', 'q') WHERE id = 1")

# --- conversations -----------------------------------------------------------------------------
_CONV = ("INSERT INTO conversations(tick, time, end_time, place, initiator, other, reason, lines, chats, relationships) "
         "SELECT 1, '2023-02-13 06:00:10', '2023-02-13 06:00:10', 'Park', 'John Lin', 'Mei Lin', 'hello', {lines}, {chats}, '{{}}'")
case("conversation-missing-memory", "memory 999999 does not exist", _CONV.format(lines="'[]'", chats="'{\"John Lin\": 999999}'"), level="world")
case("conversation-tells-missing", "memory 888888 does not exist",
     _CONV.format(lines="'[{\"speaker\": \"John Lin\", \"text\": \"hi\", \"tells\": [888888]}]'", chats="'{}'"), level="world")
case("conversation-line-huge", "lines: larger than", _CONV.format(lines="printf('%.4200000c', ' ') || '[]'", chats="'{}'"))
case("conversation-lines-object", "lines: not a JSON array", _CONV.format(lines="'{}'", chats="'{}'"))


# --- snapshots ---------------------------------------------------------------------------------
def _snapshot(conn: sqlite3.Connection, change: Callable[[dict], object]) -> None:
    tick, blob = conn.execute("SELECT tick, state FROM snapshots ORDER BY tick DESC LIMIT 1").fetchone()
    state = json.loads(zlib.decompress(blob))
    change(state)
    conn.execute("UPDATE snapshots SET state = ? WHERE tick = ?", (zlib.compress(json.dumps(state).encode()), tick))


case("snapshot-not-zlib", "a snapshot is damaged", "UPDATE snapshots SET state = x'deadbeef'", level="snapshots")
case("snapshot-truncated", "a snapshot is damaged", "UPDATE snapshots SET state = substr(state, 1, length(state) / 2)",
     level="snapshots")
case("snapshot-text", "state: not blob", "UPDATE snapshots SET state = 'a snapshot'")


@edit_case("snapshot-bomb", "larger than", level="snapshots")
def _(conn: sqlite3.Connection) -> None:
    z = zlib.compressobj(9)
    chunk = b" " * (1024 * 1024)
    blob = z.compress(b"[") + b"".join(z.compress(chunk) for _ in range(300)) + z.compress(b"]") + z.flush()
    conn.execute("UPDATE snapshots SET state = ?", (blob,))


@edit_case("snapshot-agents-shape", "a snapshot is damaged: agents[0]", level="snapshots")
def _(conn: sqlite3.Connection) -> None:
    _snapshot(conn, lambda s: s["agents"].__setitem__(0, ["John Lin", "x"]))


@edit_case("snapshot-no-last-ids", "a snapshot is damaged: last_ids", level="snapshots")
def _(conn: sqlite3.Connection) -> None:
    _snapshot(conn, lambda s: s.pop("last_ids"))


@edit_case("snapshot-agent-off-map", "is not on a tile of the map", level="snapshots")
def _(conn: sqlite3.Connection) -> None:
    _snapshot(conn, lambda s: s["agents"][0].__setitem__(1, 9999))


@edit_case("snapshot-deep", "a snapshot is damaged", level="snapshots")
def _(conn: sqlite3.Connection) -> None:
    conn.execute("UPDATE snapshots SET state = ?", (zlib.compress(b"[" * 100_000 + b"]" * 100_000),))


# --- making them -------------------------------------------------------------------------------


def base_save(path: Path) -> None:
    """A real save: the base world of tests/hostile/make.py run 30 ticks by the scripted backend."""
    sys.path.insert(0, str(HERE))
    import make  # (tests/hostile/make.py: its base save)

    make.base_save(path)


def make_all(out: Path, base: Path | None = None) -> list[SaveCase]:
    """Every case as OUT/NAME.sqlite, each a copy of one base save (made once) edited."""
    out.mkdir(parents=True, exist_ok=True)
    if base is None:
        base = out / "_base.sqlite"
        base_save(base)
    for c in CASES:
        path = out / f"{c.name}.sqlite"
        shutil.copyfile(base, path)
        conn = sqlite3.connect(path, isolation_level=None)
        conn.execute("BEGIN")
        c.edit(conn)
        conn.execute("COMMIT")
        conn.execute("PRAGMA journal_mode=DELETE")  # one file, as a shared save is
        conn.close()
    return CASES


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.path.insert(0, str(ROOT))
    for c in make_all(Path(sys.argv[1])):
        print(f"{c.name:36} {c.expect}")
