"""The memory stream and retrieval, pinned to SPEC §1–§2 with answers computed by hand."""

from __future__ import annotations

import dataclasses
import itertools
import random
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from smalltown.llm.embed import HashEmbedder, words
from smalltown.mind.memory import Memory, MemoryStream, RetrievalWeights

ROOT = Path(__file__).resolve().parents[1]
T0 = datetime(2023, 2, 13, 8, 0)
H = timedelta(hours=1)


class StubEmbedder:
    """Hand-chosen unit vectors, so relevance (a cosine) is known exactly; unknown text -> zero."""

    name = "stub-2"
    dim = 2

    def __init__(self, vectors: dict[str, tuple[float, float]]):
        self.vectors = vectors

    def embed(self, texts):
        return np.array([self.vectors.get(t, (0.0, 0.0)) for t in texts], np.float32).reshape(-1, 2)


def counter(start: int = 1):
    it = itertools.count(start)
    return lambda: next(it)


def stub_stream(vectors=None, weights=RetrievalWeights()) -> MemoryStream:
    return MemoryStream("Klaus", StubEmbedder(vectors or {}), counter(), weights)


def by_id(retrieval):
    return {s.memory.id: s for s in retrieval.results}


# --- recency -------------------------------------------------------------------------------------

def test_recency_decays_0995_per_game_hour_since_last_access():
    s = stub_stream()
    old = s.add("observation", "a", T0, 5)
    mid = s.add("observation", "b", T0 + 10 * H, 5)
    new = s.add("observation", "c", T0 + 20 * H, 5)
    r = by_id(s.retrieve("anything", T0 + 20 * H, k=3))
    r20, r10 = 0.995 ** 20, 0.995 ** 10  # raw recency of `old` and `mid`; `new` is 1
    assert r[old.id].recency == 0.0
    assert r[new.id].recency == 1.0
    assert r[mid.id].recency == pytest.approx((r10 - r20) / (1 - r20), abs=1e-12)
    assert r[mid.id].recency == pytest.approx(0.48747, abs=1e-5)  # not linear (0.5), not 0.99 (0.4749)


def test_decay_is_configurable():
    s = stub_stream(weights=RetrievalWeights(decay=0.99))
    s.add("observation", "a", T0, 5)
    mid = s.add("observation", "b", T0 + 10 * H, 5)
    s.add("observation", "c", T0 + 20 * H, 5)
    r = by_id(s.retrieve("q", T0 + 20 * H, k=3))
    assert r[mid.id].recency == pytest.approx((0.99 ** 10 - 0.99 ** 20) / (1 - 0.99 ** 20), abs=1e-12)


# --- normalisation -------------------------------------------------------------------------------

def test_importance_is_min_max_normalised_over_candidates():
    s = stub_stream()
    ids = [s.add("observation", f"m{i}", T0, imp).id for i, imp in enumerate((2, 5, 10))]
    r = by_id(s.retrieve("q", T0, k=3))
    assert [r[i].importance for i in ids] == pytest.approx([0.0, 3 / 8, 1.0])


def test_relevance_is_cosine_min_max_normalised():
    vecs = {"q": (1.0, 0.0), "same": (1.0, 0.0), "near": (0.6, 0.8), "far": (0.0, 1.0), "opposite": (-1.0, 0.0)}
    s = stub_stream(vecs)
    ids = {t: s.add("observation", t, T0, 3).id for t in ("same", "near", "far", "opposite")}
    r = by_id(s.retrieve("q", T0, k=4))
    # cosines 1, 0.6, 0, -1 over the range [-1, 1] -> (c + 1) / 2
    assert r[ids["same"]].relevance == pytest.approx(1.0)
    assert r[ids["near"]].relevance == pytest.approx(0.8)
    assert r[ids["far"]].relevance == pytest.approx(0.5)
    assert r[ids["opposite"]].relevance == pytest.approx(0.0)


