"""Each agent's evaluated KV cache in the llama.cpp backend, kept between calls so that turning
from one agent to another does not re-read their prompts' shared prefixes."""

from __future__ import annotations

import ctypes
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np


@dataclass
class SavedState:
    tokens: np.ndarray  # the tokens whose keys and values the state holds, in order
    data: ctypes.Array  # llama.cpp's sequence state (the KV cells of sequence 0)
    size: int


class AgentStates:
    """Each agent's evaluated KV cache, saved when the model turns to another agent and restored
    when it turns back; least recently used states go first beyond `capacity_bytes`.

    One state per agent and task (its latest prompt and answer of that kind): calls share the
    agent's prefix, and calls of one task also share that task's instructions. Only the KV cells are saved
    (llama.cpp's sequence state), not llama-cpp-python's LlamaState, which also copies a
    batch-by-vocabulary score matrix and is not counted against a cache's capacity."""

    def __init__(self, capacity_bytes: int):
        self.capacity_bytes = capacity_bytes
        self._states: OrderedDict[str, SavedState] = OrderedDict()

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
