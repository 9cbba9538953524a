"""Saves written by hand through the Save API, without running the simulation: the tiny town's
world, its agents on their spawn tiles, its objects as the world starts them, a snapshot at tick 0,
then whatever memories, events, conversations and model calls a test writes, tick by tick, the way
the simulation writes them (one transaction per tick, a snapshot when asked)."""

from __future__ import annotations

import json
import sqlite3
import zlib
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np

from helpers import ROOT, TINY
from smalltown.llm.embed import HashEmbedder
from smalltown.scripted import ScriptedBackend
from smalltown.sim.open import create
from smalltown.store.conversations import ConversationRow, Line
from smalltown.store.records import AgentRow, Call, CallRecord, Event, Memory, ObjectState, TickChanges
from smalltown.store.schema import TIME_FMT
from smalltown.store.save import Save
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
        self.save.commit(TickChanges(
            0, self.time(0),
            agents=tuple(AgentRow(a.name, a.spawn[0], a.spawn[1], None, None, None, json.dumps({"plan": []}))
                         for a in world.agents),
            objects=tuple(ObjectState(address, o.initial_state) for address, o in world.objects.items())),
            snapshot=True)

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
        """Commit tick `tick` with these memories (from `memory`), events ((agent, kind, text,
        data-json)), conversations (ConversationRow records; their tick, time and id are the save's
        to give) and calls (`call`); returns the ids of its conversations."""
        self.tick, stamp = tick, self.time(tick)
        return self.save.commit(TickChanges(
            tick, stamp, conversations=tuple(replace(c, tick=tick, time=stamp) for c in conversations),
            events=tuple(Event(tick, stamp, a, k, text, json.loads(d)) for a, k, text, d in events),
            memories=tuple(memories), calls=tuple(Call(tick, stamp, CallRecord(*c)) for c in calls),
            meta={"tick": tick, "game_time": stamp}), snapshot)

    def memory(self, agent: str, kind: str, text: str, tick: int, evidence=()) -> tuple[Memory, bytes]:
        """A memory made at `tick` (its id the next one), with its vector."""
        mid, self.next_memory = self.next_memory, self.next_memory + 1
        vec = np.full(8, mid, dtype=np.float32).tobytes()
        when = datetime.strptime(self.time(tick), TIME_FMT)
        return Memory(mid, agent, kind, text, when, when, 5, tuple(evidence)), vec

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
        chat_ids = {m.agent: m.id for m, _ in mems}
        end = self.time(tick + minutes * 6)
        rows = [Line(s, t, tuple((tells or {}).get(i, [])), tuple((facts or {}).get(i, [])))
                for i, (s, t) in enumerate(lines)]
        conv = ConversationRow(0, tick, self.time(tick), end, place, a, b, reason, rows, chat_ids, relationships or {})
        self.tick, stamp = tick, self.time(tick)
        # each said event names its conversation by position among the tick's (the writer puts its id)
        (cid,) = self.save.commit(TickChanges(
            tick, stamp, conversations=(conv,),
            events=tuple(Event(tick, stamp, s, "said", f"{s}: {t}", {"to": b if s == a else a, "place": place,
                                                                     "conversation": 0}) for s, t in lines),
            memories=tuple(mems), meta={"tick": tick, "game_time": stamp}), snapshot)
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


# --- the eval town: four agents on the tiny map whose right answers the eval tests know -----------
# Ann Lee plans a Valentine's Day party and knows Bob Stone; Cal Reyes runs for mayor. On Monday at
# 10:00 Ann and Cal talk; on Tuesday at 16:50 Dee Park sees Cal walking to the party; Bob was only
# asked about the party by an interviewer. Then, at Hobbs Cafe on Tuesday 17:00-19:00: Ann is there
# throughout, Cal for 30 minutes, Dee and Bob for 5.

AGENTS = """
[[agents]]
name = "Ann Lee"
age = 40
traits = "warm"
description = "Ann Lee runs Hobbs Cafe; Ann Lee is planning a Valentine's Day party at Hobbs Cafe on February 14 from 5 pm to 7 pm; Ann Lee is a friend of Bob Stone"
home = "Willow Cottage"
spawn = [1, 2]

[[agents]]
name = "Bob Stone"
age = 30
traits = "quiet"
description = "Bob Stone is a student; Bob Stone is a friend of Ann Lee"
home = "Willow Cottage"
spawn = [2, 2]

[[agents]]
name = "Cal Reyes"
age = 50
traits = "bold"
description = "Cal Reyes is a painter; Cal Reyes is running for mayor"
home = "Willow Cottage"
spawn = [3, 2]

[[agents]]
name = "Dee Park"
age = 25
traits = "shy"
description = "Dee Park is a baker"
home = "Willow Cottage"
spawn = [4, 2]
"""

