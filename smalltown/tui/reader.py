"""What the debugger screens read: the save, through the store's `Reader` over a read-only
connection of their own.

The save is committed once per tick (WAL), so a reader sees whole ticks while the simulation's
worker goes on writing; the screens never touch the Simulation itself. This adapter asks the
store as the screens ask: lists newest first, and an empty agent or kinds filter is no filter.

A reader `bounded` to a tick (replay's scrubbed time) reads the run as it was at the end of that
tick: the logs up to it, the memories made by then with their last access then, and each agent's
mind state as kept latest at or before it (`state_tick` says when)."""

from __future__ import annotations

import copy
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from pathlib import Path

from smalltown.state.agent import AgentState
from smalltown.store.conversations import ConversationRow
from smalltown.store.errors import SaveError
from smalltown.store.records import CallRow, CallSums, EventRow
from smalltown.store.reader_why import ACTIONS_SHOWN  # noqa: F401  (the screens' bound)
from smalltown.store.save import open_reader
from smalltown.store.records import Memory
from smalltown.store.schema import TIME_FMT
from smalltown.world.errors import WorldError
from smalltown.world.load import load_world_text
from smalltown.world.model import World

RETRIEVALS_AT_A_TICK = 50  # an agent's retrievals read back for one tick's (a conversation makes a few a line)


class UnreadableState(Exception):
    """An agent's stored state the mind's codec cannot read."""


@dataclass(frozen=True)
class Until:
    """A reader's upper bound: the end of `tick`, at game time `time` (ticks of `step_seconds`)."""
    tick: int
    time: datetime
    step_seconds: int

    def time_of(self, tick: int) -> datetime:
        return self.time - timedelta(seconds=(self.tick - tick) * self.step_seconds)

    @property
    def stamp(self) -> str:
        """The game time as the save writes it."""
        return self.time.strftime(TIME_FMT)


