"""The Reader's reads of the model-call log (a base of store/reader.py's Reader): the calls
screens, a run's summary, the cassette."""

from __future__ import annotations

import sqlite3
from typing import Iterable

from smalltown.store import calls as _calls
from smalltown.store.errors import guarded
from smalltown.store.packing import unpack_text
from smalltown.store.query import Where, limited
from smalltown.store.records import CallRow, CallSums, CallTotals

CALL_SELECT = ("SELECT id, tick, time, agent, task, prompt_tokens, cached_tokens, completion_tokens, ms, backend, note "
         "FROM llm_calls")

_SIZE = "CASE WHEN typeof({0}) = 'blob' THEN {0} ELSE length(coalesce({0}, '')) END"  # a packed text, or its length


def _chars(size: int | bytes, call_id: int) -> int:
    return size if isinstance(size, int) else len(unpack_text(size, f"llm_calls row {call_id}") or "")


def call_row(r: tuple) -> CallRow:
    """A CALL_SELECT row as a CallRow (a missing note reads as "")."""
    return CallRow(*r[:-1], note=r[-1] or "")


@guarded
class CallReads:
    conn: sqlite3.Connection  # (the Reader's)

    @staticmethod
    def _calls_where(agent: str | None, task: str | None, after_id: int | None, upto_id: int | None,
                     noted: bool) -> Where:
        where = Where().above("id", after_id).at_most("id", upto_id).eq("agent", agent).eq("task", task)
        return where.add("coalesce(note, '') != ''") if noted else where

    def calls(self, agent: str | None = None, task: str | None = None, limit: int | None = 200,
              after_id: int | None = None, upto_id: int | None = None, noted: bool = False) -> list[CallRow]:
        """Calls (of `agent`, of `task`, with ids in (after_id, upto_id], only those with a note
        when `noted`), the newest `limit` of them, newest first; a missing note reads as ""."""
        where = self._calls_where(agent, task, after_id, upto_id, noted)
        lim, args = limited(limit)
        return [call_row(r) for r in self.conn.execute(f"{CALL_SELECT}{where.sql} ORDER BY id DESC{lim}",
                                                    [*where.args, *args])]

    def call_sums(self, agent: str | None = None, task: str | None = None, after_id: int | None = None,
                  upto_id: int | None = None, noted: bool = False) -> CallSums:
        """The figures of the calls `calls` would list with no limit."""
        where = self._calls_where(agent, task, after_id, upto_id, noted)
        return CallSums(*self.conn.execute(
            "SELECT count(*), coalesce(sum(prompt_tokens), 0), coalesce(sum(cached_tokens), 0), "
            f"coalesce(sum(completion_tokens), 0) FROM llm_calls{where.sql}", where.args).fetchone())

    def call(self, call_id: int) -> CallRow | None:
        r = self.conn.execute(f"{CALL_SELECT} WHERE id = ?", (call_id,)).fetchone()
        return call_row(r) if r else None

    def call_tasks(self) -> list[str]:
        """The tasks the call log names, sorted."""
        return [t for (t,) in self.conn.execute("SELECT DISTINCT task FROM llm_calls ORDER BY task")]

    def tick_calls(self, tick: int) -> list[tuple[str, str]]:
        """(agent, task) of the calls made at `tick`, in order."""
        return self.conn.execute("SELECT agent, task FROM llm_calls WHERE tick = ? ORDER BY id", (tick,)).fetchall()

    def calls_between(self, since: int, until: int) -> list[tuple[int, str, str]]:
        """(tick, agent, task) of the calls made at ticks in (since, until], in order: what a
        replay checks model-call breakpoints against."""
        return self.conn.execute("SELECT tick, agent, task FROM llm_calls WHERE tick > ? AND tick <= ? ORDER BY id",
                                 (since, until)).fetchall()

    def call_detail(self, call_id: int) -> dict:
        """The full prompt, the raw answer and the parsed answer of one call, the model's name, and
        its attempts when it was retried or failed (store/calls.attempts_of)."""
        r = self.conn.execute("SELECT prompt, raw_answer, parsed_answer, model FROM llm_calls WHERE id=?",
                              (call_id,)).fetchone()
        where = f"llm_calls row {call_id}"
        return {"prompt": unpack_text(r[0], where), "raw_answer": unpack_text(r[1], where), "parsed_answer": unpack_text(r[2], where), "model": r[3],
                "attempts": _calls.attempts_of(self.conn, call_id)} if r else {}

    def call_totals(self, after_tick: int) -> CallTotals:
        """The calls logged at ticks after `after_tick`, in figures (0 for none)."""
        n, noted, prompt, cached = self.conn.execute(
            "SELECT count(*), sum(note != ''), sum(prompt_tokens), sum(cached_tokens) FROM llm_calls "
            "WHERE tick > ?", (after_tick,)).fetchone()
        return CallTotals(n, noted or 0, prompt or 0, cached or 0)

    def call_backends(self) -> list[tuple[str, str, int]]:
        """(backend, model, calls) of each backend and model the call log names, the one that
        answered last first: who answered a recorded run."""
        return [(b or "", m or "", n) for b, m, n in self.conn.execute(
            "SELECT backend, model, count(*) FROM llm_calls GROUP BY 1, 2 ORDER BY max(id) DESC")]

    def call_figures(self, after_id: int = 0, upto_id: int | None = None) -> dict:
        """How many calls, how many a fallback answered, by task and reason (store/calls.py)."""
        return _calls.call_figures(self.conn, after_id, upto_id)

    def call_sizes(self, ids: Iterable[int]) -> dict[int, tuple[int, int]]:
        """{id: (characters of the prompt, characters of the raw answer)}: what a token estimate
        is made from, reading only the texts kept compressed."""
        ids = list(ids)
        found: dict[int, tuple[int, int]] = {}
        for start in range(0, len(ids), 500):  # (SQLite's bound on a statement's parameters)
            part = ids[start:start + 500]
            marks = ", ".join("?" * len(part))
            for i, p, r in self.conn.execute(f"SELECT id, {_SIZE.format('prompt')}, {_SIZE.format('raw_answer')} "
                                             f"FROM llm_calls WHERE id IN ({marks})", part):
                found[i] = (_chars(p, i), _chars(r, i))
        return found

    def recorded_calls(self) -> list[tuple]:
        """(id, tick, task, key, prompt, parsed answer) of every call, in order: what a cassette
        replays (store/calls.py)."""
        return _calls.recorded(self.conn)

    def fallbacks_after(self, after_tick: int) -> dict[str, int]:
        """{reason: calls} of the calls at ticks after `after_tick` that a fallback answered, most first."""
        return _calls.fallbacks_after(self.conn, after_tick)
