"""One agent's memory stream and its retrieval (SPEC §1–§2).

The stream keeps its records twice: as `Memory` objects (what callers read) and as column arrays
(importance, last access, kind, id, text) that retrieval scores in one vectorised pass, with no
Python loop per record. Embeddings are kept once per distinct text (an agent notes the same
observation many times a week): a record's relevance is its text's. The simulation owns persistence: `drain()` hands it what changed.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Callable, Collection, Iterator, Sequence

import numpy as np

from smalltown.llm.embed import Embedder
from smalltown.store.records import Memory, Retrieval, Scored  # noqa: F401  (the save's records)

KINDS = ("observation", "reflection", "plan", "chat")
_KIND_CODE = {k: i for i, k in enumerate(KINDS)}

# Last-access times are stored as float hours since this fixed epoch (float64: sub-second exact
# for millennia), so recency is one array subtraction.
EPOCH = datetime(2000, 1, 1)

# A component whose range over the candidates is at most this counts 0.5 for every candidate
# (SPEC §2: "a component with zero range counts 0.5"), rather than blowing rounding noise up to [0, 1].
ZERO_RANGE = 1e-12


def game_hours(t: datetime) -> float:
    """Hours since EPOCH. Aware datetimes are taken in UTC; the simulation's clock is naive."""
    if t.tzinfo is not None:
        t = t.astimezone(timezone.utc).replace(tzinfo=None)
    return (t - EPOCH).total_seconds() / 3600.0


@dataclass(frozen=True)
class RetrievalWeights:
    recency: float = 1.0
    importance: float = 1.0
    relevance: float = 1.0
    decay: float = 0.995  # per game hour since last access (SPEC §2)


def _normalise(x: np.ndarray) -> np.ndarray:
    lo, hi = float(x.min()), float(x.max())
    if hi - lo <= ZERO_RANGE:
        return np.full(x.shape, 0.5)
    return (x - lo) / (hi - lo)


