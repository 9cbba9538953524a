"""Snapshots of a run's state (schema 3): what rewinding, forking and replaying read back."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import zlib
from typing import Iterator, NamedTuple

from smalltown.store import plans as _plans
from smalltown.store import validate as _validate
from smalltown.store.errors import SaveError

# --- snapshots: the format ---------------------------------------------------------------------
#
# One row per snapshot: (tick, game time, zlib-compressed JSON). The JSON holds what
# `sim.open.resume` reads and a run changes after the fact:
#   meta        the clock and settings (SNAPSHOT_META)
#   agents      [name, x, y, dest, action, address, activity] of every agent
#   states      each agent's state text (the agents table's `state` column), as
#                 {"full": parsed} or {"text": verbatim} in a states base (`states_base`: the
#                 first snapshot a Save object writes: a new run's, a resumed run's first), else
#                 {"set": {key: value}, "drop": [key]} against the previous snapshot's, for the
#                 agents whose state changed (a diff is used only when it re-creates the text
#                 exactly; `hash` checks it when read)
#   objects     every objects row
#   memory_ids  per agent, its highest memory id then (ids only grow within an agent's stream)
#   last_ids    the highest id of each log table (events, llm_calls, retrievals, and since schema 4
#               conversations) then; a rewind to a snapshot without one cuts that log by tick
#   accessed    [id, last_accessed] of memories whose last access is not their creation time:
#               all of them in the save's first snapshot (`since` null), else only those
#               accessed at or after the previous snapshot's time `since` (a memory's last access
#               only moves forward to the current time, so the rest are as the previous snapshot
#               had them, or as created)
# Memories themselves are not copied: they are immutable once written, except their last access
# (and, before the first snapshot, a schema-1 save's importance and vector, completed on opening).

SNAPSHOT_FORMAT = 1
SNAPSHOT_META = ("tick", "game_time", "settings")  # the meta that changes as a run goes
SNAPSHOT_LOGS = ("events", "llm_calls", "retrievals", "conversations")  # append-only logs, cut back by id
SNAPSHOT_MAX_BYTES = 256 * 1024 * 1024  # decompressed: a hostile file cannot be a zip bomb


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class _Kept(NamedTuple):
    """An agent's state as the last snapshot a Save wrote saw it: the row's texts (state, plan),
    the state parsed, its activity and hash. The same texts next time: the same state."""

    texts: tuple[str | None, str | None]
    state: dict
    activity: object
    hash: str


def build_snapshot(conn: sqlite3.Connection, tick: int, time: str,
                   last: tuple[int, dict[str, _Kept]] | None) -> tuple[bytes, dict[str, _Kept]]:
    """The snapshot at `tick` (compressed) and the agents' states as it saw them (for the next
    one's diff). `last`: the previous snapshot's, if this process wrote it."""
    prev = conn.execute("SELECT tick, time FROM snapshots WHERE tick < ? ORDER BY tick DESC LIMIT 1",
                        (tick,)).fetchone()
    since = prev[1] if prev else None
    base = prev is None or last is None or last[0] != prev[0]
    meta = {k: json.loads(v) for k, v in conn.execute(
        f"SELECT key, value FROM meta WHERE key IN ({','.join('?' * len(SNAPSHOT_META))})", SNAPSHOT_META)}
    if since is None:
        accessed = conn.execute("SELECT id, last_accessed FROM memories WHERE last_accessed IS NOT created "
                                "ORDER BY id")
    else:
        accessed = conn.execute("SELECT id, last_accessed FROM memories WHERE last_accessed >= ? ORDER BY id",
                                (since,))
    kept: dict[str, _Kept] = {} if base else last[1]
    agents, states, parsed, hashes = [], {}, {}, {}
    for name, x, y, dest, action, address, raw, plan in _plans.apart_rows(conn, "name"):
        old = kept.get(name)
        if old is not None and old.texts == (raw, plan):  # unchanged since the last snapshot: no entry
            agents.append([name, x, y, dest, action, address, old.activity])
            hashes[name], parsed[name] = old.hash, old
            continue
        text, now, exact = _plans.joined_parsed(raw, plan)
        activity = (now.get("action") or {}).get("activity") if isinstance(now, dict) else None
        agents.append([name, x, y, dest, action, address, activity])
        hashes[name] = _hash(text or "")
        if not isinstance(now, dict):
            states[name] = {"text": text}
            continue
        parsed[name] = _Kept((raw, plan), now, activity, hashes[name])
        before = None if old is None else old.state
        if before is None:
            states[name] = {"full": now} if exact or json.dumps(now) == text else {"text": text}
            continue
        if before == now:
            continue
        diff = {"set": {k: v for k, v in now.items() if k not in before or before[k] != v},
                "drop": [k for k in before if k not in now]}
        states[name] = diff if json.dumps(_apply(before, diff)) == text else {"text": text}
    state = {
        "format": SNAPSHOT_FORMAT, "tick": tick, "time": time, "since": since, "meta": meta,
        "agents": agents, "states_base": base, "states": states, "hash": hashes,
        "objects": conn.execute("SELECT address, state FROM objects ORDER BY address").fetchall(),
        "memory_ids": dict(conn.execute("SELECT agent, max(id) FROM memories GROUP BY agent ORDER BY agent")),
        "last_ids": {t: conn.execute(f"SELECT coalesce(max(id), 0) FROM {t}").fetchone()[0]
                     for t in SNAPSHOT_LOGS},
        "accessed": accessed.fetchall(),
    }
    return zlib.compress(json.dumps(state, separators=(",", ":")).encode(), 9), parsed


def _apply(before: dict, diff: dict) -> dict:
    """A state re-created from the previous one and a diff, keys in the same order as a fresh
    `json.dumps` of the state would have them (changed keys keep their place)."""
    out = {k: v for k, v in before.items() if k not in diff["drop"]}
    out.update(diff["set"])
    return out


def decode_snapshot(blob: bytes, where: str = "save") -> dict:
    """A snapshot row's state, checked against the format above: a damaged or hostile one is a
    SaveError naming `where` (the save, the row), never a KeyError later."""
    try:
        d = zlib.decompressobj()
        raw = d.decompress(blob, SNAPSHOT_MAX_BYTES)
        if d.unconsumed_tail:
            raise SaveError(f"{where}: a snapshot is larger than {SNAPSHOT_MAX_BYTES:,} bytes")
        state = json.loads(raw)
    except (zlib.error, ValueError, TypeError, RecursionError) as e:
        raise SaveError(f"{where}: a snapshot is damaged ({e})") from None
    if not isinstance(state, dict) or state.get("format") != SNAPSHOT_FORMAT:
        raise SaveError(f"{where}: a snapshot in an unknown format")
    problem = _validate.snapshot_problem(state)
    if problem:
        raise SaveError(f"{where}: a snapshot is damaged: {problem}")
    return state


def snapshot_rows(conn: sqlite3.Connection) -> Iterator[tuple[int, bytes]]:
    """(tick, compressed state) of every snapshot, oldest first (for `save check`)."""
    if has_snapshots(conn):
        yield from conn.execute("SELECT tick, state FROM snapshots ORDER BY tick")


def has_table(conn: sqlite3.Connection, name: str) -> bool:
    """Whether the save has a table: a read-only reader may meet older (or stripped) saves."""
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (name,)).fetchone() is not None


def has_snapshots(conn: sqlite3.Connection) -> bool:
    """The save has a snapshots table (schema 3)."""
    return has_table(conn, "snapshots")


def snapshot_list(conn: sqlite3.Connection) -> list[tuple[int, str]]:
    if not has_snapshots(conn):
        return []
    return conn.execute("SELECT tick, time FROM snapshots ORDER BY tick").fetchall()


def read_snapshot(conn: sqlite3.Connection, tick: int, where: str | None = None) -> dict | None:
    """The snapshot at exactly `tick`, decoded; a damaged one is a SaveError naming `where` (by
    default its row)."""
    if not has_snapshots(conn):
        return None
    row = conn.execute("SELECT state FROM snapshots WHERE tick = ?", (tick,)).fetchone()
    return decode_snapshot(row[0], where or f"snapshots row {tick}") if row else None


def _chain(conn: sqlite3.Connection, tick: int, is_base) -> list[dict]:
    """The snapshots from the latest one at or before `tick` back to a base (`is_base`), oldest first."""
    chain = []
    for at, blob in conn.execute("SELECT tick, state FROM snapshots WHERE tick <= ? ORDER BY tick DESC", (tick,)):
        snap = decode_snapshot(blob, f"snapshots row {at}")
        chain.append(snap)
        if is_base(snap):
            break
    chain.reverse()
    return chain


def agent_rows_at(conn: sqlite3.Connection, tick: int) -> list[tuple]:
    """The agents rows (name, x, y, dest, action, address, state) as of the snapshot at `tick`."""
    chain = _chain(conn, tick, lambda s: s["states_base"])
    if not chain or chain[-1]["tick"] != tick or not chain[0]["states_base"]:
        raise SaveError(f"no complete snapshot at tick {tick}")
    try:
        return _agent_rows(chain, tick)
    except (KeyError, TypeError, ValueError, RecursionError) as e:  # states that do not chain up
        raise SaveError(f"snapshots row {tick}: the snapshots up to it do not re-create the agents "
                        f"({type(e).__name__}: {str(e)[:80]})") from None


def _agent_rows(chain: list[dict], tick: int) -> list[tuple]:
    states: dict[str, dict | str] = {}
    for snap in chain:
        for name, entry in snap["states"].items():
            if "full" in entry:
                states[name] = entry["full"]
            elif "text" in entry:
                states[name] = entry["text"]
            else:
                before = states[name]
                states[name] = _apply(before if isinstance(before, dict) else json.loads(before), entry)
    last = chain[-1]
    rows = []
    for name, x, y, dest, action, address, _activity in last["agents"]:
        state = states[name]
        text = state if isinstance(state, str) or state is None else json.dumps(state)
        if _hash(text or "") != last["hash"][name]:
            raise SaveError(f"the snapshot at tick {tick} does not re-create {name}'s state exactly")
        rows.append((name, x, y, dest, action, address, text))
    return rows


def accessed_at(conn: sqlite3.Connection, tick: int) -> dict[int, str]:
    """Memories' last access as of the snapshot at or before `tick`, for those whose last access
    is not their creation time: the save's first snapshot's list, updated by each later one."""
    out: dict[int, str] = {}
    for snap in _chain(conn, tick, lambda s: s["since"] is None):
        out.update((int(i), t) for i, t in snap["accessed"])
    return out


def cut_back(conn: sqlite3.Connection, snap: dict, tick: int, agents: list[tuple],
             accessed: dict[int, str]) -> dict[str, int]:
    """The rows of the save cut back to the snapshot `snap` at `tick` (see Save.rewind; the meta
    is the caller's), inside the caller's transaction. Returns the rows dropped, by table."""
    dropped: dict[str, int] = {}
    for table in SNAPSHOT_LOGS:
        if table in snap["last_ids"]:
            cur = conn.execute(f"DELETE FROM {table} WHERE id > ?", (snap["last_ids"][table],))
        else:  # a snapshot from before the table: its rows are written in their tick's transaction
            cur = conn.execute(f"DELETE FROM {table} WHERE tick > ?", (tick,))
        dropped[table] = cur.rowcount
    kept = snap["memory_ids"]  # per agent: ids grow within an agent's stream
    n = conn.execute("DELETE FROM memories WHERE agent NOT IN (SELECT value FROM json_each(?))",
                     (json.dumps(list(kept)),)).rowcount
    for agent, last in kept.items():
        n += conn.execute("DELETE FROM memories WHERE agent = ? AND id > ?", (agent, last)).rowcount
    dropped["memories"] = n
    conn.execute("UPDATE memories SET last_accessed = created")
    conn.executemany("UPDATE memories SET last_accessed = ? WHERE id = ?",
                     ((t, i) for i, t in accessed.items()))
    conn.execute("DELETE FROM agents")
    if _plans.has_plans(conn):  # the snapshot's states hold their plans
        conn.execute("DELETE FROM plans")
    conn.executemany("INSERT INTO agents(name, x, y, dest, action, address, state) "
                     "VALUES (?,?,?,?,?,?,?)", agents)
    conn.execute("DELETE FROM objects")
    conn.executemany("INSERT INTO objects(address, state) VALUES (?, ?)", snap["objects"])
    dropped["snapshots"] = conn.execute("DELETE FROM snapshots WHERE tick > ?", (tick,)).rowcount
    if has_table(conn, "ledger"):  # written in its tick's transaction: the ledger at a tick is its rows up to it
        dropped["ledger"] = conn.execute("DELETE FROM ledger WHERE tick > ?", (tick,)).rowcount
    if has_table(conn, "memes"):  # as the ledger: written in its tick's transaction
        dropped["memes"] = conn.execute("DELETE FROM memes WHERE tick > ?", (tick,)).rowcount
    # the embedding cache keeps query texts: only those of retrievals still in the log
    dropped["embeddings"] = conn.execute(
        "DELETE FROM embeddings WHERE text NOT IN (SELECT query FROM retrievals) "
        "AND text NOT IN (SELECT description FROM memories)").rowcount

    return dropped
