"""What the debugger screens read: the save, through the store's `Reader` over a read-only
connection of their own.

The save is committed once per tick (WAL), so a reader sees whole ticks while the simulation's
worker goes on writing; the screens never touch the Simulation itself. This adapter asks the
store as the screens ask: lists newest first, and an empty agent or kinds filter is no filter."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from smalltown.mind.state import AgentState
from smalltown.store.conversations import Conversation
from smalltown.store.reader import CallRow, CallSums, EventRow
from smalltown.store.save import open_reader
from smalltown.store.records import Memory


class UnreadableState(Exception):
    """An agent's stored state the mind's codec cannot read."""


class SaveReader:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        # opened as every command opens a save: its schema untrusted, its rows checked
        self.store = open_reader(self.path)

    def close(self) -> None:
        self.store.close()

    # --- the save as a whole ------------------------------------------------------------------

    def clock(self) -> tuple[int, datetime | None]:
        """The save's tick and game time, as of its last committed tick (None: it has no time)."""
        try:
            when = datetime.fromisoformat(self.store.meta("game_time", ""))
        except (TypeError, ValueError):
            when = None
        return self.store.meta("tick", 0), when

    def world_text(self) -> str | None:
        """The world file's text as stored (JSON text, unparsed: a stranger's may be huge)."""
        return self.store.meta_text("world_text")

    def newest_id(self, table: str) -> int:
        """The newest id in "events" or "llm_calls" (0 for none)."""
        return self.store.newest_id(table)

    # --- agents -------------------------------------------------------------------------------

    def agent_names(self) -> list[str]:
        return self.store.agent_names()

    def mind_state(self, name: str) -> AgentState | None:
        """The agent's mind state as last committed (plan, action, summary, known places, …),
        decoded by the mind's own codec; None when the save has no such agent. A state that does
        not decode (a save no check has read) raises `UnreadableState`, naming why."""
        try:
            raw = self.store.agent_state(name)
            if not raw and name not in self.store.agent_names():
                return None
            return AgentState.from_json(raw)
        except (KeyError, TypeError, ValueError, AttributeError) as e:  # its JSON, shape or times
            raise UnreadableState(f"{type(e).__name__}: {e}") from None

    # --- memories -----------------------------------------------------------------------------

    def memories(self, agent: str, kinds: tuple[str, ...] | None = None, limit: int = 200) -> list[Memory]:
        """Newest first."""
        return self.store.memories(agent, kinds or None, limit=limit, newest_first=True)

    def memory(self, memory_id: int) -> Memory | None:
        return self.store.memory(memory_id)

    def memory_counts(self, agent: str) -> dict[str, int]:
        return self.store.memory_counts(agent)

    def retrievals(self, agent: str, limit: int = 20) -> list[dict]:
        """Newest first: {id, tick, time, purpose, query, results: [{id, recency, importance,
        relevance, total, description, kind}]}."""
        return self.store.retrievals(agent, limit)

    # --- model calls --------------------------------------------------------------------------

    def calls(self, agent: str | None = None, task: str | None = None, notes_only: bool = False,
              after: int = 0, upto: int | None = None, limit: int = 500) -> list[CallRow]:
        """Newest first; only ids above `after` (and up to `upto`)."""
        return self.store.calls(agent or None, task or None, limit, after, upto, notes_only)

    def call_sums(self, agent: str | None = None, task: str | None = None, notes_only: bool = False,
                  after: int = 0, upto: int | None = None) -> CallSums:
        """(calls, prompt, cached, completion tokens) of what `calls` would list with no limit."""
        return self.store.call_sums(agent or None, task or None, after, upto, notes_only)

    def call(self, call_id: int) -> CallRow | None:
        return self.store.call(call_id)

    def call_detail(self, call_id: int) -> dict:
        """The full prompt, the raw answer and the parsed answer of one call, and its model."""
        return self.store.call_detail(call_id)

    def call_tasks(self) -> list[str]:
        return self.store.call_tasks()

    def call_sizes(self, ids: list[int]) -> dict[int, tuple[int, int]]:
        """{id: (characters of the prompt, of the raw answer)}, for a token estimate."""
        return self.store.call_sizes(ids)

    def call_backends(self) -> list[tuple[str, str, int]]:
        """(backend, model, calls) of each the call log names, the last to answer first."""
        return self.store.call_backends()

    def call_figures(self) -> dict:
        """Calls and fallbacks, by task and reason."""
        return self.store.call_figures()

    # --- events -------------------------------------------------------------------------------

    def events(self, agent: str | None = None, kinds: tuple[str, ...] | None = None, after: int = 0,
               upto: int | None = None, limit: int = 500) -> list[EventRow]:
        """Newest first; `kinds` None for all of them (and none for an empty one); only ids above
        `after` (and up to `upto`)."""
        return self.store.events(agent or None, kinds, after_id=after, upto_id=upto, limit=limit, newest_first=True)

    # --- conversations ------------------------------------------------------------------------

    def conversations(self, agent: str | None = None, limit: int | None = None) -> list[Conversation]:
        """With `agent` on either side when given; oldest first, the newest `limit`."""
        return self.store.conversations(agent=agent, limit=limit)

    def conversation_mark(self) -> int:
        """Grows when a conversation is saved: compared to know whether to read them again."""
        return self.store.conversation_mark()
