"""What the save holds, as typed records: the one shape each concept has on its way in (the writer,
store/writer.py) and, where a reader wants the same thing back, on its way out (store/reader.py).

Records are plain data with no behaviour and no SQL. Times are `datetime` where the program
computes with them (a memory's), text in the save's TIME_FMT where they are only shown or keyed
(an event's, a tick's); the writer turns a `datetime` into text, the reader back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, NamedTuple

from smalltown.store.conversations import ConversationRow


@dataclass
class Memory:
    """One entry of an agent's memory stream. Not frozen: retrieval updates `last_accessed` in
    place, on the object the stream and its Scored results share (mind/memory.py)."""

    id: int
    agent: str
    kind: str  # "observation", "reflection", "plan" or "chat" (mind.memory.KINDS)
    description: str
    created: datetime
    last_accessed: datetime
    importance: int  # 1..10 (None only in a schema-1 save's seed memories, before they are rated)
    evidence: tuple[int, ...] = ()  # ids of the memories it was derived from


@dataclass(frozen=True)
class Scored:
    """One retrieved memory with its components, each min–max normalised over the candidates."""

    memory: Memory
    recency: float
    importance: float
    relevance: float
    total: float


@dataclass
class Retrieval:
    """One retrieval, kept so the debugger can show why these memories came back."""

    agent: str
    query: str
    time: datetime
    purpose: str
    results: list[Scored]


@dataclass(frozen=True)
class Event:
    """One line of the event log. `data` may be completed by the writer: a said event's
    "conversation" names its conversation by position among the tick's, and becomes its row id."""

    tick: int
    time: str  # TIME_FMT
    agent: str | None
    kind: str  # one of sim.events.KINDS
    text: str
    data: dict = field(default_factory=dict)


@dataclass(frozen=True)
class AgentRow:
    """An agent as the save holds it: its body on the map and its mind's state (JSON)."""

    name: str
    x: int
    y: int
    dest: str | None  # "[x, y]" of where it walks to
    action: str | None  # the action described
    address: str | None  # where the action happens
    state: str | None  # the mind's state, JSON as stored (a check judges it before it is parsed)
    # Written by a tick: the plan's JSON, kept apart (store/plans.py), `state` then holding "plan"
    # null. None: `state` holds the plan, if any (as every reader gives it).
    plan: str | None = None


@dataclass(frozen=True)
class Move:
    """An agent of which only the tile changed this tick."""

    name: str
    x: int
    y: int


@dataclass(frozen=True)
class ObjectState:
    address: str  # sector:arena:object
    state: str


@dataclass(frozen=True)
class Access:
    """A retrieval returned memory `memory` at `time`: its last access."""

    memory: int
    time: datetime


@dataclass(frozen=True)
class Embedding:
    """A text's vector (as store/packing.py packs it), kept once per text."""

    text: str
    vector: bytes


@dataclass
class CallRecord:
    """One answered task, as the `llm_calls` table holds it (the asker makes it; its tick is the
    simulation's to give)."""

    agent: str
    task: str
    prompt: str
    raw_answer: str
    parsed_answer: str  # JSON
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int
    ms: float
    backend: str
    model: str
    note: str = ""  # what happened beyond a plain answer: records dropped to fit, a fallback and why
    key: str = ""  # the question's identity (llm.backend.task_key)
    fallback: str = ""  # why another backend answered: "too long", "cut off", "invalid", "failed"
    attempts: str = ""  # JSON: each attempt (number, tokens, ms, why it failed), when retried or failed; else ''


@dataclass(frozen=True)
class Call:
    """A model call at its tick."""

    tick: int
    time: str  # TIME_FMT
    record: CallRecord


@dataclass(frozen=True)
class TickChanges:
    """Everything one tick (or one intervention, or an opening's upgrade) changed, as the rows the
    writer commits in one transaction. `tick` and `time` say when (a snapshot is taken then);
    `meta` is written as given (a tick's commit carries the clock there)."""

    tick: int = 0
    time: str = ""  # TIME_FMT
    conversations: tuple[ConversationRow, ...] = ()  # new ones (their `id` is given by the save)
    agents: tuple[AgentRow, ...] = ()  # whole rows, inserted or replaced
    moves: tuple[Move, ...] = ()
    objects: tuple[ObjectState, ...] = ()
    events: tuple[Event, ...] = ()
    memories: tuple[tuple[Memory, bytes], ...] = ()  # new memories with their vectors
    accessed: tuple[Access, ...] = ()
    retrievals: tuple[Retrieval, ...] = ()  # made at `tick`
    embeddings: tuple[Embedding, ...] = ()
    calls: tuple[Call, ...] = ()
    completed: tuple[tuple[Memory, bytes], ...] = ()  # memories already saved, now rated and embedded
    meta: dict[str, Any] = field(default_factory=dict)
    ledger: tuple["Transfer", ...] = ()  # the economy's transfers this tick, in order (sim/economy.py)
    memes: tuple["MemeRow", ...] = ()  # the meme summaries answered this tick (mind/memes.py)


# --- what the reader gives back of the logs ---


@dataclass(frozen=True)
class EventRow:
    id: int
    tick: int
    time: str
    agent: str | None
    kind: str
    text: str
    data: dict


@dataclass(frozen=True)
class CallRow:
    id: int
    tick: int
    time: str
    agent: str
    task: str
    prompt_tokens: int
    cached_tokens: int
    completion_tokens: int
    ms: float
    backend: str
    note: str


class CallSums(NamedTuple):
    """The figures of the calls a filter lets through (a tuple: sums of two add up by position)."""
    calls: int
    prompt_tokens: int
    cached_tokens: int
    completion_tokens: int


@dataclass(frozen=True)
class CallTotals:
    """Model calls logged after a tick, in figures."""
    calls: int
    noted: int  # calls with a note (a fallback answered, or something to say)
    prompt_tokens: int
    cached_tokens: int


@dataclass(frozen=True)
class Transfer:
    """One row of the economy's ledger: `qty` of `item` from `giver` to `taker` ("" is the world:
    a gather's giver, a craft's consumed inputs' taker; "chest" the town chest)."""

    tick: int
    time: str  # TIME_FMT
    kind: str  # sim/economy.LEDGER_KINDS
    giver: str
    taker: str
    item: str
    qty: int
    note: str = ""


@dataclass(frozen=True)
class MemeRow:
    """One meme summary: the topics (each `{"topic": str, "keywords": [str, ...]}`) the goals of a
    town's people came to at `time`; `town` "" is the rural area. `call` is the question's key in
    the call log (llm_calls.key), "" when unknown."""

    tick: int
    time: str  # TIME_FMT
    town: str
    topics: list[dict]
    call: str = ""