def test_zero_range_component_counts_half_and_ties_go_to_newer_id():
    s = stub_stream()  # every text embeds to zero: relevance has zero range too
    ids = [s.add("observation", f"m{i}", T0, 4).id for i in range(4)]  # same time, same importance
    r = s.retrieve("q", T0 + 3 * H, k=4)
    for sc in r.results:
        assert (sc.recency, sc.importance, sc.relevance, sc.total) == (0.5, 0.5, 0.5, 1.5)
    assert [sc.memory.id for sc in r.results] == ids[::-1]


def test_total_is_the_weighted_sum_of_normalised_components():
    vecs = {"q": (1.0, 0.0), "relevant": (1.0, 0.0), "important": (0.0, 1.0), "recent": (0.6, 0.8)}
    w = RetrievalWeights(recency=0.5, importance=2.0, relevance=3.0)  # the authors' code weights
    s = stub_stream(vecs, w)
    a = s.add("observation", "relevant", T0, 1)
    b = s.add("observation", "important", T0 + 1 * H, 9)
    c = s.add("observation", "recent", T0 + 2 * H, 5)
    r = by_id(s.retrieve("q", T0 + 2 * H, k=3))
    r1, r2 = 0.995 ** 2, 0.995 ** 1
    want = {a.id: (0.0, 0.0, 1.0), b.id: ((r2 - r1) / (1 - r1), 1.0, 0.0), c.id: (1.0, 0.5, 0.6)}
    for mid, (rec, imp, rel) in want.items():
        sc = r[mid]
        assert (sc.recency, sc.importance, sc.relevance) == pytest.approx((rec, imp, rel))
        assert sc.total == pytest.approx(0.5 * rec + 2.0 * imp + 3.0 * rel)


def test_weights_change_the_ranking():
    vecs = {"q": (1.0, 0.0), "relevant but mundane": (1.0, 0.0), "poignant but unrelated": (0.0, 1.0)}
    first = {}
    for name, w in {"importance": RetrievalWeights(importance=3.0),
                    "relevance": RetrievalWeights(relevance=3.0)}.items():
        s = stub_stream(vecs, w)
        s.add("observation", "relevant but mundane", T0, 1)
        s.add("reflection", "poignant but unrelated", T0, 10)
        first[name] = s.retrieve("q", T0, k=1).results[0].memory.description
    assert first == {"importance": "poignant but unrelated", "relevance": "relevant but mundane"}


# --- top k ---------------------------------------------------------------------------------------

def test_top_k_size_and_order():
    s = stub_stream()
    ids = [s.add("observation", f"m{i}", T0, imp).id for i, imp in enumerate((3, 9, 1, 7, 5))]
    r = s.retrieve("q", T0, k=3)
    assert [sc.memory.id for sc in r.results] == [ids[1], ids[3], ids[4]]  # importance 9, 7, 5
    totals = [sc.total for sc in r.results]
    assert totals == sorted(totals, reverse=True)
    assert len(s.retrieve("q", T0, k=50).results) == 5
    assert s.retrieve("q", T0, k=0).results == []
    assert stub_stream().retrieve("q", T0, k=5).results == []


def test_tie_at_the_kth_place_goes_to_the_newer_id():
    s = stub_stream()
    s.add("observation", "top", T0, 9)
    tied = [s.add("observation", f"t{i}", T0, 5).id for i in range(6)]
    s.add("observation", "low", T0, 1)
    r = s.retrieve("q", T0, k=3)
    assert [sc.memory.id for sc in r.results][1:] == [tied[-1], tied[-2]]


def test_identical_texts_tie_exactly_with_the_real_embedder():
    s = MemoryStream("Klaus", HashEmbedder(), counter())
    rng = random.Random(3)
    for i in range(3000):  # identical texts scattered through a large matrix
        s.add("observation", rng.choice(["bed is idle", "stove is on", "Isabella is brewing coffee"]), T0, 2)
    r = s.retrieve("coffee at the cafe", T0, k=30)
    # each text once (issue 11: identical records no longer fill the top k), best first
    assert sorted(sc.memory.description for sc in r.results) == ["Isabella is brewing coffee", "bed is idle",
                                                                  "stove is on"]
    best = r.results[0]
    assert best.memory.description == "Isabella is brewing coffee"
    same = [m.id for m in s if m.description == best.memory.description]
    assert best.memory.id == max(same)  # identical texts tie exactly: the newest wins the tie


