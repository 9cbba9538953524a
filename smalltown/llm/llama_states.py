"""Each agent's evaluated KV cache in the llama.cpp backend, kept between calls so that turning
from one agent to another does not re-read their prompts' shared prefixes."""

from __future__ import annotations

import ctypes
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from smalltown.llm.render import grown_part


@dataclass
class SavedState:
    tokens: np.ndarray  # the tokens whose keys and values the state holds, in order
    data: ctypes.Array  # llama.cpp's sequence state (the KV cells of sequence 0)
    size: int


KEEP_MARGIN = 48  # tokens kept past the prefix a prompt is expected to share with its next one
PROMPTS_BYTES = 32 << 20  # room for each agent+task's latest prompt tokens (a few KB each)


def kept_length(whole: int, restored: int, previous: int | None, margin: int = KEEP_MARGIN, grown: int = 0) -> int:
    """How much of a prompt's evaluated state is worth keeping: what its agent+task's next prompt
    will likely share. A prompt's tail (the retrieved memories, the time, the question) changes
    from call to call; the part that this prompt shared with the state it started from
    (`restored`) or with the same agent+task's previous prompt (`previous`) is the part that
    recurs, plus a small `margin` since the next prompt may share a little more. The whole prompt
    while there is no previous one (nothing yet tells which part recurs). Measured offline on
    recorded runs (benchmarks/cost.py): fewer uncached tokens on three towns, margins of 35 to
    75 tokens alike; smaller states leave room for more of them.

    `grown`: where a prompt that the next one extends ends its growing part (a conversation line's
    transcript, `recurring`): kept through there, since the next line of the conversation
    repeats it (the previous line's prompt shared only the shorter transcript before it)."""
    if grown:
        return min(whole, max(grown, restored))
    if previous is None:
        return whole
    return min(whole, max(restored, previous) + margin)


def recurring(task) -> tuple[str, str]:
    """(the name of the saved state `task`'s prompt goes to, the start of its prompt that its next
    question of that kind is expected to repeat: "" when nothing says). Kinds of question whose
    prompts agree through their growing part share one state (`Task.shares_state`, e.g. a line
    that may promise and a plain line of one conversation)."""
    return task.shares_state or task.name, grown_part(task)


class AgentStates:
    """Each agent's evaluated KV cache, saved when the model turns to another agent and restored
    when it turns back; least recently used states go first beyond `capacity_bytes`.

    One state per agent and task (the part of its latest prompt of that kind that its next is
    expected to share, `keep`; tasks whose prompts agree share one, `recurring`): calls share the
    agent's prefix, and calls of one task also share that task's instructions. Only the KV cells are saved
    (llama.cpp's sequence state), not llama-cpp-python's LlamaState, which also copies a
    batch-by-vocabulary score matrix and is not counted against a cache's capacity."""

    def __init__(self, capacity_bytes: int):
        self.capacity_bytes = capacity_bytes
        self._states: OrderedDict[str, SavedState] = OrderedDict()
        self._prompts: OrderedDict[str, np.ndarray] = OrderedDict()  # agent+task -> its latest prompt
        self._prompt_bytes = 0

    def keep(self, agent: str, tokens: np.ndarray, restored: int, grown: int = 0) -> int:
        """How many of `agent`'s prompt `tokens` to keep when its state is saved (`kept_length`),
        `restored` of them having been reused, the first `grown` its growing part; records the
        prompt as that agent's latest (the least recently asked forgotten first beyond
        PROMPTS_BYTES: their next state is kept whole)."""
        previous = self._prompts.pop(agent, None)
        if previous is not None:
            self._prompt_bytes -= previous.nbytes
        tokens = np.array(tokens, dtype=np.intc)
        self._prompts[agent] = tokens
        self._prompt_bytes += tokens.nbytes
        while self._prompt_bytes > PROMPTS_BYTES:
            self._prompt_bytes -= self._prompts.popitem(last=False)[1].nbytes
        shared = None if previous is None else common_prefix(previous, tokens)
        return kept_length(len(tokens), restored, shared, grown=grown)

    def put(self, agent: str, state: SavedState) -> None:
        self._states.pop(agent, None)
        self._states[agent] = state
        while self._states and self.nbytes > self.capacity_bytes:
            self._states.popitem(last=False)

    def best(self, tokens: np.ndarray) -> tuple[SavedState | None, int]:
        """The saved state sharing the longest prefix with `tokens`, and that length."""
        found, length = None, 0
        for agent, state in self._states.items():
            n = common_prefix(state.tokens, tokens)
            if n > length:
                found, length, owner = state, n, agent
        if found is not None:
            self._states.move_to_end(owner)
        return found, length

    @property
    def nbytes(self) -> int:
        return sum(s.size for s in self._states.values())

    def __len__(self) -> int:
        return len(self._states)


def common_prefix(a, b) -> int:
    """How many tokens two sequences share from the start."""
    a, b = np.asarray(a), np.asarray(b)
    n = min(len(a), len(b))
    diff = np.flatnonzero(a[:n] != b[:n])
    return int(diff[0]) if len(diff) else n
