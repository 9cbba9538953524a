"""A large save opens in bounded memory and retrieves what it always did: the stream is loaded one
agent's rows at a time and kept as columns and sparse vectors (mind/memory.py, mind/vectors.py),
and its retrievals are those of a plain reference (every vector dense, every candidate scored)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import tracemalloc
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from benchmarks.big_save import make
from helpers import ROOT
from smalltown.llm.embed import HashEmbedder
from smalltown.mind.memory import KINDS, game_hours
from smalltown.scripted import ScriptedBackend
from smalltown.sim.open import resume
from smalltown.store.packing import pack_vector, unpack_vector
from smalltown.store.save import SaveError

FMT = "%Y-%m-%d %H:%M:%S"
QUERIES = ["the election", "who is painting at the park", "bed is idle", "a recipe for soup",
           "Klaus Mueller talked with Maria Lopez", "xyzzy"]


@pytest.fixture(scope="module")
def grown(tmp_path_factory) -> Path:
    """A real tiny-town save grown to 3,000 memories (the benchmark's generator, small)."""
    return Path(make(tmp_path_factory.mktemp("big") / "grown.sqlite", 3000, "worlds/tiny.toml")["save"])


def _rows(path: Path, agent: str) -> list[tuple]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT id, kind, description, last_accessed, importance, embedding FROM memories "
                            "WHERE agent = ? ORDER BY id", (agent,)).fetchall()
    finally:
        conn.close()


class Reference:
    """SPEC §2's retrieval written plainly: every vector dense in one matrix, every candidate
    scored, sorted whole (total desc, then id desc), the first record of each text kept."""

    def __init__(self, rows: list[tuple], embedder: HashEmbedder, weights):
        self.ids = np.array([r[0] for r in rows], np.int64)
        self.kinds = [r[1] for r in rows]
        self.texts = [r[2] for r in rows]
        self.acc = np.array([game_hours(datetime.strptime(r[3], FMT)) for r in rows])
        self.imp = np.array([r[4] for r in rows], np.float64)
        self.emb = np.vstack([unpack_vector(r[5]) for r in rows])
        self.embedder, self.w = embedder, weights

    def retrieve(self, query: str, now: datetime, k: int, kinds=None, exclude=()) -> list[tuple[int, float]]:
        keep = np.array([(kinds is None or kd in kinds) and int(i) not in exclude
                         for kd, i in zip(self.kinds, self.ids)], bool)
        rows = np.flatnonzero(keep)
        q = self.embedder.embed([query])[0]
        rel = np.einsum("ij,j->i", self.emb[rows], q).astype(np.float64)
        now_h = game_hours(now)
        rec = np.power(self.w.decay, np.maximum(now_h - self.acc[rows], 0.0))

        def norm(x):
            lo, hi = float(x.min()), float(x.max())
            return np.full(x.shape, 0.5) if hi - lo <= 1e-12 else (x - lo) / (hi - lo)

        total = self.w.recency * norm(rec) + self.w.importance * norm(self.imp[rows]) + self.w.relevance * norm(rel)
        order = sorted(range(len(rows)), key=lambda j: (-total[j], -self.ids[rows[j]]))
        out, seen = [], set()
        for j in order:
            if self.texts[rows[j]] not in seen:
                seen.add(self.texts[rows[j]])
                out.append(j)
            if len(out) == k:
                break
        self.acc[rows[out]] = now_h  # a retrieval marks what it returns accessed
        return [(int(self.ids[rows[j]]), float(total[j])) for j in out]


def test_retrieval_on_a_loaded_save_is_the_reference(grown):
    sim = resume(grown, ScriptedBackend(seed=1), readonly=True)
    try:
        for agent in sim.agents:
            stream = agent.mind.memory
            rows = _rows(grown, agent.name)
            assert len(stream) == len(rows) > 900
            ref = Reference(rows, HashEmbedder(), stream.weights)
            now = sim.now
            some = [int(r[0]) for r in rows[::97]]
            for i, query in enumerate(QUERIES):
                for kinds, exclude in ((None, ()), (("observation", "chat"), ()), (None, set(some)),
                                       (("reflection",), ())):
                    now += timedelta(minutes=7)
                    got = stream.retrieve(query, now, 12, kinds=kinds, exclude=exclude)
                    want = ref.retrieve(query, now, 12, kinds=kinds, exclude=exclude)
                    assert [(s.memory.id, s.total) for s in got.results] == want, (agent.name, query, kinds)
            # the records come back whole, as the save holds them
            for s in got.results:
                row = next(r for r in rows if r[0] == s.memory.id)
                assert (s.memory.kind, s.memory.description, s.memory.importance) == (row[1], row[2], row[4])
                assert s.memory.kind in KINDS and s.memory.last_accessed == now
    finally:
        sim.save.close()


def test_a_loaded_stream_keeps_columns_not_objects(grown):
    """Opening the save allocates well under a kilobyte a memory: no Memory object nor a dense
    1 KB vector per record (nor a copy of each in the embedder's cache)."""
    rows = sqlite3.connect(grown).execute("SELECT count(*) FROM memories").fetchone()[0]
    tracemalloc.start()
    try:
        sim = resume(grown, ScriptedBackend(seed=1), readonly=True)
        held, _peak = tracemalloc.get_traced_memory()
        streams = [a.mind.memory for a in sim.agents]
        sim.save.close()
    finally:
        tracemalloc.stop()
    assert held / rows < 1024, f"{held / rows:.0f} bytes held per memory"
    assert all(not s._live for s in streams)  # no record made until one is asked for