class DenseEmbedder:
    """Three dense random unit vectors: BLAS gemv rounds such rows differently by position."""

    name = "dense-128"
    dim = 128

    def __init__(self):
        v = np.random.default_rng(5).standard_normal((3, self.dim))
        self.vectors = dict(zip("abc", (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)))

    def embed(self, texts):
        return np.stack([self.vectors.get(t, np.zeros(self.dim, np.float32)) for t in texts])


def test_identical_rows_tie_exactly_wherever_they_sit_in_the_matrix():
    e = DenseEmbedder()
    n = 10_007
    mems = [Memory(i + 1, "Klaus", "observation", "abc"[i % 3], T0, T0, 2) for i in range(n)]
    s = MemoryStream("Klaus", e, counter(n + 1))
    s.load(mems, e.embed([m.description for m in mems]))
    for query in "abc":
        r = s.retrieve(query, T0, k=n)
        totals: dict[str, set[float]] = {}
        for sc in r.results:
            totals.setdefault(sc.memory.description, set()).add(sc.total)
        assert all(len(t) == 1 for t in totals.values()), {d: len(t) for d, t in totals.items()}
        # Equal totals: newer id first, across the whole ranking.
        ids = [sc.memory.id for sc in r.results if sc.memory.description == query]
        assert ids == sorted(ids, reverse=True) and r.results[0].memory.description == query


# --- last access ---------------------------------------------------------------------------------

def test_retrieval_updates_last_access_of_exactly_the_returned_records():
    vecs = {"q": (1.0, 0.0), "hit": (1.0, 0.0), "hit2": (0.8, 0.6), "miss": (0.0, 1.0), "miss2": (0.0, 1.0)}
    s = stub_stream(vecs)
    mems = {t: s.add("observation", t, T0, 3) for t in ("hit", "hit2", "miss", "miss2")}
    now = T0 + 5 * H
    r = s.retrieve("q", now, k=2)
    assert {sc.memory.description for sc in r.results} == {"hit", "hit2"}
    assert mems["hit"].last_accessed == mems["hit2"].last_accessed == now
    assert mems["miss"].last_accessed == mems["miss2"].last_accessed == T0
    assert s.get(mems["hit"].id).created == T0  # creation time is untouched


def test_recency_is_scored_before_the_update_and_changes_after():
    vecs = {"q": (1.0, 0.0), "hit": (1.0, 0.0), "other": (0.0, 1.0)}
    s = stub_stream(vecs)
    hit = s.add("observation", "hit", T0, 3)
    other = s.add("observation", "other", T0, 3)
    first = by_id(s.retrieve("q", T0 + 5 * H, k=1))
    assert first[hit.id].recency == 0.5  # both last accessed at T0 when scored: zero range
    later = by_id(s.retrieve("unrelated", T0 + 10 * H, k=2))  # unknown text: relevance 0.5 each
    assert later[hit.id].recency == 1.0  # accessed 5 h ago
    assert later[other.id].recency == 0.0  # accessed 10 h ago
    assert [sc.memory.id for sc in s.retrieve("unrelated", T0 + 11 * H, k=2).results] == [other.id, hit.id]


# --- filters -------------------------------------------------------------------------------------

def test_kinds_filter_and_normalisation_over_the_filtered_candidates():
    s = stub_stream()
    obs = s.add("observation", "o", T0, 3)
    refl = s.add("reflection", "r", T0, 10)
    chat = s.add("chat", "c", T0, 5)
    r = s.retrieve("q", T0, k=10, kinds=("observation", "chat"))
    got = by_id(r)
    assert set(got) == {obs.id, chat.id}
    assert got[chat.id].importance == 1.0 and got[obs.id].importance == 0.0  # 10 is not a candidate
    assert s.get(refl.id).last_accessed == T0
    assert s.retrieve("q", T0, k=10, kinds=()).results == []
    with pytest.raises(ValueError):
        s.retrieve("q", T0, k=10, kinds=("dream",))


