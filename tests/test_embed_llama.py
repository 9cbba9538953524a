"""The llama.cpp embedder on real llama.cpp, with the tiny random-weight GGUF the tests write
themselves (a causal LM: llama.cpp mean-pools its hidden states). Random weights say nothing
about meaning; these tests check shape, normalisation, determinism, caching, truncation, pooling
from the metadata, load errors, and that a memory stream retrieves with it."""

from __future__ import annotations

import threading
from datetime import datetime, timedelta

import numpy as np
import pytest

pytest.importorskip("llama_cpp")
gguf = pytest.importorskip("gguf")

from smalltown.llm.embed_llama import LlamaEmbedder, gguf_scalars
from smalltown.llm.llama import ModelError
from smalltown.mind.memory import MemoryStream
from tinymodel import N_CTX, N_EMBD, build_tiny_gguf

TEXTS = ["Isabella is planning a Valentine's Day party at Hobbs Cafe",
         "Klaus is writing a research paper on gentrification",
         "the coffee machine is brewing coffee",
         "Día 1: ☕ at the café"]


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    return build_tiny_gguf(tmp_path_factory.mktemp("model") / "tiny.gguf")


@pytest.fixture(scope="module")
def embedder(model):
    e = LlamaEmbedder(model, n_threads=1)
    yield e
    e.close()


def tiny_variant(path, monkeypatch, pooling: gguf.PoolingType | None = None, add_eos: bool = False):
    """The tiny model with `llama.pooling_type` in its metadata, or appending an EOS to texts."""
    class Writer(gguf.GGUFWriter):
        def __init__(self, *args, **kw):
            super().__init__(*args, **kw)
            if pooling is not None:
                self.add_pooling_type(pooling)

        def add_add_eos_token(self, value: bool) -> None:
            super().add_add_eos_token(add_eos or value)

    with monkeypatch.context() as m:
        m.setattr(gguf, "GGUFWriter", Writer)
        return build_tiny_gguf(path)


def counting(e: LlamaEmbedder) -> list[str]:
    """Record the texts `e` actually runs through the model."""
    seen: list[str] = []
    compute = e._compute

    def spy(texts):
        seen.extend(texts)
        return compute(texts)

    e._compute = spy
    return seen


# --- the model --------------------------------------------------------------------------------

def test_dim_name_and_pooling_come_from_the_model(model, embedder):
    assert embedder.dim == N_EMBD == embedder._llm.n_embd()
    assert embedder.name == f"llama-embed:tiny.gguf:{N_EMBD}"
    assert embedder.pooling == "mean" and embedder.n_ctx == 512
    meta = gguf_scalars(model)
    assert meta["general.architecture"] == "llama" and meta["llama.context_length"] == N_CTX
    assert "tokenizer.ggml.tokens" not in meta  # arrays are skipped


def test_rows_are_unit_float32(embedder):
    v = embedder.embed(TEXTS)
    assert v.shape == (len(TEXTS), N_EMBD) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-6)
    assert embedder.embed([]).shape == (0, N_EMBD)


def test_a_text_with_no_tokens_is_a_zero_row(embedder):
    assert embedder.tokens("") == []  # the tiny model adds no BOS
    v = embedder.embed(["", TEXTS[0]])
    assert not v[0].any() and np.isclose(np.linalg.norm(v[1]), 1.0)


def test_different_texts_give_different_vectors(embedder):
    v = embedder.embed(TEXTS)
    for i in range(len(TEXTS)):
        for j in range(i + 1, len(TEXTS)):
            assert not np.allclose(v[i], v[j]), (TEXTS[i], TEXTS[j])
            assert float(v[i] @ v[j]) < 0.9999


def test_the_same_text_gives_the_same_bytes_in_any_call_and_instance(model, embedder):
    alone = np.stack([embedder._compute([t])[0] for t in TEXTS])  # uncached, one per call
    together = embedder._compute(TEXTS[::-1])[::-1]  # in one call, another order
    assert alone.tobytes() == together.tobytes()
    other = LlamaEmbedder(model, n_threads=2)  # a second model, another thread count
    try:
        assert other.embed(TEXTS).tobytes() == embedder.embed(TEXTS).tobytes()
        assert other.name == embedder.name
    finally:
        other.close()


def test_each_distinct_text_is_computed_once(model):
    e = LlamaEmbedder(model, n_threads=1)
    try:
        seen = counting(e)
        v = e.embed([TEXTS[0], TEXTS[1], TEXTS[0]])
        assert seen == [TEXTS[0], TEXTS[1]]
        assert v[0].tobytes() == v[2].tobytes()
        again = e.embed([TEXTS[1], TEXTS[0]])
        assert seen == [TEXTS[0], TEXTS[1]]  # cached
        assert again.tobytes() == v[[1, 0]].tobytes()
        fresh = e.take_fresh()
        assert [t for t, _ in fresh] == [TEXTS[0], TEXTS[1]] and e.take_fresh() == []
        assert fresh[0][1].tobytes() == v[0].tobytes()

        resumed = LlamaEmbedder(model, n_threads=1)  # as on resume: the save's vectors come back
        try:
            resumed_seen = counting(resumed)
            resumed.preload(fresh)
            assert resumed.embed([TEXTS[0], TEXTS[1]]).tobytes() == v[:2].tobytes()
            assert resumed_seen == [] and resumed.take_fresh() == []
        finally:
            resumed.close()
    finally:
        e.close()


