"""Questions put to a run's agents for a measurement (eval/interview.py asks them through this),
by the normal interview path: the agent's retrieval, the interview task, every call logged.

Each question is put to the agent as it was before the first one: the record an interview leaves
(the question and its answer) is taken out of the agent's stream again, so no question leaks into
the next one's retrieval ("Who is Kane Martinez?" must not teach the agent who Kane is). An
ablation answers from only the kinds of memory it keeps.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from smalltown.sim.simulation import Simulation
from smalltown.store.records import Memory, Retrieval


class Interviews:
    def __init__(self, sim: Simulation):
        self.sim = sim
        self._before: dict[str, tuple[list[Memory], np.ndarray]] = {}

    def _snapshot(self, name: str) -> tuple[list[Memory], np.ndarray]:
        """The agent's stream before any question (what it noted but had not filed, filed first)."""
        if name not in self._before:
            stream = self.sim.agent(name).mind.memory
            self.sim.agent(name).mind.settle()
            mems = list(stream)
            embs = np.vstack([stream.embedding(m.id) for m in mems]) if mems else \
                np.zeros((0, stream.embedder.dim), np.float32)
            self._before[name] = (mems, embs)
        return self._before[name]

    def interview(self, name: str, question: str, persona: str, kinds: frozenset[str],
                  summary: bool = True) -> tuple[str, Retrieval]:
        """The agent's answer from only the memories of `kinds`, and what it drew on; `summary`
        False: without its summary description too (it was made from memories)."""
        mind = self.sim.agent(name).mind
        mems, embs = self._snapshot(name)
        keep = [i for i, m in enumerate(mems) if m.kind in kinds]
        own = mind.persona
        try:
            # fresh copies: a retrieval marks what it returns accessed, and the next question must not see that
            mind.memory.load([replace(mems[i]) for i in keep], embs[keep])
            if not summary:
                mind.persona = own.model_copy(update={"summary": ""})
            return self.sim.interview(name, question, persona)
        finally:  # the agent as it was: without this question's record
            mind.persona = own
            mind.memory.load([replace(m) for m in mems], embs)