def test_exclude_filter():
    s = stub_stream()
    ids = [s.add("observation", f"m{i}", T0, imp).id for i, imp in enumerate((2, 6, 10))]
    r = by_id(s.retrieve("q", T0, k=10, exclude={ids[2], 999}))
    assert set(r) == {ids[0], ids[1]}
    assert r[ids[1]].importance == 1.0
    assert s.retrieve("q", T0, k=10, exclude=ids).results == []


# --- stream bookkeeping --------------------------------------------------------------------------

def test_ids_come_from_the_shared_counter_and_records_keep_their_fields():
    shared = counter(100)
    e = HashEmbedder()
    a, b = MemoryStream("A", e, shared), MemoryStream("B", e, shared)
    m1 = a.add("observation", "x", T0, 2)
    m2 = b.add("plan", "y", T0, 3)
    m3 = a.add("reflection", "z", T0 + H, 8, evidence=[m1.id])
    assert (m1.id, m2.id, m3.id) == (100, 101, 102)
    assert m3 == Memory(102, "A", "reflection", "z", T0 + H, T0 + H, 8, (100,))
    assert a.get(102) is m3 and len(a) == 2 and [m.id for m in a] == [100, 102]
    with pytest.raises(KeyError):
        a.get(101)


def test_add_rejects_unknown_kinds_and_out_of_range_importance():
    s = stub_stream()
    with pytest.raises(ValueError):
        s.add("dream", "x", T0, 3)
    for bad in (0, 11):
        with pytest.raises(ValueError):
            s.add("observation", "x", T0, bad)
    assert len(s) == 0


def test_recent_is_newest_last_and_filters_kinds():
    s = stub_stream()
    ms = [s.add(kind, f"m{i}", T0 + i * H, 3) for i, kind in
          enumerate(("observation", "plan", "observation", "chat", "observation"))]
    assert s.recent(2) == ms[3:]
    assert s.recent(2, kinds=("observation",)) == [ms[2], ms[4]]
    assert s.recent(10) == ms and s.recent(0) == []


def test_stream_grows_past_its_initial_capacity():
    e = HashEmbedder()
    s = MemoryStream("Klaus", e, counter(), RetrievalWeights(recency=0.0, importance=0.0))
    mems = [s.add("observation", f"event number {i}", T0 + i * H, 1 + i % 10) for i in range(300)]
    assert len(s) == 300
    for m in (mems[0], mems[63], mems[64], mems[299]):
        assert np.array_equal(s.embedding(m.id), e.embed([m.description])[0])
    assert s.retrieve("event number 150", T0 + 300 * H, k=1).results[0].memory.id == mems[150].id


def test_drain_returns_what_changed_and_then_is_empty():
    e = HashEmbedder()
    s = MemoryStream("Klaus", e, counter())
    a = s.add("observation", "Isabella is brewing coffee", T0, 2)
    b = s.add("observation", "bed is idle", T0, 1)
    r1 = s.retrieve("coffee", T0 + H, k=1, purpose="react")
    r2 = s.retrieve("coffee", T0 + 2 * H, k=1, purpose="react")
    new, touched, retrievals = s.drain()
    assert [m for m, _ in new] == [a, b]
    assert np.array_equal(new[0][1], e.embed([a.description])[0])
    assert touched == [(a.id, T0 + 2 * H)]  # the latest access per record
    assert retrievals == [r1, r2] and r1.purpose == "react" and r1.agent == "Klaus"
    assert s.drain() == ([], [], [])
    c = s.add("plan", "go to the cafe", T0 + 3 * H, 4)
    new, touched, retrievals = s.drain()
    assert [m for m, _ in new] == [c] and touched == [] and retrievals == []


