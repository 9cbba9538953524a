"""The tick's commit: what one tick (or intervention) changed, as the save's rows, in one
transaction, with the snapshot of the state when one is due."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Iterable

import numpy as np

from smalltown.llm.backend import CallRecord
from smalltown.mind.memory import Memory, Retrieval
from smalltown.mind.talk import Conversation
from smalltown.sim.agent import Agent
from smalltown.sim.changes import Changes
from smalltown.store.save import TIME_FMT, Save


def write(save: Save, changes: Changes, agents: list[Agent], objects: dict[str, str],
          memories: list[tuple[Memory, np.ndarray]], touched: list, retrievals: list[Retrieval],
          embeddings: list[tuple[str, np.ndarray]], calls: list[tuple[int, CallRecord]],
          snapshot: bool = False) -> None:
    tick, stamp = changes.tick, changes.stamp
    by_name = {a.name: a for a in agents}
    with save.transaction():
        if changes.conversations:
            ids = save.add_conversations(conversation_row(tick, c) for c in changes.conversations)
            for e in changes.events:
                if e.kind == "said" and "conversation" in e.data:
                    e.data["conversation"] = ids[e.data["conversation"]]
        save.upsert_agents(agent_row(by_name[n]) for n in sorted(changes.changed))
        save.move_agents((a.tile[0], a.tile[1], a.name) for a in agents
                         if a.name in changes.moved and a.name not in changes.changed)
        save.set_objects((o, objects[o]) for o in sorted(changes.objects))
        save.add_events((e.tick, e.time, e.agent, e.kind, e.text, json.dumps(e.data)) for e in changes.events)
        save.add_memories(
            (m.id, m.agent, m.kind, m.description, m.created.strftime(TIME_FMT),
             m.last_accessed.strftime(TIME_FMT), m.importance, emb.astype(np.float32).tobytes(),
             json.dumps(list(m.evidence))) for m, emb in memories)
        save.touch_memories((when.strftime(TIME_FMT), mid) for mid, when in touched)
        save.add_retrievals(retrieval_rows(tick, retrievals))
        save.add_embeddings((text, vec.astype(np.float32).tobytes()) for text, vec in embeddings)
        save.add_calls(
            (t, stamp, c.agent, c.task, c.prompt, c.raw_answer, c.parsed_answer, c.prompt_tokens,
             c.completion_tokens, c.cached_tokens, c.ms, c.backend, c.model, c.note, c.key, c.fallback)
            for t, c in calls)
        save.set_meta({"tick": tick, "game_time": stamp})
        if snapshot:
            save.write_snapshot(tick, stamp)


def agent_row(a: Agent) -> tuple:
    act = a.action
    return (a.name, a.tile[0], a.tile[1], json.dumps(list(a.dest)) if a.dest else None,
            act.describe() if act else None, act.address if act else None, a.state_json())


def conversation_row(tick: int, c: Conversation) -> tuple:
    end = c.start + timedelta(minutes=c.minutes)
    lines = [{"speaker": x.speaker, "text": x.text, "tells": x.tells, "facts": list(x.facts)} for x in c.lines]
    return (tick, c.start.strftime(TIME_FMT), end.strftime(TIME_FMT), c.place, c.initiator, c.other,
            c.reason, json.dumps(lines), json.dumps({n: m.id for n, m in c.chats.items()}),
            json.dumps(c.relationships))


def retrieval_rows(tick: int, retrievals: Iterable[Retrieval]) -> Iterable[tuple]:
    return ((tick, r.time.strftime(TIME_FMT), r.agent, r.purpose, r.query, json.dumps([
        {"id": s.memory.id, "recency": round(s.recency, 4), "importance": round(s.importance, 4),
         "relevance": round(s.relevance, 4), "total": round(s.total, 4)} for s in r.results]))
        for r in retrievals)
