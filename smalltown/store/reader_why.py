"""The Reader's reads for "why did the agent do that?" (a base of store/reader.py's Reader): the
action an agent had begun by a tick, the model calls its provenance names (llm.asker.call_ref), the
retrievals logged with them and the memories those cite, followed down their evidence (reflections
rest on memories).

Rows come back as the save holds them; which of them answer "why" is for `smalltown why`
(cli/why.py) to put together.
"""

from __future__ import annotations

import json
import sqlite3

from smalltown.store.errors import guarded
from smalltown.store.packing import unpack_scores
from smalltown.store.query import Where, limited
from smalltown.store.reader_calls import CALL_SELECT, call_row
from smalltown.store.records import CallRow, EventRow, Memory
from smalltown.store.snapshots import has_table

ACTIONS_SHOWN = 50  # actions listed as decided by one call (a day's plan decides a whole day)
EVIDENCE_DEPTH = 3  # reflections on reflections: how far down a chain is followed
EVIDENCE_MEMORIES = 200  # at most this many memories in one chain (a bound on a hostile save)


@guarded
class WhyReads:
    conn: sqlite3.Connection  # (the Reader's)

    def memory(self, memory_id: int) -> Memory | None: ...  # (the Reader's)

    def action_started_by(self, agent: str, tick: int) -> EventRow | None:
        """The agent's latest "started" event at or before `tick`: the action it was doing then
        (its data: activity, address, end)."""
        r = self.conn.execute("SELECT id, tick, time, agent, kind, text, data FROM events "
                              "WHERE agent = ? AND kind = 'started' AND tick <= ? ORDER BY id DESC LIMIT 1",
                              (agent, tick)).fetchone()
        return EventRow(r[0], r[1], r[2], r[3], r[4], r[5], json.loads(r[6] or "{}")) if r else None

    def deciding_tick(self, agent: str, tick: int) -> int | None:
        """The latest tick at or before `tick` at which the agent made model calls (None: none):
        the calls an action that started at `tick` was chosen from (its plan, its reaction)."""
        return self.conn.execute("SELECT max(tick) FROM llm_calls WHERE agent = ? AND tick <= ?",
                                 (agent, tick)).fetchone()[0]

    def call_decided(self, agent: str, ref: dict) -> CallRow | None:
        """The logged call an action's provenance names (llm.asker.call_ref): the first call of
        that agent (the ref's own `agent`, when another's) with that key at or after the tick it
        was asked at (a question decided ahead, or a slow one, is logged when taken up). None: not
        in the log (a stripped save) or a ref that is not one."""
        if not isinstance(ref, dict) or not isinstance(ref.get("key"), str) or not isinstance(ref.get("tick"), int):
            return None
        r = self.conn.execute(f"{CALL_SELECT} WHERE agent = ? AND key = ? AND tick >= ? ORDER BY tick, id LIMIT 1",
                              (ref.get("agent") or agent, ref["key"], ref["tick"])).fetchone()
        return call_row(r) if r else None

    def actions_decided_by(self, call: CallRow, limit: int = ACTIONS_SHOWN) -> list[EventRow]:
        """The "started" events (oldest first, the first `limit`) whose action names `call` among
        the calls that decided it: a day's plan decides many, a decomposition a few."""
        rows = self.conn.execute(
            "SELECT DISTINCT e.id, e.tick, e.time, e.agent, e.kind, e.text, e.data FROM events e, "
            "json_each(e.data, '$.calls') j WHERE e.kind = 'started' AND e.tick >= ? AND json_valid(e.data) "
            "AND json_extract(j.value, '$.key') = ? AND json_extract(j.value, '$.tick') <= ? "
            "AND coalesce(nullif(json_extract(j.value, '$.agent'), ''), e.agent) = ? ORDER BY e.id",
            (call.tick, self.call_key(call.id), call.tick, call.agent))
        out: list[EventRow] = []
        for r in rows:
            data = json.loads(r[6])
            # (the ref names this call only if no earlier call of that key answers it: call_decided)
            if any(isinstance(ref, dict) and (found := self.call_decided(r[3], ref)) is not None and found.id == call.id
                   for ref in data.get("calls") or []):
                out.append(EventRow(r[0], r[1], r[2], r[3], r[4], r[5], data))
                if len(out) >= limit:
                    break
        return out

    def call_key(self, call_id: int) -> str | None:
        """A call's key (backend.task_key): what an action's `calls` name it by."""
        r = self.conn.execute("SELECT key FROM llm_calls WHERE id = ?", (call_id,)).fetchone()
        return r[0] if r else None

    def calls_at(self, agent: str, tick: int) -> list[CallRow]:
        """The agent's calls at exactly `tick`, in the order they were made."""
        return [call_row(r) for r in self.conn.execute(
            f"{CALL_SELECT} WHERE agent = ? AND tick = ? ORDER BY id", (agent, tick))]

    def calls_in(self, agent: str | None = None, task: str | None = None, since: int | None = None,
                 until: int | None = None, limit: int | None = None) -> list[CallRow]:
        """Calls (of `agent`, of `task`, at ticks in [since, until]), oldest first (the newest
        `limit` of them): what `smalltown calls` lists."""
        where = Where().eq("agent", agent).eq("task", task).at_most("tick", until)
        if since is not None:
            where = where.add("tick >= ?", since)
        lim, args = limited(limit)
        rows = [call_row(r) for r in self.conn.execute(
            f"{CALL_SELECT}{where.sql} ORDER BY id DESC{lim}", [*where.args, *args])]
        return rows[::-1]

    def retrievals_at(self, agent: str, tick: int) -> list[dict]:
        """The agent's retrievals at exactly `tick`, in order: {id, tick, time, purpose, query,
        results: [{id, recency, importance, relevance, total}]} (scores as logged); [] for a save
        without a retrieval log."""
        if not has_table(self.conn, "retrievals"):
            return []
        return [{"id": rid, "tick": t, "time": time, "purpose": purpose, "query": query,
                 "results": unpack_scores(results, f"retrievals row {rid}")}
                for rid, t, time, purpose, query, results in self.conn.execute(
                    "SELECT id, tick, time, purpose, query, results FROM retrievals WHERE agent = ? AND tick = ? "
                    "ORDER BY id", (agent, tick))]

    def evidence_chain(self, ids: list[int], depth: int = EVIDENCE_DEPTH) -> list[Memory]:
        """The memories `ids` name and those their evidence names, `depth` levels down, each once,
        in the order met (at most EVIDENCE_MEMORIES of them)."""
        seen: dict[int, Memory] = {}
        level = list(dict.fromkeys(ids))
        for _ in range(depth + 1):
            nxt: list[int] = []
            for i in level:
                m = None if i in seen or len(seen) >= EVIDENCE_MEMORIES else self.memory(i)
                if m is not None:
                    seen[i] = m
                    nxt.extend(e for e in m.evidence if e not in seen)
            level = list(dict.fromkeys(nxt))
            if not level:
                break
        return list(seen.values())