class MemoryStream:
    def __init__(self, agent: str, embedder: Embedder, next_id: Callable[[], int],
                 weights: RetrievalWeights = RetrievalWeights()):
        self.agent = agent
        self.embedder = embedder
        self.next_id = next_id
        self.weights = weights
        self._reset(0)

    def _reset(self, capacity: int, texts: int = 0) -> None:
        self._mems: list[Memory] = []
        self._row: dict[int, int] = {}  # memory id -> row
        self._n = 0
        cap = max(capacity, 64)
        self._emb = np.zeros((max(texts, 64), self.embedder.dim), np.float32)  # by text id
        self._imp = np.zeros(cap, np.float64)
        self._acc = np.zeros(cap, np.float64)  # last access, game_hours()
        self._ids = np.zeros(cap, np.int64)
        self._kind = np.zeros(cap, np.int8)
        self._tid = np.zeros(cap, np.int64)  # which distinct text each row holds
        self._texts: dict[str, int] = {}  # description -> text id
        self._text_kinds = bytearray()  # text id -> the kinds it was stored as (bit per KINDS code)
        self._text_row = array("q")  # text id -> its first row (whose importance is the text's rating)
        self._latest: dict[str, datetime] = {}  # kind -> when its newest record was noted
        # What changed since the last drain().
        self._new: list[tuple[Memory, np.ndarray]] = []
        self._touched: dict[int, datetime] = {}
        self._retrievals: list[Retrieval] = []

    def _reserve(self, needed: int) -> None:
        cap = len(self._imp)
        if needed <= cap:
            return
        while cap < needed:
            cap *= 2
        n = self._n
        for name in ("_imp", "_acc", "_ids", "_kind", "_tid"):
            old = getattr(self, name)
            new = np.zeros(cap, old.dtype)
            new[:n] = old[:n]
            setattr(self, name, new)

    def _append(self, mem: Memory, vec: np.ndarray) -> None:
        if mem.agent != self.agent:
            raise ValueError(f"memory {mem.id} belongs to {mem.agent!r}, not {self.agent!r}")
        if mem.kind not in _KIND_CODE:
            raise ValueError(f"unknown memory kind {mem.kind!r} (expected one of {KINDS})")
        if self._mems and mem.id <= self._mems[-1].id:
            raise ValueError(f"memory ids must increase: {mem.id} after {self._mems[-1].id}")
        self._reserve(self._n + 1)
        i = self._n
        tid = self._texts.get(mem.description)
        if tid is None:
            tid = self._texts[mem.description] = len(self._texts)
            self._text_kinds.append(0)
            self._text_row.append(i)
            if tid == len(self._emb):  # grown by a quarter, not doubled: most of a stream's bytes
                emb = np.zeros((tid + max(64, tid // 4), self.embedder.dim), np.float32)
                emb[:tid] = self._emb
                self._emb = emb
            self._emb[tid] = vec
        self._imp[i] = mem.importance
        self._acc[i] = game_hours(mem.last_accessed)
        self._ids[i] = mem.id
        self._kind[i] = _KIND_CODE[mem.kind]
        self._tid[i] = tid
        self._text_kinds[tid] |= 1 << _KIND_CODE[mem.kind]
        self._mems.append(mem)
        self._latest[mem.kind] = mem.created
        self._row[mem.id] = i
        self._n += 1

    def add(self, kind: str, description: str, now: datetime, importance: int,
            evidence: Sequence[int] = ()) -> Memory:
        """Embed (through the embedder's cache), append, and queue the record for saving."""
        if kind not in _KIND_CODE:
            raise ValueError(f"unknown memory kind {kind!r} (expected one of {KINDS})")
        importance = int(importance)
        if not 1 <= importance <= 10:
            raise ValueError(f"importance must be 1..10, got {importance}")
        vec = self.embedder.embed([description])[0]
        mem = Memory(self.next_id(), self.agent, kind, description, now, now, importance,
                     tuple(int(e) for e in evidence))
        self._append(mem, vec)
        self._new.append((mem, vec))
        return mem

    def load(self, memories: Sequence[Memory], embeddings: np.ndarray) -> None:
        """Replace the stream's contents with a saved one (rows aligned with memories, in id order).

        Nothing loaded is queued for drain(): it is already in the save.
        """
        embeddings = np.asarray(embeddings, dtype=np.float32)
        if embeddings.shape != (len(memories), self.embedder.dim):
            raise ValueError(f"embeddings have shape {embeddings.shape}, expected "
                             f"({len(memories)}, {self.embedder.dim})")
        self._reset(len(memories), len({m.description for m in memories}))
        for mem, vec in zip(memories, embeddings):
            self._append(mem, vec)

    def has(self, text: str, kind: str | None = None) -> bool:
        """Whether a record with exactly this text (of this kind, if given) is in the stream."""
        tid = self._texts.get(text)
        if tid is None or kind is None:
            return tid is not None
        return kind in _KIND_CODE and bool(self._text_kinds[tid] & (1 << _KIND_CODE[kind]))

    def rating(self, text: str) -> int | None:
        """The importance this text was filed with (its first record's; None: not in the stream,
        or a schema-1 seed not rated yet)."""
        tid = self._texts.get(text)
        return int(self._imp[self._text_row[tid]]) or None if tid is not None else None

    def retrieve(self, query: str, now: datetime, k: int, purpose: str = "",
                 kinds: Collection[str] | None = None, exclude: Collection[int] = ()) -> Retrieval:
        """The top k records for `query` by SPEC §2's score, no text twice (a text stored again
        counts once, at its best score); marks them accessed at `now`."""
        results: list[Scored] = []
        rows = self._candidates(kinds, exclude)
        count = self._n if rows is None else len(rows)
        if k > 0 and count:
            results = self._score(query, now, k, rows)
        retrieval = Retrieval(self.agent, query, now, purpose, results)
        self._retrievals.append(retrieval)
        return retrieval

    def _candidates(self, kinds: Collection[str] | None, exclude: Collection[int]) -> np.ndarray | None:
        """Candidate rows, or None for the whole stream (the common case, with no copy)."""
        n = self._n
        mask = None
        if kinds is not None:
            kinds = set(kinds)
            unknown = kinds - _KIND_CODE.keys()
            if unknown:
                raise ValueError(f"unknown memory kinds {sorted(unknown)} (expected some of {KINDS})")
            if len(kinds) < len(KINDS):
                mask = np.isin(self._kind[:n], [_KIND_CODE[k] for k in kinds])
        drop = [self._row[i] for i in exclude if i in self._row]
        if drop:
            if mask is None:
                mask = np.ones(n, bool)
            mask[drop] = False
        return None if mask is None else np.flatnonzero(mask)

    def _score(self, query: str, now: datetime, k: int, rows: np.ndarray | None) -> list[Scored]:
        n, w, now_h = self._n, self.weights, game_hours(now)
        q = self.embedder.embed([query])[0]
        emb, imp, acc, ids = self._emb[:len(self._texts)], self._imp[:n], self._acc[:n], self._ids[:n]
        # einsum, not BLAS gemv: gemv may round identical rows differently depending on where
        # they fall in its blocks, and identical texts must tie exactly (then the newer id wins);
        # einsum gives a row the same sum wherever it sits, so a text's score is its records'.
        if rows is not None and len(rows) < n // 2:  # a small subset: score only its texts
            rel = np.einsum("ij,j->i", emb[self._tid[rows]], q)
        else:
            rel = np.einsum("ij,j->i", emb, q)[self._tid[:n]]
            if rows is not None:
                rel = rel[rows]
        rel = rel.astype(np.float64)
        if rows is not None:
            imp, acc, ids = imp[rows], acc[rows], ids[rows]
        hours = np.maximum(now_h - acc, 0.0)  # a record "from the future" is just fresh
        rec = np.power(w.decay, hours)
        rec_n, imp_n, rel_n = _normalise(rec), _normalise(imp), _normalise(rel)
        total = w.recency * rec_n + w.importance * imp_n + w.relevance * rel_n

        m = len(total)
        tids = self._tid[:n] if rows is None else self._tid[rows]
        want = k
        while True:
            if want >= m:
                order = np.lexsort((-ids, -total))
            else:
                # The best, plus anything tied with the last, then an exact order: total desc, id desc.
                part = np.argpartition(-total, want - 1)[:want]
                near = np.flatnonzero(total >= total[part].min())
                order = near[np.lexsort((-ids[near], -total[near]))]
            # identical texts count once: keep each text's first (best) row
            _, first = np.unique(tids[order], return_index=True)
            if len(first) >= k or want >= m:
                order = order[np.sort(first)][:k]
                break
            want = min(m, want * 4)

        picked = order if rows is None else rows[order]
        self._acc[picked] = now_h  # after scoring: this retrieval saw the old access times
        out = []
        for pos, row in zip(order.tolist(), picked.tolist()):
            mem = self._mems[row]
            mem.last_accessed = now
            self._touched[mem.id] = now
            out.append(Scored(mem, float(rec_n[pos]), float(imp_n[pos]), float(rel_n[pos]),
                              float(total[pos])))
        return out

    def recent(self, n: int, kinds: Collection[str] | None = None) -> list[Memory]:
        """The n newest records (of `kinds`, if given), newest last."""
        if n <= 0:
            return []
        if kinds is None:
            return self._mems[-n:]
        kinds = set(kinds)
        out: list[Memory] = []
        for mem in reversed(self._mems):
            if mem.kind in kinds:
                out.append(mem)
                if len(out) == n:
                    break
        out.reverse()
        return out

    def latest(self, kind: str) -> datetime | None:
        """When the newest record of `kind` was noted (None: none), without a scan."""
        return self._latest.get(kind)

    def get(self, memory_id: int) -> Memory:
        return self._mems[self._row[memory_id]]

    def __len__(self) -> int:
        return self._n

    def __iter__(self) -> Iterator[Memory]:
        return iter(list(self._mems))

    def embedding(self, memory_id: int) -> np.ndarray:
        return self._emb[self._tid[self._row[memory_id]]].copy()

    def drain(self) -> tuple[list[tuple[Memory, np.ndarray]], list[tuple[int, datetime]], list[Retrieval]]:
        """What changed since the last drain: new memories with their embeddings, (id,
        last_accessed) updates (the latest per id), and the retrievals made. Empties the queues."""
        if not (self._new or self._touched or self._retrievals):  # most ticks, for most agents
            return [], [], []
        out = (self._new, list(self._touched.items()), self._retrievals)
        self._new, self._touched, self._retrievals = [], {}, []
        return out