NEWS = """
[[facts]]
name = "party"
text = "Ann Lee is hosting a Valentine's Day party at Hobbs Cafe"
keywords = ["Valentine", "party"]
question = "Did you know there is a Valentine's Day party?"
known_by = ["Ann Lee"]

[[facts]]
name = "candidacy"
text = "Cal Reyes is running for mayor"
keywords = ["Cal Reyes", "mayor"]
known_by = ["Cal Reyes"]

[[gatherings]]
name = "the party"
place = "Hobbs Cafe"
start = 2023-02-14T17:00:00
end = 2023-02-14T19:00:00
host = "Ann Lee"
fact = "party"
"""

ANN, BOB, CAL, DEE = "Ann Lee", "Bob Stone", "Cal Reyes", "Dee Park"
INDEX = {ANN: 0, BOB: 1, CAL: 2, DEE: 3}
START = datetime(2023, 2, 13, 6)
END = "2023-02-15 06:00:00"


def world_text(agents: str = AGENTS, news: str = NEWS) -> str:
    """The tiny town's places, with these agents and this news."""
    base = TINY.read_text().split("[[agents]]")[0]
    return base.replace('map = "../maps/tiny.toml"', f'map = "{ROOT / "maps" / "tiny.toml"}"') + agents + news


class HandBuilt:
    """Records written straight into a save made by sim.open.create (real Save, real SQLite)."""

    def __init__(self, path: Path):
        self.save = Save.open(path)
        self.embedder = HashEmbedder()
        self.k = 1000  # above the seed memories' ids; ids stay interleaved by agent, as a run's are
        self.memories: list[tuple[Memory, bytes]] = []
        self.events: list[Event] = []

    def memory(self, agent: str, kind: str, text: str, when: str, evidence: list[int] = ()) -> int:
        self.k += 1
        mid = self.k * len(INDEX) + INDEX[agent] + 1
        vec = self.embedder.embed([text])[0].astype(np.float32).tobytes()
        at = datetime.strptime(when, TIME_FMT)
        self.memories.append((Memory(mid, agent, kind, text, at, at, 5, tuple(evidence)), vec))
        return mid

    def event(self, agent: str | None, kind: str, when: str, text: str = "", **data) -> None:
        self.events.append(Event(0, when, agent, kind, text, data))

    def talk(self, a: str, b: str, when: str) -> None:
        self.event(a, "said", when, to=b)
        self.event(b, "said", when, to=a)

    def commit(self, end: str = END) -> None:
        tick = int((datetime.fromisoformat(end) - START).total_seconds() // 10)
        self.save.commit(TickChanges(tick, end, memories=tuple(self.memories), events=tuple(self.events),
                                     meta={"game_time": end, "tick": tick}))
        self.save.close()


def make_town(tmp_path: Path) -> Path:
    world_file = tmp_path / "town.toml"
    world_file.write_text(world_text())
    world = load_world(world_file)
    path = tmp_path / "town.sqlite"
    create(world, path, ScriptedBackend(world.seed)).close()
    h = HandBuilt(path)
    mon = "2023-02-13 10:00:00"
    h.talk(ANN, CAL, mon)
    transcript = ("(at Hobbs Cafe: Ann Lee: Come to my Valentine's Day party! / "
                  "Cal Reyes: I will. I am running for mayor.)")
    cal_chat = h.memory(CAL, "chat", f"Cal Reyes talked with Ann Lee about the party {transcript}", mon)
    h.memory(CAL, "observation", "Ann Lee is planning a Valentine's Day party at Hobbs Cafe", mon, [cal_chat])
    h.memory(ANN, "chat", f"Ann Lee talked with Cal Reyes about the party {transcript}", mon)
    # an interviewer asked Bob about the party: the question is not Bob knowing it
    asked = "2023-02-13 12:00:00"
    question = "Did you know there is a Valentine's Day party?"
    h.event(BOB, "interviewed", asked, interviewer="a reporter", question=question, answer="No.")
    h.memory(BOB, "chat", f"a reporter asked Bob Stone: {question} Bob Stone answered: No.", asked)
    h.memory(CAL, "plan", "Cal Reyes's plan for Tuesday February 14: paint; go to the Valentine's Day party at 5 pm",
             "2023-02-14 00:00:00")
    h.memory(BOB, "plan", "Bob Stone's plan for Tuesday February 14: study all day", "2023-02-14 00:00:00")
    h.memory(DEE, "observation", "Cal Reyes is walking to the Valentine's Day party at Hobbs Cafe",
             "2023-02-14 16:50:00")
    h.memory(DEE, "plan", "Dee Park's revised schedule from 16:51: go to the Valentine's Day party",
             "2023-02-14 16:51:00")
    h.event(ANN, "entered", "2023-02-14 16:00:00", arena="Hobbs Cafe:cafe")
    h.event(BOB, "entered", "2023-02-14 17:00:00", arena="Hobbs Cafe:cafe kitchen")
    h.event(BOB, "entered", "2023-02-14 17:05:00", arena=None)
    h.event(CAL, "entered", "2023-02-14 17:30:00", arena="Hobbs Cafe:cafe")
    h.event(CAL, "entered", "2023-02-14 18:00:00", arena=None)
    h.event(DEE, "entered", "2023-02-14 18:55:00", arena="Hobbs Cafe:cafe")
    h.commit()
    return path