@pytest.mark.parametrize("how", ["backwards", "past its size", "a repeated text's"])
def test_a_vector_whose_positions_are_unsound_is_refused_naming_the_save(grown, tmp_path, how):
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(grown.read_bytes())
    conn = sqlite3.connect(bad)
    repeated = "AND EXISTS (SELECT 1 FROM memories o WHERE o.agent = m.agent AND o.description = m.description " \
               "AND o.id < m.id)" if how == "a repeated text's" else ""
    mid, blob = conn.execute("SELECT id, embedding FROM memories m WHERE agent = 'Klaus Mueller' "
                             f"{repeated} ORDER BY id DESC LIMIT 1").fetchone()
    k = (len(blob) - 3) // 6
    assert blob[:1] == b"S" and k >= 2
    pos = np.frombuffer(blob, "<u2", k, 3).copy()
    if how == "past its size":
        pos[-1] = 300  # in a vector of 256 numbers
    else:
        pos = pos[::-1].copy()  # the same numbers, positions backwards
    conn.execute("UPDATE memories SET embedding = ? WHERE id = ?", (blob[:3] + pos.tobytes() + blob[3 + 2 * k:], mid))
    conn.commit()
    conn.close()
    with pytest.raises(SaveError, match=rf"{bad.name}.*memory {mid}: embedding"):
        resume(bad, ScriptedBackend(seed=1), readonly=True)
    out = subprocess.run([sys.executable, "-m", "smalltown", "inspect", str(bad), "Klaus Mueller", "--retrieve", "x"],
                         cwd=ROOT, capture_output=True, text=True)
    assert out.returncode not in (0, 70) and "Traceback" not in out.stderr
    assert str(bad) in out.stderr and f"memory {mid}" in out.stderr


def test_a_text_filed_before_is_embedded_as_saved_not_again(grown, tmp_path):
    """A resumed run finds a filed text's vector in the streams (not a copy of every vector in the
    embedder's cache): no text is embedded anew, nor listed to be saved again."""
    save = tmp_path / "again.sqlite"
    save.write_bytes(grown.read_bytes())
    sim = resume(save, ScriptedBackend(seed=1))
    try:
        stream = sim.agents[0].mind.memory
        text = _rows(save, sim.agents[1].name)[-1][2]  # another agent's newest text
        assert not stream.has(text) and text not in sim.embedder.cache
        calls = []
        compute = sim.embedder._compute
        sim.embedder._compute = lambda texts: calls.append(list(texts)) or compute(texts)
        vec = sim.embedder.embed([text])[0]
        assert calls == [] and sim.embedder.take_fresh() == []
        assert np.array_equal(vec, sim.agents[1].mind.memory.saved_vector(text)[1])
    finally:
        sim.save.close()


def test_sparse_and_dense_vectors_score_alike():
    """A stream's vectors rebuilt from their non-zeros give einsum's very sums (mind/vectors.py)."""
    from smalltown.mind.vectors import CHUNK, Vectors

    rng = np.random.default_rng(3)
    dense = np.where(rng.random((CHUNK + 500, 64)) < 0.2, rng.standard_normal((CHUNK + 500, 64)), 0).astype(np.float32)
    vecs = Vectors(64)
    for i, row in enumerate(dense):
        if i % 2:
            vecs.append(row)
        else:
            pos = np.flatnonzero(row)
            vecs.append_packed(pos.astype("<u2").tobytes(), row[pos].astype("<f4").tobytes())
            assert vecs.settle() is None
    q = rng.standard_normal(64).astype(np.float32)
    assert np.array_equal(vecs.dots(q), np.einsum("ij,j->i", dense, q))
    some = rng.integers(0, len(dense), 300)
    assert np.array_equal(vecs.dots(q, some), np.einsum("ij,j->i", dense[some], q))
    assert np.array_equal(vecs.row(17), dense[17])
    assert pack_vector(vecs.row(17)) == pack_vector(dense[17])


def test_vectors_in_every_stored_form_load_alike(grown, tmp_path):
    """A save's vectors may be bare float32 (schema 4 and before), dense or sparse packed: each
    loads to the same numbers, and retrieval is still the reference's."""
    save = tmp_path / "forms.sqlite"
    save.write_bytes(grown.read_bytes())
    conn = sqlite3.connect(save)
    rows = conn.execute("SELECT id, embedding FROM memories WHERE agent = 'Maria Lopez' ORDER BY id").fetchall()
    for i, (mid, blob) in enumerate(rows):
        vec = unpack_vector(blob)
        if i % 3 == 1:
            conn.execute("UPDATE memories SET embedding = ? WHERE id = ?", (vec.tobytes(), mid))
        elif i % 3 == 2:
            conn.execute("UPDATE memories SET embedding = ? WHERE id = ?", (b"D" + vec.tobytes(), mid))
    conn.commit()
    conn.close()
    sim = resume(save, ScriptedBackend(seed=1), readonly=True)
    try:
        stream = sim.agent("Maria Lopez").mind.memory
        stored = _rows(save, "Maria Lopez")
        assert {len(r[5]) % 4 for r in stored} == {0, 1, 3}  # all three forms are there
        for r in stored[::50]:
            assert np.array_equal(stream.embedding(r[0]), unpack_vector(r[5]))
        ref = Reference(stored, HashEmbedder(), stream.weights)
        now = sim.now
        for query in QUERIES:
            now += timedelta(minutes=5)
            got = stream.retrieve(query, now, 15)
            assert [(s.memory.id, s.total) for s in got.results] == ref.retrieve(query, now, 15)
    finally:
        sim.save.close()
