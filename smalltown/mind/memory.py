"""One agent's memory stream and its retrieval (SPEC §1–§2).

The stream keeps its records as column arrays (importance, times, kind, id, text) that retrieval
scores in one vectorised pass, with no Python loop per record; a `Memory` object is made from its
columns when a caller asks for one (and is the same object while anyone holds it). Embeddings are
kept once per distinct text (an agent notes the same observation many times a week), by their
non-zero values (mind/vectors.py): a record's relevance is its text's. So a stream of 200,000
records costs ~60 bytes a record and ~300 a distinct text, not a kilobyte and a Python object a
record. The simulation owns persistence: `drain()` hands it what changed.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Callable, Collection, Iterable, Iterator, Sequence
from weakref import WeakValueDictionary

import numpy as np

from smalltown.llm.embed import Embedder
from smalltown.mind.vectors import Vectors, unsound
from smalltown.mind.retrieval_log import RetrievalLog
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


def _micros(t: datetime) -> int:
    """Microseconds since EPOCH, exact (aware datetimes taken in UTC, as game_hours does)."""
    if t.tzinfo is not None:
        t = t.astimezone(timezone.utc).replace(tzinfo=None)
    return (t - EPOCH) // timedelta(microseconds=1)


def _nothing() -> None:  # (a row whose vector its caller files)
    pass


def _time(us: int) -> datetime:
    return EPOCH + timedelta(microseconds=us)


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


class MemoryStream(RetrievalLog):
    def __init__(self, agent: str, embedder: Embedder, next_id: Callable[[], int],
                 weights: RetrievalWeights = RetrievalWeights()):
        self.agent = agent
        self.embedder = embedder
        self.next_id = next_id
        self.weights = weights
        self._reset(0)

    def _reset(self, capacity: int) -> None:
        self._n = 0
        cap = max(capacity, 64)
        self._imp = np.zeros(cap, np.float64)
        self._acc = np.zeros(cap, np.float64)  # last access, game_hours()
        self._acc_us = np.zeros(cap, np.int64)  # the same, exact: microseconds since EPOCH
        self._made_us = np.zeros(cap, np.int64)  # created, microseconds since EPOCH
        self._ids = np.zeros(cap, np.int64)  # increasing: a memory's row is found by bisection
        self._kind = np.zeros(cap, np.int8)
        self._tid = np.zeros(cap, np.int64)  # which distinct text each row holds
        self._evidence: dict[int, tuple[int, ...]] = {}  # row -> evidence, for the rows that cite some
        # Memory objects are made from the columns when asked for, and kept while someone holds
        # them: a retrieval's results and the stream's later answers are one object, as before.
        self._live: WeakValueDictionary[int, Memory] = WeakValueDictionary()
        self._texts: dict[str, int] = {}  # description -> text id
        self._text_list: list[str] = []  # text id -> description
        self._vecs = Vectors(self.embedder.dim)  # text id -> its vector
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
        for name in ("_imp", "_acc", "_acc_us", "_made_us", "_ids", "_kind", "_tid"):
            old = getattr(self, name)
            new = np.zeros(cap, old.dtype)
            new[:n] = old[:n]
            setattr(self, name, new)

    def _append(self, mid: int, kind: str, description: str, made: int, accessed: int, importance: int,
                evidence: tuple[int, ...], vector: Callable[[], None]) -> int:
        """A row from its columns (times in microseconds since EPOCH); `vector` files the text's
        vector, called only for a text the stream has not held yet. Returns the row."""
        code = _KIND_CODE.get(kind)
        if code is None:
            raise ValueError(f"unknown memory kind {kind!r} (expected one of {KINDS})")
        i = self._n
        if i and mid <= self._ids[i - 1]:
            raise ValueError(f"memory ids must increase: {mid} after {int(self._ids[i - 1])}")
        self._reserve(i + 1)
        tid = self._texts.get(description)
        new = tid is None
        if new:
            tid = len(self._text_list)
            self._text_list.append(description)
            self._text_kinds.append(0)
            self._text_row.append(i)
            vector()
        self._imp[i] = importance
        self._acc_us[i] = accessed
        self._acc[i] = accessed / 1_000_000 / 3600.0  # game_hours' two roundings, bit for bit
        self._made_us[i] = made
        self._ids[i] = mid
        self._kind[i] = code
        self._tid[i] = tid
        if evidence:
            self._evidence[i] = evidence
        self._text_kinds[tid] |= 1 << code
        self._n += 1
        if new:  # known last: another mind's embedder may look it up (saved_vector) meanwhile
            self._texts[description] = tid
        return i

    def _append_memory(self, mem: Memory, vec: np.ndarray) -> int:
        if mem.agent != self.agent:
            raise ValueError(f"memory {mem.id} belongs to {mem.agent!r}, not {self.agent!r}")
        row = self._append(mem.id, mem.kind, mem.description, _micros(mem.created), _micros(mem.last_accessed),
                           mem.importance, tuple(mem.evidence), lambda: self._vecs.append(vec))
        self._latest[mem.kind] = mem.created
        return row

    def _memory(self, row: int) -> Memory:
        mem = self._live.get(row)
        if mem is None:
            mem = Memory(int(self._ids[row]), self.agent, KINDS[self._kind[row]], self._text_list[self._tid[row]],
                         _time(int(self._made_us[row])), _time(int(self._acc_us[row])), int(self._imp[row]),
                         self._evidence.get(row, ()))
            self._live[row] = mem
        return mem

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
        row = self._append_memory(mem, vec)
        self._live[row] = mem
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
        self._reset(len(memories))
        for mem, vec in zip(memories, embeddings):
            self._append_memory(mem, vec)

    def load_saved(self, rows: Iterable[tuple], vector: Callable[[bytes], tuple[bytes, bytes]]) -> None:
        """Replace the stream's contents with a save's rows, read one at a time: (id, kind,
        description, created and last accessed in whole seconds since EPOCH, importance, evidence
        (None: none), stored vector); `vector` gives a stored vector's non-zero positions and
        values as little-endian bytes (mind/vectors.py), asked only for a text not held yet.
        Nothing is kept of a row but its columns. ValueError names a record that cannot be held."""
        self._reset(0)
        texts, vecs = self._texts, self._vecs
        again, again_ends, again_ids = bytearray(), array("q"), array("q")  # a held text's vector: checked only
        for mid, kind, text, made, accessed, importance, evidence, blob in rows:
            held = text in texts
            self._append(mid, kind, text, made * 1_000_000, accessed * 1_000_000, importance, evidence or (),
                         _nothing)
            pos, val = vector(blob)
            if held:
                again += pos
                again_ends.append(len(again) // vecs.itemsize)
                again_ids.append(mid)
            else:
                vecs.append_packed(pos, val)
        bad = vecs.settle()
        bad_id = None if bad is None else int(self._ids[self._text_row[bad]])
        if bad_id is None and again_ids:
            first = unsound(np.frombuffer(again, vecs.dtype).astype(np.int64), np.frombuffer(again_ends, np.int64),
                            self.embedder.dim)
            bad_id = None if first is None else again_ids[first]
        if bad_id is not None:
            raise ValueError(f"memory {bad_id}: embedding: not a vector of {self.embedder.dim} float32 "
                             "(its positions do not increase, or pass its size)")
        for kind, code in _KIND_CODE.items():  # each kind's newest record, as add() would have left it
            rows_of = np.flatnonzero(self._kind[:self._n] == code)
            if len(rows_of):
                self._latest[kind] = _time(int(self._made_us[rows_of[-1]]))

    def has(self, text: str, kind: str | None = None) -> bool:
        """Whether a record with exactly this text (of this kind, if given) is in the stream."""
        tid = self._texts.get(text)
        if tid is None or kind is None:
            return tid is not None
        return kind in _KIND_CODE and bool(self._text_kinds[tid] & (1 << _KIND_CODE[kind]))

    def saved_vector(self, text: str) -> tuple[int, np.ndarray] | None:
        """(the id of its first record, its vector) of a text the stream holds; None if not."""
        tid = self._texts.get(text)
        if tid is None:
            return None
        return int(self._ids[self._text_row[tid]]), self._vecs.row(tid)

    def ids(self) -> np.ndarray:
        """The records' ids, in order (a copy)."""
        return self._ids[:self._n].copy()

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
        drop = self._rows_of(exclude)
        if len(drop):
            if mask is None:
                mask = np.ones(n, bool)
            mask[drop] = False
        return None if mask is None else np.flatnonzero(mask)

    def _score(self, query: str, now: datetime, k: int, rows: np.ndarray | None) -> list[Scored]:
        n, w, now_h = self._n, self.weights, game_hours(now)
        q = self.embedder.embed([query])[0]
        imp, acc, ids = self._imp[:n], self._acc[:n], self._ids[:n]
        # einsum, not BLAS gemv (mind/vectors.py): identical texts must tie exactly (then the newer
        # id wins), and einsum gives a row the same sum wherever it sits.
        if rows is not None and len(rows) < n // 2:  # a small subset: score only its texts
            rel = self._vecs.dots(q, self._tid[rows])
        else:
            rel = self._vecs.dots(q)[self._tid[:n]]
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
        self._acc_us[picked] = _micros(now)
        out = []
        for pos, row in zip(order.tolist(), picked.tolist()):
            mem = self._memory(row)
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
            rows = range(max(0, self._n - n), self._n)
        else:
            codes = [_KIND_CODE[k] for k in set(kinds) if k in _KIND_CODE]
            rows = np.flatnonzero(np.isin(self._kind[:self._n], codes))[-n:].tolist()
        return [self._memory(r) for r in rows]

    def latest(self, kind: str) -> datetime | None:
        """When the newest record of `kind` was noted (None: none), without a scan."""
        return self._latest.get(kind)

    def get(self, memory_id: int) -> Memory:
        return self._memory(self.get_row(memory_id))

    def _rows_of(self, memory_ids: Collection[int]) -> np.ndarray:
        """The rows of those of these ids the stream holds (ids increase: found by bisection)."""
        want = np.fromiter((int(i) for i in memory_ids), np.int64)
        ids = self._ids[:self._n]
        at = np.searchsorted(ids, want)
        ok = at < self._n
        ok[ok] = ids[at[ok]] == want[ok]
        return at[ok]

    def text_spans(self) -> Iterator[tuple[str, int, int]]:
        """(text, its first record's id, its last record's id) of each distinct text, in the
        order the texts were first noted: a whole-stream scan that needs one record per text."""
        n = self._n
        _, back = np.unique(self._tid[:n][::-1], return_index=True)  # by text id: its last row, from the end
        last = self._ids[n - 1 - back]
        first = self._ids[np.array(self._text_row, np.int64)]
        return zip(self._text_list, first.tolist(), last.tolist())

    def __len__(self) -> int:
        return self._n

    def __iter__(self) -> Iterator[Memory]:
        return (self._memory(r) for r in range(self._n))  # (rows added meanwhile are not seen)

    def embedding(self, memory_id: int) -> np.ndarray:
        return self._vecs.row(int(self._tid[self.get_row(memory_id)]))

    def get_row(self, memory_id: int) -> int:
        for row in self._rows_of([memory_id]).tolist():
            return row
        raise KeyError(memory_id)

    def drain(self) -> tuple[list[tuple[Memory, np.ndarray]], list[tuple[int, datetime]], list[Retrieval]]:
        """What changed since the last drain: new memories with their embeddings, (id,
        last_accessed) updates (the latest per id), and the retrievals made. Empties the queues."""
        if not (self._new or self._touched or self._retrievals):  # most ticks, for most agents
            return [], [], []
        out = (self._new, list(self._touched.items()), self._retrievals)
        self._new, self._touched, self._retrievals = [], {}, []
        return out
