"""What the debugger screens read: the save, through a read-only connection of their own.

The save is committed once per tick (WAL), so a reader sees whole ticks while the simulation's
worker goes on writing; the screens never touch the Simulation itself."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from smalltown.store import conversations as conv
from smalltown.store.conversations import Conversation
from smalltown.store.save import Save


@dataclass(frozen=True)
class MemoryRow:
    id: int
    agent: str
    kind: str
    description: str
    created: str
    importance: int
    evidence: tuple[int, ...]


@dataclass(frozen=True)
class CallRow:
    id: int
    tick: int
    time: str
    agent: str
    task: str
    prompt_tokens: int
    cached_tokens: int
    completion_tokens: int
    ms: float
    backend: str
    note: str


@dataclass(frozen=True)
class EventRow:
    id: int
    tick: int
    time: str
    agent: str | None
    kind: str
    text: str
    data: dict


class SaveReader:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        # opened as every command opens a save: its schema untrusted, its rows checked
        self.save = Save.open(self.path, readonly=True)
        self.conn = self.save.conn

    def close(self) -> None:
        self.save.close()

    # --- agents -------------------------------------------------------------------------------

    def agent_names(self) -> list[str]:
        return [n for (n,) in self.conn.execute("SELECT name FROM agents ORDER BY rowid")]

    def agent_state(self, name: str) -> dict:
        """The agent's mind state as last committed: plan, action, summary, known places, …"""
        row = self.conn.execute("SELECT state FROM agents WHERE name=?", (name,)).fetchone()
        return json.loads(row[0]) if row else {}

    # --- memories -----------------------------------------------------------------------------

    def memories(self, agent: str, kinds: tuple[str, ...] | None = None, limit: int = 200) -> list[MemoryRow]:
        """Newest first."""
        sql = "SELECT id, agent, kind, description, created, importance, evidence FROM memories WHERE agent=?"
        args: list = [agent]
        if kinds:
            sql += f" AND kind IN ({','.join('?' * len(kinds))})"
            args += list(kinds)
        sql += " ORDER BY id DESC LIMIT ?"
        return [self._memory(r) for r in self.conn.execute(sql, [*args, limit])]

    def memory(self, memory_id: int) -> MemoryRow | None:
        r = self.conn.execute("SELECT id, agent, kind, description, created, importance, evidence "
                              "FROM memories WHERE id=?", (memory_id,)).fetchone()
        return self._memory(r) if r else None

    @staticmethod
    def _memory(r: tuple) -> MemoryRow:
        return MemoryRow(r[0], r[1], r[2], r[3], r[4], r[5], tuple(json.loads(r[6] or "[]")))

    # --- retrievals ---------------------------------------------------------------------------

    def retrievals(self, agent: str, limit: int = 20) -> list[dict]:
        """Newest first: {id, tick, time, purpose, query, results: [{id, recency, importance,
        relevance, total, description, kind}]}."""
        out = []
        for rid, tick, time, purpose, query, results in self.conn.execute(
                "SELECT id, tick, time, purpose, query, results FROM retrievals WHERE agent=? "
                "ORDER BY id DESC LIMIT ?", (agent, limit)):
            rows = json.loads(results)
            for r in rows:
                m = self.memory(r["id"])
                r["description"], r["kind"] = (m.description, m.kind) if m else ("(not saved)", "")
            out.append({"id": rid, "tick": tick, "time": time, "purpose": purpose, "query": query, "results": rows})
        return out

    # --- model calls --------------------------------------------------------------------------

    def calls(self, agent: str | None = None, task: str | None = None, limit: int = 200) -> list[CallRow]:
        """Newest first."""
        sql = ("SELECT id, tick, time, agent, task, prompt_tokens, cached_tokens, completion_tokens, ms, "
               "backend, note FROM llm_calls WHERE 1=1")
        args: list = []
        if agent:
            sql += " AND agent=?"
            args.append(agent)
        if task:
            sql += " AND task=?"
            args.append(task)
        sql += " ORDER BY id DESC LIMIT ?"
        return [CallRow(*r) for r in self.conn.execute(sql, [*args, limit])]

    def call_detail(self, call_id: int) -> dict:
        """The full prompt, the raw answer and the parsed answer of one call."""
        r = self.conn.execute("SELECT prompt, raw_answer, parsed_answer FROM llm_calls WHERE id=?",
                              (call_id,)).fetchone()
        return {"prompt": r[0], "raw_answer": r[1], "parsed_answer": r[2]} if r else {}

    # --- events -------------------------------------------------------------------------------

    def events(self, agent: str | None = None, kinds: tuple[str, ...] | None = None,
               limit: int = 500) -> list[EventRow]:
        """Newest first."""
        sql = "SELECT id, tick, time, agent, kind, text, data FROM events WHERE 1=1"
        args: list = []
        if agent:
            sql += " AND agent=?"
            args.append(agent)
        if kinds:
            sql += f" AND kind IN ({','.join('?' * len(kinds))})"
            args += list(kinds)
        sql += " ORDER BY id DESC LIMIT ?"
        return [EventRow(r[0], r[1], r[2], r[3], r[4], r[5], json.loads(r[6] or "{}"))
                for r in self.conn.execute(sql, [*args, limit])]

    # --- conversations ------------------------------------------------------------------------

    def conversations(self, agent: str | None = None, limit: int | None = None) -> list[Conversation]:
        """With `agent` on either side when given; oldest first, the newest `limit`."""
        return conv.read_conversations(self.conn, agent=agent, limit=limit)

    def conversation_mark(self) -> int:
        """Grows when a conversation is saved: compared to know whether to read them again."""
        return conv.conversation_mark(self.conn)
