"""The tick's commit: what one tick (or intervention) changed, as the store's records (TickChanges),
which the engine commits through the save's one writer (with the snapshot of the state when one
is due), unless they hold `nothing`."""

from __future__ import annotations

import json
from dataclasses import fields
from datetime import timedelta

import numpy as np

from smalltown.llm.backend import CallRecord
from smalltown.mind import talk
from smalltown.sim.agent import Agent
from smalltown.sim.changes import Changes
from smalltown.store.conversations import ConversationRow
from smalltown.store.records import (Access, AgentRow, Call, Embedding, Memory, Move, ObjectState, Retrieval,
                                     TickChanges)
from smalltown.store.packing import pack_vector
from smalltown.store.schema import TIME_FMT


def records(changes: Changes, agents: list[Agent], objects: dict[str, str],
            memories: list[tuple[Memory, np.ndarray]], touched: list, retrievals: list[Retrieval],
            embeddings: list[tuple[str, np.ndarray]], calls: list[tuple[int, CallRecord]]) -> TickChanges:
    """The records of one tick: `changes` (what the systems noted) read off the domain objects."""
    tick, stamp = changes.tick, changes.stamp
    changed, moved = changes.changed, changes.moved
    by_name = {a.name: a for a in agents} if changed else {}
    return TickChanges(
        tick=tick, time=stamp,
        conversations=tuple(conversation(tick, c) for c in changes.conversations),
        agents=tuple(agent_row(by_name[n]) for n in sorted(changed)),
        moves=tuple(Move(a.name, a.tile[0], a.tile[1]) for a in agents
                    if a.name in moved and a.name not in changed) if moved else (),
        objects=tuple(ObjectState(o, objects[o]) for o in sorted(changes.objects)),
        events=tuple(changes.events),
        memories=tuple((m, _blob(emb)) for m, emb in memories),
        accessed=tuple(Access(mid, when) for mid, when in touched),
        retrievals=tuple(retrievals),
        embeddings=tuple(Embedding(text, _blob(vec)) for text, vec in embeddings),
        calls=tuple(Call(t, stamp, c) for t, c in calls),
        meta={"tick": tick, "game_time": stamp},
        ledger=tuple(changes.ledger_rows({a.name: i for i, a in enumerate(agents)}) if changes.ledger else ()),
        memes=tuple(changes.memes),
    )


_ROWS = tuple(f.name for f in fields(TickChanges) if f.name not in ("tick", "time", "meta"))


def nothing(rows: TickChanges) -> bool:
    """Whether a tick's records hold nothing but its clock."""
    return not any(getattr(rows, name) for name in _ROWS)


def _blob(vec: np.ndarray) -> bytes:
    return pack_vector(vec)


def agent_row(a: Agent) -> AgentRow:
    act = a.action
    state, plan = a.state_texts()
    return AgentRow(a.name, a.tile[0], a.tile[1], json.dumps(list(a.dest)) if a.dest else None,
                    act.describe() if act else None, act.address if act else None, state, plan)


def conversation(tick: int, c: talk.Conversation) -> ConversationRow:
    """The mind's conversation as the save's record (its id is the save's to give)."""
    end = c.start + timedelta(minutes=c.minutes)
    return ConversationRow(0, tick, c.start.strftime(TIME_FMT), end.strftime(TIME_FMT), c.place, c.initiator, c.other,
                        c.reason, list(c.lines),
                        {n: m.id for n, m in c.chats.items()}, dict(c.relationships))
