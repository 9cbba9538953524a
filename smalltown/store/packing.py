"""How a save packs its bulkiest things: embedding vectors (schema 6) and the retrieval log's scores
(schema 7); and how schemas 6 to 9 packed the call log's texts, which schema 10 keeps as text.

Vectors. The hashed n-gram embedder's rows are mostly zeros (about 43 of 256 values set), so a
vector is kept as its set values with their positions when that is shorter, and as all its values
otherwise (a sentence model's dense rows). Both forms are exact float32: retrieval reads back the
very numbers the embedder made, so a run reopened from its save scores memories as the run that
wrote it did. A packed vector's length is odd (a one-byte tag), a schema-4 vector's (bare
float32) a multiple of four, so each reads as what it is whatever the save's version:

    b"D" + float32 * dim                                   dense
    b"S" + uint16 dim + uint16 index * n + float32 * n     sparse, indices increasing

Texts (schemas 6 to 9). A prompt, raw answer or parsed answer was kept zlib-compressed (a BLOB)
when that was shorter, as text otherwise; a reader tells them apart by SQLite's type. Schema 10
keeps them as text, for any SQLite tool to read (store/schema.py unpacks an older save's when it is
opened to be written; read as it is, its BLOBs are unpacked here).

Scores. A retrieval's results were JSON, [{"id", "recency", "importance", "relevance", "total"}]
with each score rounded to 4 places (~95 bytes a memory); they are kept as b"R" and, for each,
the id as int64 and the four scores as int32 ten-thousandths (24 bytes), which read back as the
very floats the JSON held. A list that does not fit (a score past +-214,748) stays JSON text.

Only store/ packs or unpacks: every reader gets text, float32 rows and lists of dicts. (Vectors and
scores stay packed: neither reads as anything in plain SQL, and docs/saves.md says how to read them.)
"""

from __future__ import annotations

import json
import math
import struct
import zlib

import numpy as np

from smalltown.store.errors import SaveError

DENSE, SPARSE, SCORES = b"D", b"S", b"R"
SCORE_KEYS = ("recency", "importance", "relevance", "total")
_SCORE = struct.Struct("<qiiii")  # a memory's id and its four scores in ten-thousandths
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


def sparse_parts(blob: bytes, where: str = "a vector") -> tuple[int, bytes, bytes]:
    """(numbers, positions, values) of a stored vector's non-zeros as little-endian bytes (uint16
    positions, or uint32 past 65,535 numbers; float32 values): the sparse form's own slices, with
    no array made (a large save's stream keeps only these). Whether positions increase is for the
    reader to check (mind/vectors.py checks a whole stream's at once); SaveError as unpack_vector."""
    n = len(blob)
    if blob[:1] == SPARSE and n % 6 == 3 and n % 4 != 0:
        k = (n - 3) // 6
        return int.from_bytes(blob[1:3], "little"), blob[3:3 + 2 * k], blob[3 + 2 * k:]
    vec = unpack_vector(blob, where)
    pos = np.flatnonzero(vec)
    return vec.size, pos.astype(_U16 if vec.size <= 0xFFFF else np.dtype("<u4")).tobytes(), vec[pos].tobytes()


def pack_text(text: str | bytes | None) -> str | bytes | None:
    """zlib's bytes when shorter than the text's, the text otherwise (short answers gain nothing):
    how schemas 6 to 9 stored the call log's texts (their migrations still pack, schema 10's unpacks)."""
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


def pack_scores(results: list[dict]) -> str | bytes:
    """A retrieval's results ({"id", and SCORE_KEYS rounded to 4 places}) packed, or as JSON when a
    value does not fit the packed form."""
    if any(r[k] == 0 and math.copysign(1, r[k]) < 0 for r in results for k in SCORE_KEYS):
        return json.dumps(results)  # -0.0 would read back as 0.0
    try:
        return SCORES + b"".join(_SCORE.pack(r["id"], *(round(r[k] * 10000) for k in SCORE_KEYS)) for r in results)
    except (struct.error, OverflowError, ValueError, TypeError):
        return json.dumps(results)


def unpack_scores(value: str | bytes, where: str = "a retrieval") -> list[dict]:
    """A retrieval's results as the JSON form gives them; SaveError for what is neither form."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except (ValueError, RecursionError):
            raise SaveError(f"{where}: results are not JSON") from None
    if not isinstance(value, bytes) or value[:1] != SCORES or len(value) % _SCORE.size != 1:
        raise SaveError(f"{where}: results are not packed scores")
    return [{"id": i, **{k: n / 10000 for k, n in zip(SCORE_KEYS, scores)}}
            for i, *scores in _SCORE.iter_unpack(value[1:])]
