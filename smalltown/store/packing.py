"""How a save packs its two bulkiest things (schema 6): embedding vectors and the call log's texts.

Vectors. The hashed n-gram embedder's rows are mostly zeros (about 43 of 256 values set), so a
vector is kept as its set values with their positions when that is shorter, and as all its values
otherwise (a sentence model's dense rows). Both forms are exact float32: retrieval reads back the
very numbers the embedder made, so a run reopened from its save scores memories as the run that
wrote it did. A packed vector's length is odd (a one-byte tag), a schema-4 vector's (bare
float32) a multiple of four, so each reads as what it is whatever the save's version:

    b"D" + float32 * dim                                   dense
    b"S" + uint16 dim + uint16 index * n + float32 * n     sparse, indices increasing

Texts. A prompt or raw answer is kept zlib-compressed (a BLOB) when that is shorter, as text
otherwise; a reader tells them apart by SQLite's type. Only store/ packs or unpacks: every reader
gets text and float32 rows.
"""

from __future__ import annotations

import zlib

import numpy as np

from smalltown.store.errors import SaveError

DENSE, SPARSE = b"D", b"S"
MAX_TEXT = 4 * 1024 * 1024  # what a prompt may unpack to (validate.py bounds the text form alike)
_F32, _U16 = np.dtype("<f4"), np.dtype("<u2")


def pack_vector(vec: np.ndarray) -> bytes:
    """The shorter of a vector's dense and sparse forms."""
    vec = np.asarray(vec, dtype=_F32).reshape(-1)
    idx = np.flatnonzero(vec)
    if vec.size <= 0xFFFF and 3 + 6 * idx.size < 1 + 4 * vec.size:
        return SPARSE + vec.size.to_bytes(2, "little") + idx.astype(_U16).tobytes() + vec[idx].tobytes()
    return DENSE + vec.tobytes()


def unpack_vector(blob: bytes, where: str = "a vector") -> np.ndarray:
    """A stored vector as float32 (writable), in either schema's form; SaveError for anything else."""
    n = len(blob)
    if n and n % 4 == 0:  # schema 4 and before: bare float32
        return np.frombuffer(blob, dtype=_F32).copy()
    tag = blob[:1]
    if tag == DENSE and n % 4 == 1 and n > 1:
        return np.frombuffer(blob, dtype=_F32, offset=1).copy()
    if tag == SPARSE and n % 6 == 3:
        dim, k = int.from_bytes(blob[1:3], "little"), (n - 3) // 6
        idx = np.frombuffer(blob, dtype=_U16, count=k, offset=3)
        if dim and (not k or (idx[-1] < dim and (k == 1 or bool(np.all(idx[1:] > idx[:-1]))))):
            out = np.zeros(dim, _F32)
            out[idx] = np.frombuffer(blob, dtype=_F32, count=k, offset=3 + 2 * k)
            return out
    raise SaveError(f"{where}: not a vector of float32")


def pack_text(text: str | bytes | None) -> str | bytes | None:
    """zlib's bytes when shorter than the text's, the text otherwise (short answers gain nothing)."""
    if not isinstance(text, str):  # None, or packed already
        return text
    raw = text.encode()
    packed = zlib.compress(raw, 6)
    return packed if len(packed) < len(raw) else text


def unpack_text(value: str | bytes | None, where: str = "a text") -> str | None:
    """A stored text, unpacked if it was packed; bounded, so a crafted blob cannot unpack to gigabytes."""
    if not isinstance(value, bytes):
        return value
    try:
        d = zlib.decompressobj()
        raw = d.decompress(value, MAX_TEXT + 1)
        if len(raw) > MAX_TEXT or d.unconsumed_tail:
            raise SaveError(f"{where}: unpacks to more than {MAX_TEXT:,} bytes")
        return raw.decode()
    except (zlib.error, UnicodeDecodeError):
        raise SaveError(f"{where}: not a compressed text") from None
