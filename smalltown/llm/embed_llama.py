"""Sentence embeddings from a GGUF model run by llama.cpp (an alternative to `HashEmbedder`).

Any GGUF llama.cpp can pool: a sentence-embedding model (nomic-embed, bge, all-MiniLM, ...
converted to GGUF) with its own pooling in its metadata, or any other model, mean-pooled. Texts
longer than the context are cut to it. Rows are L2-normalised float32, as the `Embedder`
protocol asks.

Each text is decoded on its own, never batched with others: llama.cpp's batched decode rounds a
text's vector differently depending on which texts share its batch (by ~1e-6), so a text's bytes
would depend on the call that first embedded it. One at a time, the same text gives the same
bytes in any call, in any process, with any number of threads (as `HashEmbedder` does).

One model, one context, one lock: llama.cpp is not thread-safe, so concurrent callers queue.
"""

from __future__ import annotations

import mmap
import struct
import threading
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from smalltown.llm.embed import CachedEmbedder
from smalltown.llm.llama_model import ModelError, check_gguf, load_model, physical_cores

POOLINGS = {"mean": 1, "cls": 2, "last": 3}  # llama_cpp.LLAMA_POOLING_TYPE_*
RANK = 4  # LLAMA_POOLING_TYPE_RANK: a reranker's score head, not an embedding


# --- the model's metadata, before llama.cpp loads it --------------------------------------------

# GGUF value types: 0-7 and 10-12 are fixed-size scalars, 8 a string, 9 an array.
_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9