def test_load_restores_the_same_ranking_and_queues_nothing():
    e = HashEmbedder()
    rng = random.Random(11)
    s = MemoryStream("Klaus", e, counter())
    for i in range(500):
        s.add(rng.choice(("observation", "chat", "plan", "reflection")), random_sentence(rng),
              T0 + i * timedelta(minutes=7), rng.randint(1, 10))
    for q in ("coffee", "the election", "party at Hobbs Cafe"):
        s.retrieve(q, T0 + 60 * H, k=10)  # some last-access times differ from creation times
    saved = [dataclasses.replace(m) for m in s]
    matrix = np.stack([s.embedding(m.id) for m in saved])

    restored = MemoryStream("Klaus", HashEmbedder(), counter(10_000))
    restored.load(saved, matrix)
    assert restored.drain() == ([], [], [])
    now = T0 + 70 * H
    for q in ("What is Klaus's relationship with Maria?", "painting", "gentrification research"):
        want = [(sc.memory.id, sc.total) for sc in s.retrieve(q, now, k=20).results]
        got = [(sc.memory.id, sc.total) for sc in restored.retrieve(q, now, k=20).results]
        assert got == want
    with pytest.raises(ValueError):
        restored.load(saved, matrix[:-1])


# --- the embedder --------------------------------------------------------------------------------

EMBED_SAMPLE = ["party at Hobbs Cafe", "Isabella is planning a Valentine's Day party at the cafe",
                "the bed is idle", "", "Klaus Mueller is writing a research paper on gentrification"]


def test_embedder_is_deterministic_across_processes():
    code = ("import sys; from smalltown.llm.embed import HashEmbedder; "
            f"sys.stdout.write(HashEmbedder().embed({EMBED_SAMPLE!r}).tobytes().hex())")
    outs = set()
    for seed in ("1", "2"):  # different string-hash salts must not matter
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                              env={"PYTHONPATH": str(ROOT), "PYTHONHASHSEED": seed}, check=True)
        outs.add(proc.stdout)
    assert outs == {HashEmbedder().embed(EMBED_SAMPLE).tobytes().hex()}


def test_embeddings_are_unit_rows_and_featureless_text_is_zero():
    e = HashEmbedder(dim=128)
    v = e.embed(EMBED_SAMPLE)
    assert v.shape == (5, 128) and v.dtype == np.float32
    norms = np.linalg.norm(v, axis=1)
    assert norms[3] == 0.0 and not e.embed(["it is what it is"])[0].any()
    assert np.allclose(np.delete(norms, 3), 1.0, atol=1e-6)
    assert e.name == "hash-ngram-128-v1"
    assert e.embed([]).shape == (0, 128)


def test_identical_texts_are_embedded_once():
    e = HashEmbedder()
    computed = []
    original = e._compute
    e._compute = lambda texts: (computed.extend(texts), original(texts))[1]
    v = e.embed(["bed is idle", "stove is on", "bed is idle"])
    assert computed == ["bed is idle", "stove is on"]
    assert np.array_equal(v[0], v[2])
    assert e.fresh == ["bed is idle", "stove is on"]
    e.embed(["stove is on"])
    assert computed == ["bed is idle", "stove is on"]

    fresh = e.take_fresh()
    assert [t for t, _ in fresh] == ["bed is idle", "stove is on"] and e.fresh == []
    assert np.array_equal(fresh[0][1], v[0])
    assert e.take_fresh() == []

    s = MemoryStream("Klaus", e, counter())
    s.add("observation", "bed is idle", T0, 1)
    s.add("observation", "desk is idle", T0, 1)
    s.add("observation", "desk is idle", T0 + H, 1)
    assert computed[2:] == ["desk is idle"] and e.fresh == ["desk is idle"]


def test_preload_fills_the_cache_without_making_texts_fresh():
    a = HashEmbedder()
    saved = [(t, a.embed([t])[0]) for t in ("bed is idle", "stove is on")]
    b = HashEmbedder()
    b._compute = lambda texts: pytest.fail(f"embedded {texts} again")
    b.preload(saved)
    assert np.array_equal(b.embed(["stove is on"])[0], saved[1][1])
    assert b.fresh == []
    with pytest.raises(ValueError):
        b.preload([("short", np.zeros(3))])


def test_words_strip_punctuation_possessives_accents_and_stopwords():
    assert words("Isabella's Valentine’s Day party, at the Café!") == \
        ["isabella", "valentine", "day", "party", "cafe"]