class SaveReader:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        # opened as every command opens a save: its schema untrusted, its rows checked
        self.store = open_reader(self.path)
        self.until: Until | None = None  # None: the save as last committed
        self._shared: dict = {}  # read once, for this reader and its bounded copies (the world)

    def close(self) -> None:
        self.store.close()

    def bounded(self, until: Until) -> "SaveReader":
        """This reader (its connection shared: close this one, not the copy) reading the run as it
        was at the end of `until.tick`."""
        other = copy.copy(self)
        other.until = until
        return other

    # --- the save as a whole ------------------------------------------------------------------

    def clock(self) -> tuple[int, datetime | None]:
        """The save's tick and game time, as of its last committed tick (None: it has no time), or
        the bound's."""
        if self.until is not None:
            return self.until.tick, self.until.time
        try:
            when = datetime.fromisoformat(self.store.meta("game_time", ""))
        except (TypeError, ValueError):
            when = None
        return self.store.meta("tick", 0), when

    def settings(self) -> dict:
        """The run's settings as the save keeps them (those set; {} when none or not a table)."""
        kept = self.store.meta("settings", {})
        return kept if isinstance(kept, dict) else {}

    def world_text(self) -> str | None:
        """The world file's text as stored (JSON text, unparsed: a stranger's may be huge)."""
        return self.store.meta_text("world_text")

    def world(self) -> World | None:
        """The save's world, read once from its stored texts; None (and `world_problem` says why)
        when they are missing or do not load (a stranger's save)."""
        if "world" not in self._shared:
            world, problem = None, ""
            try:
                texts = [self.store.meta(k) for k in ("world_source", "world_text", "map_source", "map_text")]
                if all(isinstance(t, str) for t in texts):
                    world = load_world_text(*texts)
                else:
                    problem = "the save keeps no world text"
            except (WorldError, SaveError, ValueError, TypeError) as e:
                problem = f"its world does not load: {e}"
            self._shared["world"], self._shared["world_problem"] = world, problem
        return self._shared["world"]

    @property
    def world_problem(self) -> str:
        return self._shared.get("world_problem", "")

    def ledger(self, after_id: int = 0) -> list[tuple]:
        """The economy's ledger rows (id, tick, time, kind, giver, taker, item, qty, note), oldest
        first, with ids above `after_id`, up to the bound."""
        return self.store.ledger(self._tick(), after_id)

    def newest_id(self, table: str) -> int:
        """The newest id in "events" or "llm_calls" (0 for none), up to the bound."""
        if self.until is not None:
            return self.store.newest_id_by(table, self.until.tick)
        return self.store.newest_id(table)

    # --- agents -------------------------------------------------------------------------------

    def agent_names(self) -> list[str]:
        return self.store.agent_names()

    def mind_state(self, name: str) -> AgentState | None:
        """The agent's mind state as last committed (plan, action, summary, known places, …),
        decoded by the mind's own codec; None when the save has no such agent. A state that does
        not decode (a save no check has read) raises `UnreadableState`, naming why."""
        try:
            if self.until is not None:
                kept = self.store.agent_state_by(name, self.until.tick)
                return AgentState.from_json(kept[1]) if kept is not None else None
            raw = self.store.agent_state(name)
            if not raw and name not in self.store.agent_names():
                return None
            return AgentState.from_json(raw)
        except (KeyError, TypeError, ValueError, AttributeError, SaveError) as e:  # its JSON, shape, times, snapshots
            raise UnreadableState(f"{type(e).__name__}: {e}") from None

    def state_tick(self) -> int | None:
        """Bounded: the tick `mind_state` reads the agents' state from (the bound's own, or the
        hourly snapshot before it); None when not bounded or no state is kept that early."""
        return self.store.state_tick_by(self.until.tick) if self.until is not None else None

    # --- memories -----------------------------------------------------------------------------

    def memories(self, agent: str, kinds: tuple[str, ...] | None = None, limit: int = 200) -> list[Memory]:
        """Newest first."""
        rows = self.store.memories(agent, kinds or None, created_by=self._stamp(), limit=limit, newest_first=True)
        return self._as_then(agent, rows)

    def memory(self, memory_id: int) -> Memory | None:
        m = self.store.memory(memory_id)
        return self._as_then(m.agent, [m])[0] if m is not None else None

    def _as_then(self, agent: str, rows: list[Memory]) -> list[Memory]:
        """Bounded: each record's last access as of then (a record is accessed only by retrievals)."""
        if self.until is None:
            return rows
        accessed = self.store.last_access_until(agent, self.until.tick)
        return [replace(m, last_accessed=max(m.created, datetime.fromisoformat(accessed[m.id])))
                if m.id in accessed else replace(m, last_accessed=m.created) for m in rows]

    def memory_counts(self, agent: str) -> dict[str, int]:
        return self.store.memory_counts(agent, created_by=self._stamp())

    def retrievals(self, agent: str, limit: int = 20) -> list[dict]:
        """Newest first: {id, tick, time, purpose, query, results: [{id, recency, importance,
        relevance, total, description, kind}]}."""
        return self.store.retrievals(agent, limit, until=self._tick())

    def _stamp(self) -> str | None:
        return self.until.stamp if self.until is not None else None

    def _tick(self) -> int | None:
        return self.until.tick if self.until is not None else None

    def _upto(self, table: str, upto: int | None) -> int | None:
        """An id bound within the reader's bound."""
        if self.until is None:
            return upto
        bound = self.newest_id(table)
        return bound if upto is None else min(upto, bound)

    # --- model calls --------------------------------------------------------------------------

    def calls(self, agent: str | None = None, task: str | None = None, notes_only: bool = False,
              after: int = 0, upto: int | None = None, limit: int = 500) -> list[CallRow]:
        """Newest first; only ids above `after` (and up to `upto`)."""
        return self.store.calls(agent or None, task or None, limit, after, self._upto("llm_calls", upto), notes_only)

    def call_sums(self, agent: str | None = None, task: str | None = None, notes_only: bool = False,
                  after: int = 0, upto: int | None = None) -> CallSums:
        """(calls, prompt, cached, completion tokens) of what `calls` would list with no limit."""
        return self.store.call_sums(agent or None, task or None, after, self._upto("llm_calls", upto), notes_only)

    def call(self, call_id: int) -> CallRow | None:
        return self.store.call(call_id)

    def call_detail(self, call_id: int) -> dict:
        """The full prompt, the raw answer and the parsed answer of one call, and its model."""
        return self.store.call_detail(call_id)

    def deciding_calls(self, agent: str, refs: list[dict]) -> list[int]:
        """The ids of the logged calls an action names as deciding it (state.agent.Action.calls),
        in the order asked; those the log does not hold are left out."""
        found = (self.store.call_decided(agent, ref) for ref in refs)
        return list(dict.fromkeys(c.id for c in found if c is not None))

    def call_retrievals(self, call_id: int) -> list[dict]:
        """The retrievals logged with a call (its agent's at its tick), oldest first, each record
        with its three scores, its total, its description and kind (as `retrievals`)."""
        c = self.store.call(call_id)
        if c is None:
            return []
        return [r for r in reversed(self.store.retrievals(c.agent, RETRIEVALS_AT_A_TICK, until=c.tick))
                if r["tick"] == c.tick]

    def actions_decided_by(self, call_id: int) -> list[EventRow]:
        """The actions (their "started" events, oldest first) that name the call as deciding them."""
        c = self.store.call(call_id)
        return self.store.actions_decided_by(c) if c is not None else []

    def call_tasks(self) -> list[str]:
        return self.store.call_tasks()

    def call_sizes(self, ids: list[int]) -> dict[int, tuple[int, int]]:
        """{id: (characters of the prompt, of the raw answer)}, for a token estimate."""
        return self.store.call_sizes(ids)

    def call_backends(self) -> list[tuple[str, str, int]]:
        """(backend, model, calls) of each the call log names, the last to answer first."""
        return self.store.call_backends()

    def call_figures(self, after_id: int = 0, upto_id: int | None = None) -> dict:
        """Calls and fallbacks (of the calls with ids in (after_id, upto_id]), by task and reason."""
        return self.store.call_figures(after_id, upto_id)

    # --- events -------------------------------------------------------------------------------

    def events(self, agent: str | None = None, kinds: tuple[str, ...] | None = None, after: int = 0,
               upto: int | None = None, limit: int = 500) -> list[EventRow]:
        """Newest first; `kinds` None for all of them (and none for an empty one); only ids above
        `after` (and up to `upto`)."""
        return self.store.events(agent or None, kinds, after_id=after, upto_id=self._upto("events", upto), limit=limit,
                                 newest_first=True)

    # --- conversations ------------------------------------------------------------------------

    def conversations(self, agent: str | None = None, limit: int | None = None) -> list[ConversationRow]:
        """With `agent` on either side when given; oldest first, the newest `limit`."""
        return self.store.conversations(until=self._tick(), agent=agent, limit=limit)

    def conversation_mark(self) -> int:
        """Grows when a conversation is saved: compared to know whether to read them again."""
        return self.store.conversation_mark()