def gguf_scalars(path: Path) -> dict[str, object]:
    """The GGUF file's scalar and string metadata (arrays, such as the vocabulary, are skipped);
    empty if the file cannot be read as GGUF v2+ (llama.cpp then says what is wrong)."""
    try:
        with path.open("rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
            return _read_scalars(m)
    except (OSError, ValueError, struct.error, IndexError, UnicodeDecodeError):
        return {}


def _read_scalars(m: mmap.mmap) -> dict[str, object]:
    if m[:4] != b"GGUF" or struct.unpack_from("<I", m, 4)[0] < 2:
        return {}
    (n_kv,) = struct.unpack_from("<Q", m, 16)
    pos, out = 24, {}

    def string(pos: int) -> tuple[str, int]:
        (n,) = struct.unpack_from("<Q", m, pos)
        if pos + 8 + n > len(m):
            raise ValueError("truncated")
        return m[pos + 8:pos + 8 + n].decode("utf-8"), pos + 8 + n

    for _ in range(n_kv):
        key, pos = string(pos)
        (vtype,) = struct.unpack_from("<I", m, pos)
        pos += 4
        if vtype in _SCALARS:
            fmt = _SCALARS[vtype]
            (out[key],) = struct.unpack_from(fmt, m, pos)
            pos += struct.calcsize(fmt)
        elif vtype == _STRING:
            out[key], pos = string(pos)
        elif vtype == _ARRAY:
            etype, count = struct.unpack_from("<IQ", m, pos)
            pos += 12
            if etype in _SCALARS:
                pos += count * struct.calcsize(_SCALARS[etype])
            elif etype == _STRING:
                for _ in range(count):
                    pos += 8 + struct.unpack_from("<Q", m, pos)[0]
            else:  # nested arrays: not in any model we read; stop here
                break
        else:
            raise ValueError(f"unknown GGUF value type {vtype}")
    return out


# --- the embedder -------------------------------------------------------------------------------


class LlamaEmbedder(CachedEmbedder):
    """A GGUF model's pooled embeddings: the model's own pooling if its metadata names one
    (mean, CLS or last token), else `pooling` ("mean", "cls" or "last")."""

    def __init__(self, model_path: str | Path, n_ctx: int = 512, n_threads: int | None = None,
                 pooling: str = "mean", repack: str = "auto"):
        import llama_cpp

        super().__init__()
        if pooling not in POOLINGS:
            raise ValueError(f"pooling must be one of {sorted(POOLINGS)}, got {pooling!r}")
        if n_ctx < 8:
            raise ValueError("n_ctx must be at least 8")
        path = Path(model_path)
        check_gguf(path)
        meta = gguf_scalars(path)
        arch = meta.get("general.architecture")
        own = meta.get(f"{arch}.pooling_type")
        if own == RANK:
            raise ModelError(f"{path.name} is a reranking model, not an embedding model")
        pooling_type = own if own in POOLINGS.values() else POOLINGS[pooling]
        trained = meta.get(f"{arch}.context_length")
        if isinstance(trained, int) and 0 < trained < n_ctx:
            n_ctx = trained  # beyond it, a model with learned positions has no position to give

        self.path = path
        self.n_ctx = n_ctx
        self.n_threads = n_threads or physical_cores()
        self._lock = threading.RLock()
        # n_batch = n_ubatch = n_ctx: a whole (truncated) text is one micro-batch, as a model
        # with non-causal attention (BERT) requires
        self._llm = load_model(path, repack, embedding=True, pooling_type=pooling_type, n_ctx=n_ctx,
                               n_batch=n_ctx, n_ubatch=n_ctx, n_threads=self.n_threads,
                               n_threads_batch=self.n_threads)
        llm = self._llm
        got = llm._ctx.pooling_type()
        if got not in POOLINGS.values():
            llm.close()
            raise ModelError(f"llama.cpp cannot pool the embeddings of {path.name} (pooling type {got})")
        self.pooling = next(k for k, v in POOLINGS.items() if v == got)
        self.dim = int(llm.n_embd())
        self.name = f"llama-embed:{path.name}:{self.dim}"
        vocab = llm._model.vocab
        # a model that appends a special token (BERT's [SEP], an EOS for last-token pooling) keeps
        # it when a long text is cut
        self._keep_last = bool(llama_cpp.llama_vocab_get_add_eos(vocab) or llama_cpp.llama_vocab_get_add_sep(vocab))

    # --- the cached base's hook, and its callers under the lock ---

    def tokens(self, text: str) -> list[int]:
        """The text's tokens as the model reads them (its special tokens added), cut to the context."""
        tokens = self._llm.tokenize(text.encode("utf-8", "replace"), add_bos=True, special=False)
        if len(tokens) > self.n_ctx:
            tokens = tokens[:self.n_ctx - 1] + tokens[-1:] if self._keep_last else tokens[:self.n_ctx]
        return tokens

    def _compute(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), np.float64)
        with self._lock:
            for i, text in enumerate(texts):
                tokens = self.tokens(text)
                if tokens:  # no tokens (an empty text, for a model that adds none): a zero row
                    out[i] = self._pooled(tokens)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=(norms > 0) & np.isfinite(norms))
        return out.astype(np.float32)

    def _pooled(self, tokens: list[int]) -> np.ndarray:
        """One text, decoded alone: the pooled embedding of its sequence."""
        import llama_cpp

        llm = self._llm
        llm._ctx.kv_cache_clear()
        batch = llm._batch
        batch.reset()
        batch.add_sequence(tokens, 0, True)  # every token an output: embeddings pool over all
        try:
            llm._ctx.decode(batch)
        finally:
            batch.reset()
        ptr = llama_cpp.llama_get_embeddings_seq(llm._ctx.ctx, 0)
        if not ptr:
            raise RuntimeError(f"llama.cpp gave no pooled embedding for {self.path.name}")
        return np.ctypeslib.as_array(ptr, shape=(self.dim,)).astype(np.float64)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        with self._lock:
            return super().embed(texts)

    def take_fresh(self) -> list[tuple[str, np.ndarray]]:
        with self._lock:
            return super().take_fresh()

    def preload(self, items: Iterable[tuple[str, np.ndarray]]) -> None:
        with self._lock:
            super().preload(items)

    def close(self) -> None:
        with self._lock:
            self._llm.close()
