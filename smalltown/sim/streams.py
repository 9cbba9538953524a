"""A save's memory streams as a run opens it: one agent's rows at a time, each kept as columns
(mind/memory.py), never the whole table in Python objects; a schema-1 save's, whose unrated
records are completed from all of them at once, read whole (small saves). The memory id
counters are restored from each agent's ids, and the embedder finds a filed text's vector in the
streams rather than holding a copy of every one."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from smalltown.llm.embed import Embedder
from smalltown.mind.memory import Memory, MemoryStream
from smalltown.store.packing import sparse_parts
from smalltown.store.save import Save, SaveError
from smalltown.world.model import World


def read_streams(save: Save, embedder: Embedder, legacy: dict[str, list[int]]) -> dict[str, tuple[list, list]]:
    """Every agent's records and vectors, whole (a schema-1 save's, whose unrated records are
    completed from all of them at once: small saves); `legacy` gets the rows to complete."""
    streams: dict[str, tuple[list[Memory], list[np.ndarray]]] = {}
    for mid, agent_name, kind, desc, created, accessed, importance, emb, evidence in save.memories():
        mems, embs = streams.setdefault(agent_name, ([], []))
        mems.append(Memory(mid, agent_name, kind, desc, datetime.fromisoformat(created),
                           datetime.fromisoformat(accessed), importance or 0, tuple(json.loads(evidence or "[]"))))
        if emb is None or importance is None:
            legacy.setdefault(agent_name, []).append(len(mems) - 1)
            embs.append(None)
        else:
            embs.append(emb)
            embedder.preload([(desc, emb)])  # (a filed text's rating: its records' in the stream)
    return streams


def sparse(path: str | Path, dim: int) -> Callable[[bytes], tuple[bytes, bytes]]:
    """A saved vector's non-zeros, refused (naming the save) when it is not of the embedder's size."""
    def parts(blob: bytes) -> tuple[bytes, bytes]:
        n, pos, val = sparse_parts(blob, f"{path}: memories: embedding")
        if n != dim:
            raise SaveError(f"{path}: memories: embedding: a vector of {n} numbers, the embedder's are {dim}")
        return pos, val
    return parts


def saved_vector(streams: list[MemoryStream]) -> Callable[[str], np.ndarray | None]:
    """A text's vector as the town's streams hold it (its earliest record's, as the save's order
    would have preloaded it), or None."""
    def find(text: str) -> np.ndarray | None:
        held = [v for s in streams if (v := s.saved_vector(text)) is not None]
        return min(held, key=lambda h: h[0])[1] if held else None
    return find


def restore_counts(world: World, ids: dict[str, Sequence[int]], last_id: int) -> list[int]:
    """Each agent's memory id counter, from its own latest id (so a resumed run allocates exactly
    the ids an unbroken one would). A save whose ids are not interleaved by agent (made before
    they were) continues above its highest id instead."""
    n = len(world.agents)
    counts = []
    for i, spec in enumerate(world.agents):
        mine = np.asarray(ids.get(spec.name, ()), dtype=np.int64)
        if np.any((mine - 1) % n != i):
            return [last_id // n] * n
        counts.append(int(mine[-1] - 1) // n if len(mine) else -1)
    return counts
