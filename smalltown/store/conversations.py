"""The conversations table (schema 4): one row per conversation, the story of who talked with whom.

A row holds where and when two agents talked, who started it and what made them (`reason`), the
lines (each with the memories it passed on, `tells`, and the world's facts those were about),
each side's summary of it as a chat memory (`chats`: agent -> memory id) and each side's view of
the other (`relationships`: agent -> text). The simulation also logs each line as a `said` event
(the timeline), whose data names the row (`conversation`).

A save from before schema 4 has only the `said` events: its conversations are rebuilt from them
when it is migrated (`rebuild_from_said`), and read from them as they are when it is only read
(`read_conversations` on a save that has no table).
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from typing import Iterable, Iterator

from smalltown.store.query import Where, limited

COLUMNS = ("tick", "time", "end_time", "place", "initiator", "other", "reason", "lines", "chats",
           "relationships")

# what `save check` accepts (a save from a stranger is data, and bounded)
MAX_LINES = 1_000  # lines in one conversation
MAX_TEXT = 10_000  # characters of a line, a place, a reason or a relationship summary
MAX_JSON = 1_000_000  # characters of one JSON column
MAX_TELLS = 100  # memory ids one line passes on

# how an older smalltown worded the action an agent took up for a conversation (its `started`
# event carries the conversation's end): read only to rebuild the conversations of old saves
_TALKING = "talking with "


@dataclass(frozen=True)
class Line:
    """A line of a conversation, as saved and as the mind holds it (a question carries it as
    `llm.tasks.TranscriptLine`, without the memory ids)."""

    speaker: str
    text: str
    tells: tuple[int, ...] = ()  # ids of the memories the line passed on
    facts: tuple[str, ...] = ()  # the world's facts those were about


@dataclass
class ConversationRow:
    """A conversation as saved: one row of the conversations table (the mind holds a conversation
    as `mind.talk.Conversation`)."""

    id: int  # the row's id; 0 for one read from the said events of an old save
    tick: int  # when it was held (it is written at once, at the tick it starts)
    time: str  # game times, in the save's TIME_FMT
    end_time: str
    place: str
    initiator: str
    other: str
    reason: str = ""  # what the initiator saw that started it
    lines: list[Line] = field(default_factory=list)
    chats: dict[str, int] = field(default_factory=dict)  # agent -> its chat memory (its summary)
    relationships: dict[str, str] = field(default_factory=dict)  # agent -> its view of the other

    @property
    def participants(self) -> tuple[str, str]:
        """The two, the one who started it first."""
        return self.initiator, self.other

    def other_side(self, name: str) -> str:
        """The one `name` talked with."""
        return self.other if name == self.initiator else self.initiator


def has_conversations(conn: sqlite3.Connection) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='conversations'").fetchone() \
        is not None


# --- writing ---------------------------------------------------------------------------------------


def add_conversations(conn: sqlite3.Connection, rows: Iterable[tuple]) -> list[int]:
    """rows: (tick, time, end_time, place, initiator, other, reason, lines_json, chats_json,
    relationships_json). Returns the ids given to them, in order."""
    sql = f"INSERT INTO conversations({', '.join(COLUMNS)}) VALUES ({','.join('?' * len(COLUMNS))})"
    return [conn.execute(sql, row).lastrowid for row in rows]


def rebuild_from_said(conn: sqlite3.Connection) -> int:
    """Fill the conversations table from the `said` events of a save from before schema 4 (see
    `_from_said`), and name each line's conversation in its event's data. Returns how many."""
    n = 0
    for c, events in _from_said(conn):
        (cid,) = add_conversations(conn, [row(c)])
        conn.executemany("UPDATE events SET data = ? WHERE id = ?",
                         ((json.dumps({**data, "conversation": cid}), eid) for eid, data in events))
        n += 1
    return n


def row(c: ConversationRow) -> tuple:
    """The row of a conversation (its id is the save's to give)."""
    lines = [{"speaker": x.speaker, "text": x.text, "tells": list(x.tells), "facts": list(x.facts)} for x in c.lines]
    return (c.tick, c.time, c.end_time, c.place, c.initiator, c.other, c.reason, json.dumps(lines),
            json.dumps(c.chats), json.dumps(c.relationships))


# --- reading ---------------------------------------------------------------------------------------


def read_conversations(conn: sqlite3.Connection, until: int | None = None, since: int | None = None,
                       agent: str | None = None, limit: int | None = None) -> list[ConversationRow]:
    """Conversations held at ticks in (since, until] (either bound may be left open), with `agent`
    on either side if given, oldest first; the newest `limit` of them when given. A save from
    before schema 4 that was not migrated (read-only) has its conversations read from its `said`
    events as its migration would rebuild them (ids 0; no reasons, tells or relationships)."""
    if not has_conversations(conn):
        convs = [c for c, _ in _from_said(conn, until, since, agent)]
        return convs[-limit:] if limit is not None and limit > 0 else ([] if limit == 0 else convs)
    where = _ticks(until, since)
    if agent is not None:
        where.add("(initiator = ? OR other = ?)", agent, agent)
    lim, args = limited(limit)
    sql = f"SELECT id, {', '.join(COLUMNS)} FROM conversations{where.sql} ORDER BY id DESC{lim}"
    return [_conversation(r) for r in reversed(conn.execute(sql, [*where.args, *args]).fetchall())]


def conversation(conn: sqlite3.Connection, cid: int) -> ConversationRow | None:
    """One conversation by its id (a said event's data names it)."""
    if not has_conversations(conn):
        return None
    row = conn.execute(f"SELECT id, {', '.join(COLUMNS)} FROM conversations WHERE id = ?", (cid,)).fetchone()
    return _conversation(row) if row else None


def count_conversations(conn: sqlite3.Connection) -> int:
    """How many (for a save read as it is from before schema 4: grouped from its said events)."""
    if has_conversations(conn):
        return conn.execute("SELECT count(*) FROM conversations").fetchone()[0]
    return len(_group_said(_said_rows(conn)))


def conversation_mark(conn: sqlite3.Connection) -> int:
    """A number that grows when a conversation is saved (the newest id; for a save read as it is
    from before schema 4, the newest said event's): what a screen compares to know it must re-read."""
    if has_conversations(conn):
        return conn.execute("SELECT coalesce(max(id), 0) FROM conversations").fetchone()[0]
    return conn.execute("SELECT coalesce(max(id), 0) FROM events WHERE kind = 'said'").fetchone()[0]


def raw_conversations(conn: sqlite3.Connection) -> Iterator[tuple]:
    """Every row as stored, JSON unparsed: (id, tick, time, end_time, place, initiator, other,
    reason, lines, chats, relationships), for `save check` to judge."""
    if has_conversations(conn):
        yield from conn.execute(f"SELECT id, {', '.join(COLUMNS)} FROM conversations ORDER BY id")


def partners_of_chats(conn: sqlite3.Connection) -> dict[int, str]:
    """Chat memory id -> the other side of the conversation it summarises, for every conversation
    whose chats are recorded."""
    out: dict[int, str] = {}
    for c in read_conversations(conn):
        for name, mid in c.chats.items():
            out[mid] = c.other_side(name)
    return out


def _conversation(r: tuple) -> ConversationRow:
    lines = [Line(str(x.get("speaker", "")), str(x.get("text", "")), tuple(x.get("tells") or ()),
                  tuple(x.get("facts") or ()))
             for x in _json(r[8], list) if isinstance(x, dict)]
    return ConversationRow(r[0], r[1], r[2], r[3] or r[2], r[4] or "", r[5], r[6], r[7] or "", lines,
                        _json(r[9], dict), _json(r[10], dict))


def _json(text: str | None, kind: type):
    try:
        value = json.loads(text or "null")
    except ValueError:
        value = None
    return value if isinstance(value, kind) else kind()


def _json_object(text: str | None) -> dict:
    return _json(text, dict)


# --- the said events of an older save --------------------------------------------------------------


def _ticks(until: int | None, since: int | None) -> Where:
    """Rows in the ticks (since, until] (either bound left open when None)."""
    return Where().at_most("tick", until).above("tick", since)


def _said_rows(conn: sqlite3.Connection, until: int | None = None, since: int | None = None,
               agent: str | None = None) -> list[tuple]:
    """(id, tick, time, speaker, text, data) of said events, oldest first."""
    where = _ticks(until, since).add("kind = 'said'")
    if agent is not None:
        where.add("(agent = ? OR json_extract(data, '$.to') = ?)", agent, agent)
    return conn.execute(f"SELECT id, tick, time, agent, text, data FROM events{where.sql} ORDER BY id",
                        where.args).fetchall()


def _group_said(rows: Iterable[tuple]) -> list[tuple[ConversationRow, list[tuple[int, dict]]]]:
    """Said events into conversations: consecutive lines at the same tick between the same two
    agents are one. Each with its events (id, data)."""
    out: list[tuple[ConversationRow, list[tuple[int, dict]]]] = []
    for eid, tick, time, speaker, text, data in rows:
        d = _json_object(data)
        speaker = speaker or "?"
        listener = str(d.get("to") or "?")
        last = out[-1][0] if out else None
        if last is None or last.tick != tick or {last.initiator, last.other} != {speaker, listener}:
            last = ConversationRow(0, tick, time, time, str(d.get("place") or ""), speaker, listener)
            out.append((last, []))
        text, prefix = text or "", f"{speaker}: "
        last.lines.append(Line(speaker, text[len(prefix):] if text.startswith(prefix) else text))
        out[-1][1].append((eid, d))
    return out


def _from_said(conn: sqlite3.Connection, until: int | None = None, since: int | None = None,
               agent: str | None = None) -> list[tuple[ConversationRow, list[tuple[int, dict]]]]:
    """The conversations of a save from before schema 4, from its `said` events (`_group_said`),
    with what else the save tells of them: a side's chat is the chat memory it made at the
    conversation's time (the one naming the other, if it made several); the end is the end of
    the talking action the initiator took up for it, else the start. What the old events did not
    record is left empty: no tells or facts, no relationships, no reason."""
    convs = _group_said(_said_rows(conn, until, since, agent))
    if not convs:
        return convs
    chats: dict[tuple[str, str], list[tuple[int, str]]] = {}
    for mid, who, created, text in conn.execute(
            "SELECT id, agent, created, description FROM memories WHERE kind = 'chat' ORDER BY id"):
        chats.setdefault((who, created), []).append((mid, text or ""))
    talking: dict[tuple[int, str], list[tuple[int, str, str]]] = {}  # (tick, agent) -> (event id, activity, end)
    for eid, tick, who, data in conn.execute(
            "SELECT id, tick, agent, data FROM events WHERE kind = 'started' "
            "AND tick IN (SELECT tick FROM events WHERE kind = 'said') ORDER BY id"):
        d = _json_object(data)
        if str(d.get("activity") or "").startswith(_TALKING) and d.get("end"):
            talking.setdefault((tick, who), []).append((eid, str(d["activity"]), str(d["end"])))
    for c, events in convs:
        for name in c.participants:
            pool = chats.get((name, c.time), [])
            pick = next((x for x in pool if c.other_side(name) in x[1]), pool[0] if pool else None)
            if pick is not None:
                pool.remove(pick)
                c.chats[name] = pick[0]
        last = max(eid for eid, _ in events)
        c.end_time = next((end for eid, activity, end in talking.get((c.tick, c.initiator), [])
                           if eid > last and activity == _TALKING + c.other), c.time)
    return convs