def test_a_text_longer_than_the_context_is_cut_to_it(model, embedder):
    e = LlamaEmbedder(model, n_ctx=64, n_threads=1)
    try:
        long, longer = "z" * 64 + " and then something else", "z" * 64 + " but another ending" * 50
        assert len(e.tokens(longer)) == 64 and len(e._llm.tokenize(longer.encode(), False, False)) > 64
        v = e.embed([long, longer])
        assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-6)
        assert v[0].tobytes() == v[1].tobytes()  # the same first 64 tokens
        whole = embedder.embed([long, longer])  # a context of 512 reads them whole
        assert not np.allclose(whole[0], whole[1]) and not np.allclose(v[0], whole[0])
    finally:
        e.close()


def test_a_cut_text_keeps_the_token_the_model_appends(tmp_path, monkeypatch):
    path = tiny_variant(tmp_path / "eos.gguf", monkeypatch, pooling=gguf.PoolingType.LAST, add_eos=True)
    e = LlamaEmbedder(path, n_ctx=16, n_threads=1)
    try:
        eos = e._llm.token_eos()
        assert e.tokens("abc")[-1] == eos and len(e.tokens("abc")) == 4
        cut = e.tokens("z" * 100)
        assert len(cut) == 16 and cut[-1] == eos and cut[:-1] == e.tokens("z" * 15)[:-1]
        # last-token pooling reads the EOS, which has seen the 15 tokens before it
        assert e.embed(["z" * 100])[0].tobytes() == e.embed(["z" * 15])[0].tobytes()
    finally:
        e.close()


def test_the_context_never_exceeds_the_models(model):
    e = LlamaEmbedder(model, n_ctx=2 * N_CTX, n_threads=1)
    try:
        assert e.n_ctx == N_CTX
    finally:
        e.close()


def test_concurrent_callers_queue(model, embedder):
    e = LlamaEmbedder(model, n_threads=1)
    texts = [f"{t} #{i}" for i in range(8) for t in TEXTS]
    results: dict[int, np.ndarray] = {}

    def work(k: int) -> None:
        results[k] = e.embed(texts[k::4])

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for k in range(4):
            assert results[k].tobytes() == embedder.embed(texts[k::4]).tobytes()
        assert sorted(t for t, _ in e.take_fresh()) == sorted(texts)  # each once
    finally:
        e.close()


# --- pooling ----------------------------------------------------------------------------------

def test_the_models_own_pooling_wins(tmp_path, monkeypatch, embedder):
    path = tiny_variant(tmp_path / "last.gguf", monkeypatch, pooling=gguf.PoolingType.LAST)
    assert gguf_scalars(path)["llama.pooling_type"] == 3
    e = LlamaEmbedder(path, n_threads=1, pooling="mean")
    try:
        assert e.pooling == "last"
        v = e.embed(TEXTS)
        assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-6)
        assert not np.allclose(v, embedder.embed(TEXTS))
        # last-token pooling: only the last token's state, which sees the text before it
        assert not np.allclose(e.embed(["ab"])[0], e.embed(["bb"])[0])
    finally:
        e.close()


def test_pooling_without_metadata_is_the_argument(model, embedder):
    e = LlamaEmbedder(model, n_threads=1, pooling="cls")
    try:
        assert e.pooling == "cls"
        assert not np.allclose(e.embed(TEXTS), embedder.embed(TEXTS))
    finally:
        e.close()
    with pytest.raises(ValueError, match="pooling"):
        LlamaEmbedder(model, pooling="max")


def test_a_reranker_is_refused(tmp_path, monkeypatch):
    path = tiny_variant(tmp_path / "rank.gguf", monkeypatch, pooling=gguf.PoolingType.RANK)
    with pytest.raises(ModelError, match="reranking model"):
        LlamaEmbedder(path)


# --- load errors ------------------------------------------------------------------------------

def one_line_model_error(path) -> str:
    with pytest.raises(ModelError) as info:
        LlamaEmbedder(path, n_threads=1)
    message = str(info.value)
    assert message and "\n" not in message
    return message


def test_load_errors_are_model_errors(tmp_path, model):
    assert "not found" in one_line_model_error(tmp_path / "missing.gguf")
    assert "directory" in one_line_model_error(tmp_path)
    (tmp_path / "weights.bin").write_bytes(b"PK\x03\x04" + bytes(100))
    assert "not a GGUF" in one_line_model_error(tmp_path / "weights.bin")
    (tmp_path / "junk.gguf").write_bytes(b"GGUF" + bytes(range(256)) * 4)
    assert gguf_scalars(tmp_path / "junk.gguf") == {}
    assert "llama.cpp could not load junk.gguf" in one_line_model_error(tmp_path / "junk.gguf")
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(model.read_bytes()[:model.stat().st_size // 2])
    assert "llama.cpp could not load cut.gguf" in one_line_model_error(cut)


# --- with a memory stream ---------------------------------------------------------------------

def test_a_memory_stream_retrieves_with_it(embedder):
    ids = iter(range(1, 100))
    stream = MemoryStream("Isabella", embedder, lambda: next(ids))
    start = datetime(2023, 2, 13, 8)
    for i, text in enumerate(TEXTS):
        stream.add("observation", text, start + timedelta(minutes=i), importance=5)
    assert len(stream) == len(TEXTS)
    assert stream.embedding(1).tobytes() == embedder.embed([TEXTS[0]])[0].tobytes()
    got = stream.retrieve(TEXTS[1], start + timedelta(hours=1), k=2)
    assert len(got.results) == 2
    best = max(got.results, key=lambda s: s.relevance)
    assert best.memory.description == TEXTS[1] and best.relevance == 1.0  # cosine 1 with itself
    new, _, retrievals = stream.drain()
    assert [m.description for m, _ in new] == TEXTS and len(retrievals) == 1
    assert all(v.dtype == np.float32 and v.shape == (N_EMBD,) for _, v in new)
