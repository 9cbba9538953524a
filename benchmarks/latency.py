"""A model server's reply time, as a function of what it is asked: the latency model shared by the
loopback prompt server (benchmarks/promptserver.py) and the oracle (benchmarks/oracle.py).

A reply costs a fixed overhead, prefill time for the prompt tokens the server has not cached, and
decode time per answer token; decoding slows as more of the server's N slots are busy (a batch
shares the GPU's or CPU's bandwidth). So a decomposition (~220 answer tokens) costs about ten times
a rating (~16), as real models do, and a server whose slots are full is slower per reply.

Tokens are estimated as characters / 4 (both sides use the same estimate, so figures compare).
The cached part of a prompt is its longest common prefix with the last prompt served for the same
key (the agent, when the client names it: per-agent affinity keeps its prefix warm).
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass


def tokens(text: str) -> int:
    """Estimated tokens in `text` (characters / 4, rounded up)."""
    return math.ceil(len(text) / 4)


@dataclass(frozen=True)
class LatencyModel:
    """Seconds a reply takes: overhead + prefill + decode x (1 + slowdown x (busy - 1))."""

    name: str
    overhead: float  # seconds per request (scheduling, first token)
    per_prompt_token: float  # seconds per uncached prompt token (prefill)
    per_answer_token: float  # seconds per answer token with one slot busy (decode)
    slowdown: float  # decode slows by this fraction per other busy slot
    slots: int  # requests the server decodes at once; more wait in its queue

    def seconds(self, uncached: int, answer: int, busy: int = 1) -> float:
        """The reply time of a request with `uncached` prompt tokens to prefill and `answer` tokens
        to decode, while `busy` slots (this one included) are decoding."""
        busy = max(1, min(busy, self.slots))
        return (self.overhead + self.per_prompt_token * uncached
                + self.per_answer_token * answer * (1 + self.slowdown * (busy - 1)))


# A GPU server (vLLM or llama-server with a small model): decode dominates, batching is cheap.
GPU = LatencyModel("gpu", overhead=0.03, per_prompt_token=0.00002, per_answer_token=0.004, slowdown=0.02, slots=64)
# A CPU server: prefill costs, and parallel slots share the cores.
CPU = LatencyModel("cpu", overhead=0.05, per_prompt_token=0.0003, per_answer_token=0.012, slowdown=0.25, slots=16)
MODELS = {m.name: m for m in (GPU, CPU)}


def common_prefix(a: str, b: str) -> int:
    """Length of the longest common prefix of two strings."""
    n = min(len(a), len(b))
    lo, hi = 0, n  # binary search on slices: fast for long prompts
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


class PrefixCache:
    """The last prompt served per key (an agent, or one shared key), to count a prompt's uncached
    tokens as a server with prefix caching would. Thread-safe."""

    def __init__(self) -> None:
        self._last: dict[str, str] = {}
        self._lock = threading.Lock()

    def uncached(self, key: str, prompt: str) -> int:
        """Tokens of `prompt` beyond its common prefix with `key`'s last prompt; records it."""
        with self._lock:
            last = self._last.get(key, "")
            self._last[key] = prompt
        return tokens(prompt[common_prefix(prompt, last):])
