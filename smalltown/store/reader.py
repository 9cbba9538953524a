"""The one way to read a save: typed rows for every front end and measure (the debugger screens,
replay, eval, the cassette, `save check`, a run's summary).

A Reader reads through a connection it is given: a Save opened read-only (`store.save.open_reader`,
which it then owns), or a Save's own (`Save.reader()`: the running simulation's). It writes nothing.
Rows come back as the save holds them (times as text, JSON parsed where a reader always wants it
parsed); what they mean is for the layer above. An SQLite error is a SaveError (SQLiteError) naming
the save. The model-call log's reads are in reader_calls.py, `save check`'s in reader_checks.py, `why`'s
in reader_why.py.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import date, datetime
from pathlib import Path
from typing import Any, Iterable

from smalltown.store import conversations as _conversations
from smalltown.store import day as _day
from smalltown.store import digest as _digest
from smalltown.store import plans as _plans
from smalltown.store.conversations import ConversationRow
from smalltown.store.errors import SQLiteError, guarded, sqlite_error
from smalltown.store.packing import unpack_scores
from smalltown.store.query import Where, limited
from smalltown.store.reader_calls import CallReads
from smalltown.store.reader_checks import CheckReads
from smalltown.store.reader_why import WhyReads
from smalltown.store.records import AgentRow, EventRow, MemeRow, Memory
from smalltown.store.schema import TIME_FMT
from smalltown.store.snapshots import agent_rows_at, has_snapshots, has_table, read_snapshot

TABLES = frozenset({"agents", "objects", "memories", "events", "llm_calls", "retrievals", "embeddings",
                    "snapshots", "conversations", "ledger", "memes"})
LOGS = ("events", "llm_calls", "retrievals", "conversations")  # the tables whose rows carry a tick


IDS = frozenset({"events", "llm_calls"})  # the logs a front end follows by their newest id
_MEMORY = "SELECT id, agent, kind, description, created, last_accessed, importance, evidence FROM memories"
_EVENT = "SELECT id, tick, time, agent, kind, text, data FROM events"


def _memory(r: tuple) -> Memory:
    return Memory(r[0], r[1], r[2], r[3], _time(r[4]), _time(r[5]), r[6], tuple(json.loads(r[7] or "[]")))


def _time(text: str) -> datetime:
    return datetime.strptime(text, TIME_FMT)


def _event(r: tuple) -> EventRow:
    return EventRow(r[0], r[1], r[2], r[3], r[4], r[5], json.loads(r[6] or "{}"))


@guarded
class Reader(WhyReads, CallReads, CheckReads):
    """Its public methods raise SQLiteError, naming the save, for an SQLite error (errors.guarded)."""

    def __init__(self, conn: sqlite3.Connection, owner: Any = None, path: Path | None = None):
        self._conn = conn
        self._owner = owner  # the Save this reader opened, closed with it
        self._left: list[sqlite3.Connection] = []  # connections followed by a newer one (see `conn`)
        self.path = path  # the save's, for errors (None: as its connection knows it)

    def _sqlite_error(self, e: sqlite3.Error) -> SQLiteError:
        path = self.path or getattr(self._conn, "save", None)
        if path is None:
            try:
                path = next((f for _, name, f in self._conn.execute("PRAGMA database_list") if name == "main"), None)
            except sqlite3.Error:
                pass
        return sqlite_error(path or "the save", e)

    @property
    def conn(self) -> sqlite3.Connection:
        """The connection, connected again when the one it was no longer sees the save (a writer
        started or ended since: store/reading.py `ReaderConnection.stale`)."""
        stale = getattr(self._conn, "stale", None)
        if stale is not None and stale():
            self._follow()
        return self._conn

    def _follow(self) -> None:
        from smalltown.store.errors import SaveError
        from smalltown.store.reading import connect_reader, signature

        old = self._conn
        try:
            new = connect_reader(old.save)
        except (SaveError, sqlite3.Error, OSError):
            old.seen = signature(old.save)  # what is there now cannot be read: the last view stays
            return
        self._left.append(old)  # (a caller may still be reading rows through it)
        self._conn = new
        if self._owner is not None:
            self._owner.conn = new

    def close(self) -> None:
        if self._owner is not None:
            self._owner.close()
        for conn in self._left:
            conn.close()
        self._left.clear()

    # --- the save as a whole ------------------------------------------------------------------

    def meta(self, key: str, default: Any = None) -> Any:
        row = self.conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return json.loads(row[0]) if row else default

    def meta_text(self, key: str) -> str | None:
        """A meta value as stored (JSON text), for a caller that bounds it before parsing it."""
        row = self.conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else None

    def tables(self) -> set[str]:
        """The tables the save has (an older or stripped save lacks some)."""
        return {r[0] for r in self.conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}

    def count(self, table: str) -> int:
        """Rows of `table`; 0 for a table an older save does not have."""
        assert table in TABLES
        if not has_table(self.conn, table):
            return 0
        return self.conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]

    def log_extent(self, table: str) -> tuple[int, int | None]:
        """(rows, the latest tick among them) of a log table the save has."""
        assert table in LOGS
        return self.conn.execute(f"SELECT count(*), max(tick) FROM {table}").fetchone()

    def newest_id(self, table: str) -> int:
        """The newest row's id in a log followed by id (0 for none): what a reload compares."""
        assert table in IDS
        return self.conn.execute(f"SELECT max(id) FROM {table}").fetchone()[0] or 0

    def newest_id_by(self, table: str, tick: int) -> int:
        """The newest id in a log followed by id among the rows of ticks up to `tick` (0 for none):
        the bound a reader of the run as it was at `tick` reads up to."""
        assert table in IDS
        return self.conn.execute(f"SELECT max(id) FROM {table} WHERE tick <= ?", (tick,)).fetchone()[0] or 0

    def digest(self) -> str:
        """A fingerprint of the simulation state (store/digest.py)."""
        return _digest.digest(self.conn, self.ledger())

    def ledger(self, until: int | None = None, after_id: int = 0) -> list[tuple]:
        """The economy's ledger, oldest first: (id, tick, time, kind, giver, taker, item, qty, note)
        of ticks up to `until` and ids above `after_id`; [] for a save from before it (schema 8)."""
        if not self.count("ledger"):
            return []
        where = Where().at_most("tick", until).above("id", after_id)
        return self.conn.execute("SELECT id, tick, time, kind, giver, taker, item, qty, note FROM ledger"
                                 f"{where.sql} ORDER BY id", where.args).fetchall()

    def memes(self, until: int | None = None, town: str | None = None) -> list[MemeRow]:
        """The meme summaries, oldest first, of ticks up to `until` (of one `town`, "" the rural
        area; None: all); [] for a save from before them (schema 11)."""
        if not self.count("memes"):
            return []
        where = Where().at_most("tick", until).eq("town", town)
        return [MemeRow(t, when, name, json.loads(topics), call or "") for t, when, name, topics, call in
                self.conn.execute(f"SELECT tick, time, town, topics, call FROM memes{where.sql} ORDER BY id", where.args)]

    # --- agents and objects -------------------------------------------------------------------

    def agent_names(self) -> list[str]:
        """In the order the save made them (the world file's)."""
        return [n for (n,) in self.conn.execute("SELECT name FROM agents ORDER BY rowid")]

    def agent_rows(self, by_name: bool = False) -> list[AgentRow]:
        """Every agents row, in the save's order (or by name)."""
        return [AgentRow(*r) for r in _plans.agent_rows(self.conn, "name" if by_name else "rowid")]

    def agent_state(self, name: str) -> dict:
        """The agent's mind state as last committed: plan, action, summary, known places, …"""
        rows = _plans.agent_rows(self.conn, name=name)
        return json.loads(rows[0][6]) if rows else {}

    def state_tick_by(self, tick: int) -> int | None:
        """The tick of the agents' state kept latest at or before `tick`: the save's own tick (its
        agents rows), else the latest snapshot's (taken each game hour); None: none that early."""
        now = int(self.meta("tick", 0))
        return now if tick >= now else self.snapshot_tick_by(tick)

    def agent_state_by(self, name: str, tick: int) -> tuple[int, dict] | None:
        """(the tick it is from, the agent's mind state) as kept latest at or before `tick`;
        None when the save keeps none that early, or has no such agent."""
        at = self.state_tick_by(tick)
        if at is None:
            return None
        if at == int(self.meta("tick", 0)):
            return (at, self.agent_state(name)) if name in self.agent_names() else None
        row = next((r for r in agent_rows_at(self.conn, at) if r[0] == name), None)
        return (at, json.loads(row[6])) if row else None

    def object_rows(self) -> list[tuple[str, str]]:
        """(address, state) of every object, by address."""
        return self.conn.execute("SELECT address, state FROM objects ORDER BY address").fetchall()

    # --- memories -----------------------------------------------------------------------------

    def memories(self, agent: str | None = None, kinds: Iterable[str] | None = None,
                 created_by: str | None = None, limit: int | None = None,
                 newest_first: bool = False) -> list[Memory]:
        """Memories (of `agent`, of `kinds`, made at or before the game time `created_by`), the
        newest `limit` of them, oldest first unless `newest_first`."""
        where = Where().eq("agent", agent).among("kind", kinds).at_most("created", created_by)
        lim, args = limited(limit)
        rows = [_memory(r) for r in self.conn.execute(f"{_MEMORY}{where.sql} ORDER BY id DESC{lim}",
                                                      [*where.args, *args])]
        return rows if newest_first else rows[::-1]

    def memory(self, memory_id: int) -> Memory | None:
        r = self.conn.execute(f"{_MEMORY} WHERE id=?", (memory_id,)).fetchone()
        return _memory(r) if r else None

    def memory_counts(self, agent: str, created_by: str | None = None) -> dict[str, int]:
        """Kind -> how many memories `agent` has of it (made at or before the game time `created_by`)."""
        where = Where().eq("agent", agent).at_most("created", created_by)
        return dict(self.conn.execute(f"SELECT kind, count(*) FROM memories{where.sql} GROUP BY kind", where.args))

    def memories_made(self, time: str) -> list[tuple[str, str]]:
        """(agent, description) of the memories made at the game time `time`, in order."""
        return self.conn.execute("SELECT agent, description FROM memories WHERE created = ? ORDER BY id",
                                 (time,)).fetchall()

    def memories_between(self, since: str, until: str) -> list[tuple[str, str, str]]:
        """(game time, agent, description) of the memories made at game times in (since, until], in order."""
        return self.conn.execute("SELECT created, agent, description FROM memories WHERE created > ? AND created <= ? "
                                 "ORDER BY id", (since, until)).fetchall()

    def last_access_until(self, agent: str, tick: int) -> dict[int, str]:
        """Memory id -> the game time a retrieval of `agent` last returned it, up to `tick` (a
        record is accessed only by retrievals); empty for a save without a retrieval log."""
        if not has_table(self.conn, "retrievals"):
            return {}
        last: dict[int, str] = {}
        for rid, time, results in self.conn.execute(
                "SELECT id, time, results FROM retrievals WHERE agent = ? AND tick <= ?", (agent, tick)):
            for r in unpack_scores(results, f"retrievals row {rid}"):
                if r["id"] not in last or last[r["id"]] < time:
                    last[r["id"]] = time
        return dict(sorted(last.items()))  # by id, as the SQL that grouped them gave them

    def retrievals(self, agent: str, limit: int = 20, until: int | None = None) -> list[dict]:
        """Newest first (of ticks up to `until`): {id, tick, time, purpose, query, results: [{id,
        recency, importance, relevance, total, description, kind}]}."""
        out = []
        where = Where().eq("agent", agent).at_most("tick", until)
        for rid, tick, time, purpose, query, results in self.conn.execute(
                f"SELECT id, tick, time, purpose, query, results FROM retrievals{where.sql} "
                "ORDER BY id DESC LIMIT ?", (*where.args, limit)):
            rows = unpack_scores(results, f"retrievals row {rid}")
            for r in rows:
                m = self.memory(r["id"])
                r["description"], r["kind"] = (m.description, m.kind) if m else ("(not saved)", "")
            out.append({"id": rid, "tick": tick, "time": time, "purpose": purpose, "query": query, "results": rows})
        return out

    # --- the event log ------------------------------------------------------------------------

    def events(self, agent: str | None = None, kinds: Iterable[str] | None = None, since: int | None = None,
               until: int | None = None, after_id: int | None = None, limit: int | None = None,
               newest_first: bool = False, upto_id: int | None = None) -> list[EventRow]:
        """Events (of `agent`, of `kinds`, of ticks in (since, until], with ids in (after_id,
        upto_id]), the newest `limit` of them, oldest first unless `newest_first`."""
        where = Where().eq("agent", agent).among("kind", kinds).above("tick", since).at_most("tick", until) \
            .above("id", after_id).at_most("id", upto_id)
        lim, args = limited(limit)
        rows = [_event(r) for r in self.conn.execute(f"{_EVENT}{where.sql} ORDER BY id DESC{lim}",
                                                     [*where.args, *args])]
        return rows if newest_first else rows[::-1]

    def event_counts_by_agent(self) -> list[tuple[str, int]]:
        """(agent, events) for every agent the event log names."""
        return self.conn.execute(
            "SELECT agent, count(*) FROM events WHERE agent IS NOT NULL GROUP BY agent").fetchall()

    # --- snapshots ----------------------------------------------------------------------------

    def snapshot_ticks(self) -> list[int]:
        if not has_snapshots(self.conn):
            return []
        return [t for (t,) in self.conn.execute("SELECT tick FROM snapshots ORDER BY tick")]

    def snapshot_tick_by(self, tick: int) -> int | None:
        """The tick of the latest snapshot at or before `tick`, if any."""
        if not has_snapshots(self.conn):
            return None
        return self.conn.execute("SELECT max(tick) FROM snapshots WHERE tick <= ?", (tick,)).fetchone()[0]

    def snapshot(self, tick: int, where: str | None = None) -> dict | None:
        """The snapshot at exactly `tick`, decoded (a damaged one is a SaveError naming `where`)."""
        return read_snapshot(self.conn, tick, where)

    # --- conversations ------------------------------------------------------------------------

    def conversations(self, until: int | None = None, since: int | None = None, agent: str | None = None,
                      limit: int | None = None) -> list[ConversationRow]:
        """Held at ticks in (since, until], with `agent` on either side, oldest first (the newest
        `limit`); see store/conversations.py."""
        return _conversations.read_conversations(self.conn, until, since, agent, limit)

    def conversation(self, cid: int) -> ConversationRow | None:
        """One conversation by its id (a said or stance event's data names it)."""
        return _conversations.conversation(self.conn, cid)

    def conversation_mark(self) -> int:
        """Grows when a conversation is saved: compared to know whether to read them again."""
        return _conversations.conversation_mark(self.conn)

    def chat_partners(self) -> dict[int, str]:
        """Chat memory id -> the other side of the conversation it summarises."""
        return _conversations.partners_of_chats(self.conn)

    # --- a day at a glance --------------------------------------------------------------------

    def day(self, day: date | None = None, gatherings: Iterable[_day.GatheringLike] = ()) -> _day.Day:
        """Each agent's spans of one game day (default: the last): what it did, where, with whom."""
        return _day.read_day(self.conn, self.agent_names(), day, gatherings)
