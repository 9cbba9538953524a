"""What a Save reads of itself: the rows the engine loads to continue a run (agents, objects,
memories, the embedding cache) and the figures a run reports. A front end or a measure reads
through a Reader (`reader()`, store/reader.py); neither is handed the connection."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Iterable, Iterator

import numpy as np

from smalltown.store import calls as _calls
from smalltown.store import conversations as _conversations
from smalltown.store import memories as _memories
from smalltown.store import plans as _plans
from smalltown.store.conversations import ConversationRow
from smalltown.store.errors import guarded
from smalltown.store.packing import unpack_vector
from smalltown.store.reader import Reader


@guarded
class SaveReads:
    """Save's reads (a base of store/save.py's Save, which gives `conn` and `path`)."""

    conn: sqlite3.Connection
    path: Path

    def reader(self) -> Reader:
        """A Reader of this save through its own connection (closing it leaves the save open)."""
        return Reader(self.conn, path=self.path)

    def agents(self) -> list[tuple]:
        """(name, x, y, dest, action, address, state) of every agent, each state whole."""
        return _plans.agent_rows(self.conn)

    def objects(self) -> dict[str, str]:
        return dict(self.conn.execute("SELECT address, state FROM objects"))

    def memories(self) -> Iterator[tuple]:
        """(id, agent, kind, description, created, last_accessed, importance, embedding, evidence),
        the embedding as float32 (None for a schema-1 record not yet embedded)."""
        for r in self.conn.execute(
                "SELECT id, agent, kind, description, created, last_accessed, importance, embedding, "
                "evidence FROM memories ORDER BY id"):
            emb = None if r[7] is None else unpack_vector(r[7], f"memories row {r[0]}: embedding")
            yield (*r[:7], emb, r[8])

    def memory_owners(self) -> dict[int, str]:
        """Memory id -> the agent whose memory it is."""
        return dict(self.conn.execute("SELECT id, agent FROM memories"))

    def embeddings(self) -> Iterator[tuple[str, np.ndarray]]:
        """The embedding cache: (text, its float32 vector)."""
        for text, vec in self.conn.execute("SELECT text, vector FROM embeddings"):
            yield text, unpack_vector(vec, "embeddings: vector")

    def events_since(self, tick: int, kinds: Iterable[str]) -> list[tuple[str, str | None, str, dict]]:
        """(time, agent, kind, data) of the events of these kinds at ticks after `tick`, oldest first."""
        kinds = list(kinds)
        rows = self.conn.execute(f"SELECT time, agent, kind, data FROM events WHERE tick > ? AND kind IN "
                                 f"({','.join('?' * len(kinds))}) ORDER BY id", [tick, *kinds])
        return [(t, a, k, json.loads(d or "{}")) for t, a, k, d in rows]

    def conversations(self, until: int | None = None, since: int | None = None, agent: str | None = None,
                      limit: int | None = None) -> list[ConversationRow]:
        """Conversations held at ticks in (since, until], with `agent` on either side, oldest first
        (the newest `limit`); see store/conversations.py."""
        return _conversations.read_conversations(self.conn, until, since, agent, limit)

    def conversation_count(self) -> int:
        return _conversations.count_conversations(self.conn)

    def call_figures(self, after_id: int = 0) -> dict:
        """How many model calls, how many a fallback answered, by task and reason (store/calls.py)."""
        return _calls.call_figures(self.conn, after_id)

    def last_call_id(self) -> int:
        """The newest model call's id (0 when none): the calls after it are those made since."""
        return _calls.last_call_id(self.conn)

    def count(self, table: str) -> int:
        """Rows of `table`; 0 for a table an older save does not have."""
        return self.reader().count(table)

    def ledger(self) -> list[tuple]:
        """The economy's ledger, oldest first (see Reader.ledger)."""
        return self.reader().ledger()

    def memes(self) -> list:
        """The meme summaries, oldest first (see Reader.memes)."""
        return self.reader().memes()

    def digest(self) -> str:
        """A fingerprint of the simulation state (see Reader.digest)."""
        return self.reader().digest()

    def memory_extent(self) -> tuple[int, int]:
        """(the highest memory id or 0, how many records a schema-1 save kept without a rating or
        a vector) (store/memories.py)."""
        return _memories.memory_extent(self.conn)

    def agent_memories(self, agent: str) -> Iterator[tuple]:
        """The agent's memories as a stream loads them, oldest first (store/memories.py)."""
        yield from _memories.agent_memories(self.conn, agent)
