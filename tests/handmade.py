"""Saves written by hand through the Save API, without running the simulation: the tiny town's
world, its agents on their spawn tiles, its objects as the world starts them, a snapshot at tick 0,
then whatever memories, events, conversations and model calls a test writes, tick by tick, the way
the simulation writes them (one transaction per tick, a snapshot when asked)."""

from __future__ import annotations

import json
import sqlite3
import zlib
from datetime import timedelta
from pathlib import Path

import numpy as np

from helpers import TINY
from smalltown.store.save import TIME_FMT, Save
from smalltown.world.load import load_world

ISABELLA, MARIA, KLAUS = "Isabella Rodriguez", "Maria Lopez", "Klaus Mueller"


class HandSave:
    def __init__(self, path: Path):
        self.path = Path(path)
        self.world = world = load_world(TINY)
        self.tick = 0
        self.next_memory = 1
        self.save = Save.create(path, {
            "world": world.name, "world_source": world.source, "world_text": world.text,
            "map_source": world.map_source, "map_text": world.map_text,
            "tick": 0, "game_time": self.time(0), "created_with": "hand", "settings": {}, "embedder": "hand",
        })
        with self.save.transaction():
            self.save.upsert_agents((a.name, a.spawn[0], a.spawn[1], None, None, None, json.dumps({"plan": []}))
                                    for a in world.agents)
            self.save.set_objects((address, o.initial_state) for address, o in world.objects.items())
            self.save.write_snapshot(0, self.time(0))

    @classmethod
    def reopen(cls, path: Path) -> "HandSave":
        """Go on writing a save made by hand (as a running town writes the file a screen reads)."""
        h = cls.__new__(cls)
        h.path, h.world, h.save = Path(path), load_world(TINY), Save.open(path)
        h.tick = h.save.meta("tick")
        h.next_memory = max(h.save.memory_owners(), default=0) + 1
        return h

    def time(self, tick: int) -> str:
        return (self.world.start + timedelta(seconds=tick * self.world.step_seconds)).strftime(TIME_FMT)

    def close(self) -> None:
        """Close the save (again: a no-op), so another connection may read or change the file."""
        if self.save is not None:
            self.save.close()
            self.save = None

    # --- one tick's rows ----------------------------------------------------------------------

    def at(self, tick: int, snapshot: bool = False, memories=(), events=(), conversations=(), calls=()) -> list[int]:
        """Commit tick `tick` with these rows (each as the Save API takes them, minus tick and time
        where noted below); returns the ids of its conversations."""
        self.tick, stamp = tick, self.time(tick)
        with self.save.transaction():
            ids = self.save.add_conversations((tick, stamp, *c) for c in conversations)
            self.save.add_events((tick, stamp, *e) for e in events)
            self.save.add_memories(memories)
            self.save.add_calls((tick, stamp, *c) for c in calls)
            self.save.set_meta({"tick": tick, "game_time": stamp})
            if snapshot:
                self.save.write_snapshot(tick, stamp)
        return ids

    def memory(self, agent: str, kind: str, text: str, tick: int, evidence=()) -> tuple:
        """A memories row made at `tick` (its id the next one)."""
        mid, self.next_memory = self.next_memory, self.next_memory + 1
        vec = np.full(8, mid, dtype=np.float32).tobytes()
        return (mid, agent, kind, text, self.time(tick), self.time(tick), 5, vec, json.dumps(list(evidence)))

    def talk(self, tick: int, a: str, b: str, lines: list[tuple[str, str]], place: str = "Hobbs Cafe: cafe",
             reason: str = "", minutes: int = 2, tells: dict[int, list[int]] | None = None,
             facts: dict[int, list[str]] | None = None, relationships: dict[str, str] | None = None,
             chats: bool = True, snapshot: bool = False) -> tuple[int, dict[str, int]]:
        """One conversation written as the simulation writes it: its row, a said event per line
        naming it, and each side's chat memory (its summary). Returns (its id, {agent: chat id})."""
        mems = []
        if chats:
            mems = [self.memory(me, "chat", f"{me} talked with {other} about the day", tick)
                    for me, other in ((a, b), (b, a))]
        chat_ids = {m[1]: m[0] for m in mems}
        end = self.time(tick + minutes * 6)
        rows = [{"speaker": s, "text": t, "tells": (tells or {}).get(i, []), "facts": (facts or {}).get(i, [])}
                for i, (s, t) in enumerate(lines)]
        conv = (end, place, a, b, reason, json.dumps(rows), json.dumps(chat_ids), json.dumps(relationships or {}))
        self.tick, stamp = tick, self.time(tick)
        with self.save.transaction():
            (cid,) = self.save.add_conversations([(tick, stamp, *conv)])
            self.save.add_events((tick, stamp, s, "said", f"{s}: {t}",
                                  json.dumps({"to": b if s == a else a, "place": place, "conversation": cid}))
                                 for s, t in lines)
            self.save.add_memories(mems)
            self.save.set_meta({"tick": tick, "game_time": stamp})
            if snapshot:
                self.save.write_snapshot(tick, stamp)
        return cid, chat_ids

    @staticmethod
    def call(agent: str, task: str, fallback: str = "", note: str = "", key: str = "k") -> tuple:
        """An llm_calls row without its tick and time."""
        return (agent, task, "prompt", "raw", "{}", 100, 10, 0, 5.0, "llama", "m.gguf", note, key, fallback)


def as_schema_3(path: Path) -> None:
    """Turn a closed schema-4 save into the schema-3 save an older smalltown wrote: no
    conversations table (its said events stay, without a conversation id), no call key or
    fallback columns, snapshots that do not know the conversations table."""
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("DROP TABLE conversations")
        conn.execute("ALTER TABLE llm_calls DROP COLUMN key")
        conn.execute("ALTER TABLE llm_calls DROP COLUMN fallback")
        for eid, data in conn.execute("SELECT id, data FROM events WHERE kind = 'said'").fetchall():
            d = json.loads(data)
            d.pop("conversation", None)
            conn.execute("UPDATE events SET data = ? WHERE id = ?", (json.dumps(d), eid))
        for tick, blob in conn.execute("SELECT tick, state FROM snapshots").fetchall():
            snap = json.loads(zlib.decompress(blob))
            snap["last_ids"].pop("conversations", None)
            conn.execute("UPDATE snapshots SET state = ? WHERE tick = ?",
                         (zlib.compress(json.dumps(snap, separators=(",", ":")).encode(), 9), tick))
        conn.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")
    conn.execute("PRAGMA journal_mode=DELETE")
    conn.close()