def test_relevance_makes_sense():
    e = HashEmbedder()

    def cos(a: str, b: str) -> float:
        va, vb = e.embed([a, b])
        return float(va @ vb)

    party = "Isabella is planning a Valentine's Day party at the cafe"
    assert cos("party at Hobbs Cafe", party) > cos("party at Hobbs Cafe", "the bed is idle") + 0.2
    assert cos("Who is running for the election?", "Sam Moore is running for mayor in the local election") > \
        cos("Who is running for the election?", "Klaus is reading a book in the library")
    assert cos("What is Klaus's relationship with Maria?", "Klaus and Maria are studying together") > \
        cos("What is Klaus's relationship with Maria?", "Isabella is brewing coffee")
    assert cos("planning a party", "she plans parties") > cos("planning a party", "the stove is burning")
    assert cos("the refrigerator is empty", "refrigerator is empty") == pytest.approx(1.0)


# --- the vectorised score against a naive reference ----------------------------------------------

NAMES = ["Isabella", "Klaus", "Maria", "Sam", "Tom", "Ayesha", "Wolfgang", "Carmen", "Eddy", "Mei"]
DOINGS = ["brewing coffee", "reading a book", "writing a paper on gentrification", "painting",
          "sleeping", "eating breakfast", "planning the Valentine's Day party", "running for mayor",
          "studying chemistry", "playing the piano", "cleaning the counter", "taking a walk"]
PLACES = ["Hobbs Cafe", "the library", "the park", "the pub", "the supply store", "home"]


def random_sentence(rng: random.Random) -> str:
    a, b = rng.sample(NAMES, 2)
    return rng.choice([f"{a} is {rng.choice(DOINGS)} at {rng.choice(PLACES)}",
                       f"{rng.choice(['bed', 'stove', 'desk', 'piano'])} is {rng.choice(['idle', 'in use', 'on'])}",
                       f"conversing with {b} about {rng.choice(DOINGS)}",
                       f"{a} thinks {b} enjoys {rng.choice(DOINGS)}"])


def naive_top_k(memories, embeddings, query_vec, now, k, w: RetrievalWeights):
    """SPEC §2 written out one record at a time, in plain Python floats."""
    def minmax(xs):
        lo, hi = min(xs), max(xs)
        return [0.5] * len(xs) if hi - lo <= 1e-12 else [(x - lo) / (hi - lo) for x in xs]

    rec = [w.decay ** max((now - m.last_accessed).total_seconds() / 3600, 0.0) for m in memories]
    imp = [float(m.importance) for m in memories]
    rel = [sum(a * b for a, b in zip(vec, query_vec)) for vec in embeddings]
    rec, imp, rel = minmax(rec), minmax(imp), minmax(rel)
    scored = [(w.recency * rc + w.importance * im + w.relevance * rl, m.id)
              for m, rc, im, rl in zip(memories, rec, imp, rel)]
    scored.sort(key=lambda t: (-t[0], -t[1]))
    text = {m.id: m.description for m in memories}
    seen, out = set(), []
    for total, mid in scored:  # each text once, at its best
        if text[mid] not in seen:
            seen.add(text[mid])
            out.append((total, mid))
    return out[:k]


def test_vectorised_retrieval_matches_a_naive_reference_over_10k_records():
    rng = random.Random(2023)
    e = HashEmbedder()
    w = RetrievalWeights(recency=0.5, importance=2.0, relevance=3.0)
    s = MemoryStream("Klaus", e, counter(), w)
    for i in range(10_000):
        s.add(rng.choice(("observation", "chat", "plan", "reflection")), random_sentence(rng),
              T0 + i * timedelta(minutes=3), rng.randint(1, 10))
    now = T0 + 600 * H
    for q in ("party at Hobbs Cafe", "What is Klaus's relationship with Maria?", "the stove is on",
              "Sam is running for mayor", "who is painting"):
        memories = [dataclasses.replace(m) for m in s]  # as they were before this retrieval
        embeddings = [s.embedding(m.id).tolist() for m in memories]
        qv = e.embed([q])[0].tolist()
        want = naive_top_k(memories, embeddings, qv, now, 30, w)
        got = s.retrieve(q, now, k=30).results
        assert [sc.memory.id for sc in got] == [mid for _, mid in want]
        assert [sc.total for sc in got] == pytest.approx([t for t, _ in want], abs=1e-6)
        now += 2 * H
