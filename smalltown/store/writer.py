"""The one writer: a tick's (or an intervention's) typed changes as the save's rows.

`Save.commit` runs `write` inside one transaction. The tables are written in one fixed order
(conversations first: a said event names its conversation's row), so that the same changes make
the same rows and the same ids, run after run.
"""

from __future__ import annotations

import json
import sqlite3

from smalltown.store import conversations as _conversations
from smalltown.store import plans as _plans
from smalltown.store.packing import pack_scores
from smalltown.store.records import Memory, TickChanges
from smalltown.store.schema import TIME_FMT


def write(conn: sqlite3.Connection, changes: TickChanges) -> list[int]:
    """Write `changes`; returns the ids the save gave their conversations, in order. A said event
    whose data names a conversation by position gets its id there instead (in place: the caller's
    events then read as the save holds them)."""
    # (a table this tick has no rows for is not asked: most ticks write a few of the twelve)
    ids = _conversations.add_conversations(conn, (_conversations.row(c) for c in changes.conversations)) \
        if changes.conversations else []
    if ids:
        for e in changes.events:
            if e.kind == "said" and "conversation" in e.data:
                e.data["conversation"] = ids[e.data["conversation"]]
    if changes.agents:
        conn.executemany(
            "INSERT INTO agents(name, x, y, dest, action, address, state) VALUES (?,?,?,?,?,?,?) "
            "ON CONFLICT(name) DO UPDATE SET x=excluded.x, y=excluded.y, dest=excluded.dest, "
            "action=excluded.action, address=excluded.address, state=excluded.state",
            ((a.name, a.x, a.y, a.dest, a.action, a.address, a.state) for a in changes.agents))
        _plans.write(conn, ((a.name, a.plan) for a in changes.agents))
    if changes.moves:
        conn.executemany("UPDATE agents SET x=?, y=? WHERE name=?", ((m.x, m.y, m.name) for m in changes.moves))
    if changes.objects:
        conn.executemany(
            "INSERT INTO objects(address, state) VALUES (?, ?) ON CONFLICT(address) DO UPDATE SET state=excluded.state",
            ((o.address, o.state) for o in changes.objects))
    if changes.events:
        conn.executemany(
            "INSERT INTO events(tick, time, agent, kind, text, data) VALUES (?,?,?,?,?,?)",
            ((e.tick, e.time, e.agent, e.kind, e.text, json.dumps(e.data)) for e in changes.events))
    if changes.memories:
        conn.executemany(
            "INSERT INTO memories(id, agent, kind, description, created, last_accessed, importance, embedding, "
            "evidence) VALUES (?,?,?,?,?,?,?,?,?)", (_memory(m, vector) for m, vector in changes.memories))
    if changes.accessed:
        conn.executemany("UPDATE memories SET last_accessed=? WHERE id=?",
                         ((a.time.strftime(TIME_FMT), a.memory) for a in changes.accessed))
    if changes.retrievals:
        conn.executemany(
            "INSERT INTO retrievals(tick, time, agent, purpose, query, results) VALUES (?,?,?,?,?,?)",
            ((changes.tick, r.time.strftime(TIME_FMT), r.agent, r.purpose, r.query, pack_scores([
                {"id": s.memory.id, "recency": round(s.recency, 4), "importance": round(s.importance, 4),
                 "relevance": round(s.relevance, 4), "total": round(s.total, 4)} for s in r.results]))
             for r in changes.retrievals))
    if changes.embeddings:
        conn.executemany("INSERT OR IGNORE INTO embeddings(text, vector) VALUES (?, ?)",
                         ((e.text, e.vector) for e in changes.embeddings))
    if changes.calls:
        conn.executemany(
            "INSERT INTO llm_calls(tick, time, agent, task, prompt, raw_answer, parsed_answer, prompt_tokens, "
            "completion_tokens, cached_tokens, ms, backend, model, note, key, fallback, attempts) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            ((c.tick, c.time, r.agent, r.task, r.prompt, r.raw_answer, r.parsed_answer, r.prompt_tokens,
              r.completion_tokens, r.cached_tokens, r.ms, r.backend, r.model, r.note, r.key, r.fallback, r.attempts or None)
             for c in changes.calls for r in (c.record,)))
    if changes.completed:
        conn.executemany("UPDATE memories SET importance=?, embedding=? WHERE id=?",
                         ((m.importance, vector, m.id) for m, vector in changes.completed))
    if changes.ledger:
        conn.executemany("INSERT INTO ledger(tick, time, kind, giver, taker, item, qty, note) VALUES (?,?,?,?,?,?,?,?)",
                         ((t.tick, t.time, t.kind, t.giver, t.taker, t.item, t.qty, t.note) for t in changes.ledger))
    if changes.memes:
        conn.executemany("INSERT INTO memes(tick, time, town, topics, call) VALUES (?,?,?,?,?)",
                         ((m.tick, m.time, m.town, json.dumps(m.topics), m.call) for m in changes.memes))
    set_meta(conn, changes.meta)
    return ids


def set_meta(conn: sqlite3.Connection, values: dict) -> None:
    conn.executemany(
        "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value=excluded.value",
        [(k, json.dumps(v)) for k, v in values.items()])


def _memory(m: Memory, vector: bytes) -> tuple:
    return (m.id, m.agent, m.kind, m.description, m.created.strftime(TIME_FMT), m.last_accessed.strftime(TIME_FMT),
            m.importance, vector, json.dumps(list(m.evidence)))
