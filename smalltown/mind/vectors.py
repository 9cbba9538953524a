"""A stream's text vectors, kept by their non-zero values (the hashed n-gram embedder sets ~43 of
256): ~350 bytes a text instead of 1 KB, so a 200,000-memory save fits in a bounded RSS.

Scoring rebuilds dense float32 rows a chunk at a time and takes einsum's dot product of each with
the query, exactly as it did when every row was kept dense: einsum gives a row the same sum
wherever it sits, and a zero adds nothing, so every relevance is bitwise what it was.
"""

from __future__ import annotations

from array import array

import numpy as np

CHUNK = 4096  # rows rebuilt at once: 4 MB of float32 at 256 numbers


class Vectors:
    """Vectors by text id, appended in order; each kept as (positions, values) of its non-zeros.

    In numpy arrays grown by half as they fill (never resized in place): a reader on another
    thread (the embedder asking whether a text is known) keeps a whole array."""

    def __init__(self, dim: int):
        self.dim = dim
        self._n = 0  # texts
        self._used = 0  # non-zeros
        # each non-zero's place in its chunk's rows laid end to end: (text id % CHUNK) * dim + position,
        # so a chunk's rows are filled with one scatter (int64 past what int32 holds)
        self._pos = np.zeros(256, np.int32 if CHUNK * dim < 2**31 else np.int64)
        self._val = np.zeros(256, np.float32)
        self._start = np.zeros(65, np.int64)  # text id -> where its non-zeros begin (and the next's)
        self._pending: tuple[bytearray, bytearray, array] | None = None  # append_packed's, until settle()
        self.dtype = np.dtype("<u2" if dim <= 0xFFFF else "<u4")  # how a packed vector's positions are stored
        self.itemsize = self.dtype.itemsize

    def __len__(self) -> int:
        return self._n

    def append(self, vec: np.ndarray) -> None:
        vec = np.asarray(vec, dtype=np.float32).reshape(-1)
        if vec.shape != (self.dim,):
            raise ValueError(f"a vector of {vec.size} numbers, expected {self.dim}")
        pos = np.flatnonzero(vec)
        self.append_sparse(pos, vec[pos])

    def append_sparse(self, pos: np.ndarray, val: np.ndarray) -> None:
        """A vector given as its increasing positions (below dim) and their float32 values."""
        k, used = len(pos), self._used
        if k and int(pos[-1]) >= self.dim:
            raise ValueError(f"a vector with a number at {int(pos[-1])}, past its {self.dim}")
        if used + k > len(self._val):
            size = max(used + k, len(self._val) * 3 // 2)
            self._pos, self._val = _grown(self._pos, size, used), _grown(self._val, size, used)
        if self._n + 2 > len(self._start):
            self._start = _grown(self._start, len(self._start) * 3 // 2, self._n + 1)
        self._pos[used:used + k] = np.asarray(pos, np.int64) + (self._n % CHUNK) * self.dim
        self._val[used:used + k] = val
        self._used = used + k
        self._start[self._n + 1] = self._used  # (before the count: a reader sees a whole row)
        self._n += 1

    def append_packed(self, pos: bytes, val: bytes) -> None:
        """A vector as the little-endian bytes of its positions and values (a save's, read in
        bulk): gathered as bytes, made arrays and checked at once by `settle`."""
        if self._pending is None:
            self._pending = (bytearray(), bytearray(), array("q"))
        ps, vs, starts = self._pending
        ps += pos
        vs += val
        starts.append(len(vs) // 4)

    def settle(self) -> int | None:
        """Takes in what append_packed gathered; the first of those texts whose positions do not
        increase or pass the size (None: all are sound, and taken in)."""
        if self._pending is None:
            return None
        ps, vs, starts = self._pending
        self._pending = None
        pos = np.frombuffer(ps, self.dtype).astype(np.int64)
        val = np.frombuffer(vs, "<f4").astype(np.float32)
        ends = np.frombuffer(starts, np.int64)
        bad = unsound(pos, ends, self.dim)
        if bad is not None or len(pos) != len(val):
            return self._n + (bad or 0)
        used, n, k = self._used, self._n, len(pos)
        pos += np.repeat((np.arange(n, n + len(ends)) % CHUNK) * self.dim, np.diff(ends, prepend=0))
        size = max(used + k, len(self._val))
        self._pos, self._val = _grown(self._pos, size, used), _grown(self._val, size, used)
        self._start = _grown(self._start, max(len(self._start), n + len(ends) + 1), n + 1)
        self._pos[used:used + k] = pos
        self._val[used:used + k] = val
        self._start[n + 1:n + 1 + len(ends)] = ends + used
        self._used = used + k
        self._n = n + len(ends)
        return None

    def row(self, tid: int) -> np.ndarray:
        if not 0 <= tid < self._n:
            raise IndexError(tid)
        pos, val, start = self._pos, self._val, self._start
        a, b = int(start[tid]), int(start[tid + 1])
        out = np.zeros(self.dim, np.float32)
        out[pos[a:b] - (tid % CHUNK) * self.dim] = val[a:b]
        return out

    def dots(self, q: np.ndarray, tids: np.ndarray | None = None) -> np.ndarray:
        """float32 dot products of the query with the texts `tids` (all, in order, when None)."""
        pos, val, start = self._pos, self._val, self._start
        count = self._n if tids is None else len(tids)
        out = np.empty(count, np.float32)
        if not count:
            return out
        dim = self.dim
        for lo in range(0, count, CHUNK):  # (with tids None, a chunk of texts is one of CHUNK's)
            hi = min(count, lo + CHUNK)
            if tids is None:  # texts lo..hi: their non-zeros lie end to end, placed in the chunk
                a, b = int(start[lo]), int(start[hi])
                flat, vals = pos[a:b], val[a:b]
            else:
                t = np.asarray(tids[lo:hi], dtype=np.int64)
                first, lens = start[t], start[t + 1] - start[t]
                at = np.arange(int(lens.sum())) - np.repeat(np.cumsum(lens) - lens, lens) + np.repeat(first, lens)
                flat = pos[at] + np.repeat(np.arange(hi - lo) - t % CHUNK, lens) * dim  # placed at their row here
                vals = val[at]
            dense = np.zeros((hi - lo) * dim, np.float32)
            dense[flat] = vals
            out[lo:hi] = np.einsum("ij,j->i", dense.reshape(hi - lo, dim), q)
        return out


def _grown(a: np.ndarray, size: int, keep: int) -> np.ndarray:
    out = np.zeros(size, a.dtype)
    out[:keep] = a[:keep]
    return out


def unsound(pos: np.ndarray, ends: np.ndarray, dim: int) -> int | None:
    """The first of the vectors (positions laid end to end, each ending at `ends`) whose positions
    do not increase or reach `dim`; None: all are sound."""
    bounds = np.concatenate(([0], np.asarray(ends, np.int64)))
    lens = np.diff(bounds)
    if (lens < 0).any() or bounds[-1] != len(pos):
        return 0
    inside = np.ones(len(pos), bool)  # a position after its vector's first must pass the one before
    inside[bounds[:-1][lens > 0]] = False
    step = np.concatenate(([1], np.diff(pos.astype(np.int64))))
    bad = (pos >= dim) | (inside & (step <= 0))
    if not bad.any():
        return None
    return int(np.searchsorted(bounds, np.flatnonzero(bad)[0], side="right")) - 1
