"""Text embeddings for memory retrieval (SPEC §2: relevance is a cosine similarity).

The default, `HashEmbedder`, needs no model: hashed lexical features (words, word bigrams and
character 3-grams) give real relevance between sentences that share words or word stems, and the
same text gives the same bytes in every process, on every machine. A save records the embedder's
`name`; two embedders must never be mixed in one save, because their vectors are not comparable.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import hashlib
import re
import unicodedata
from typing import Callable, Iterable, Protocol, Sequence

import numpy as np


class Embedder(Protocol):
    name: str  # recorded in the save, e.g. "hash-ngram-256-v1"
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """(len(texts), dim) float32, rows L2-normalised; a text with no features is a zero row."""
        ...

    def close(self) -> None:
        """Let go of what it holds (a loaded model); nothing, for most."""
        ...


class CachedEmbedder(ABC):
    """Embeds each distinct text once. Subclasses implement `_compute` for texts not yet seen.

    `fresh` lists the texts embedded since the last `take_fresh()`: the simulation stores those in
    the save and, on resume, hands them back through `preload`, so nothing is embedded twice.
    """

    name: str
    dim: int

    def __init__(self) -> None:
        self.cache: dict[str, np.ndarray] = {}
        self.fresh: list[str] = []
        # Where a text's saved vector is found when it is not cached (a resumed run's memory
        # streams: their vectors are not all copied here), as if preloaded: not fresh.
        self.backing: Callable[[str], np.ndarray | None] | None = None

    @abstractmethod
    def _compute(self, texts: Sequence[str]) -> np.ndarray:
        """The rows for texts not embedded before (float32, L2-normalised)."""

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        cache = self.cache
        missing = list(dict.fromkeys(t for t in texts if t not in cache))  # unique, in order
        if missing and self.backing is not None:
            CachedEmbedder.preload(self, [(t, v) for t in missing if (v := self.backing(t)) is not None])
            missing = [t for t in missing if t not in cache]
        if missing:
            rows = self._compute(missing)
            for text, row in zip(missing, rows):
                row.setflags(write=False)  # shared by every caller: nobody may change it
                cache[text] = row
            self.fresh.extend(missing)
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        return np.stack([cache[t] for t in texts])

    def close(self) -> None:
        """Nothing held (a model-backed embedder lets its model go)."""

    def take_fresh(self) -> list[tuple[str, np.ndarray]]:
        """The texts embedded since the last call, with their vectors; empties `fresh`."""
        out = [(t, self.cache[t]) for t in self.fresh]
        self.fresh = []
        return out

    def preload(self, items: Iterable[tuple[str, np.ndarray]]) -> None:
        """Fill the cache from a save. Preloaded texts are not fresh (they are already saved)."""
        for text, vec in items:
            row = np.array(vec, dtype=np.float32).reshape(-1)
            if row.shape != (self.dim,):
                raise ValueError(f"embedding for {text!r} has {row.size} values, expected {self.dim}")
            row.setflags(write=False)
            self.cache.setdefault(text, row)


# Function words carry no topic; question words appear in queries, never in memories.
STOPWORDS = frozenset("""
a an the and or but nor so yet if then than as at by for from in into of on onto to up with
without about over under after before during while is are was were be been being am do does did
done has have had having will would shall should can could may might must it its this that these
those there here i me my mine you your yours he him his she her hers we us our they them their
what which who whom whose how when where why s
""".split())

_APOSTROPHE_S = re.compile(r"['’]s\b")
_APOSTROPHE = re.compile(r"['’]")
_WORD = re.compile(r"[^\W_]+")  # letters and digits of any script


def words(text: str) -> list[str]:
    """Lowercased content words: accents, possessives and punctuation stripped, stopwords dropped."""
    text = unicodedata.normalize("NFKD", text.lower())
    if not text.isascii():
        text = unicodedata.normalize("NFC", "".join(c for c in text if not unicodedata.combining(c)))
    text = _APOSTROPHE.sub("", _APOSTROPHE_S.sub("", text))
    return [w for w in _WORD.findall(text) if w not in STOPWORDS]


def char_grams(word: str) -> list[str]:
    """Character 3-grams with boundary markers: "cafe" -> <ca caf afe fe>."""
    marked = f"<{word}>"
    return [marked[i:i + 3] for i in range(len(marked) - 2)]


class HashEmbedder(CachedEmbedder):
    """Signed feature hashing of words (1.0), word bigrams (0.7) and character 3-grams (0.3).

    Words dominate; bigrams reward shared phrases ("the old mill"); character 3-grams let word
    forms meet ("plan"/"planning", "party"/"parties"). Hashing is blake2b, never Python's salted
    `hash()`, so vectors are identical across processes.
    """

    WORD, BIGRAM, CHAR = 1.0, 0.7, 0.3
    VERSION = 1

    def __init__(self, dim: int = 256):
        super().__init__()
        if dim < 8:
            raise ValueError("dim must be at least 8")
        self.dim = dim
        self.name = f"hash-ngram-{dim}-v{self.VERSION}"
        # Per-word features (the word and its 3-grams) and per-bigram features, hashed once.
        self._word_feats: dict[str, tuple[list[int], list[float]]] = {}
        self._bigram_feat: dict[str, tuple[int, float]] = {}

    def _hash(self, feature: str, weight: float) -> tuple[int, float]:
        h = int.from_bytes(hashlib.blake2b(feature.encode(), digest_size=8).digest(), "little")
        return h % self.dim, (weight if (h >> 63) & 1 == 0 else -weight)

    def _word(self, word: str) -> tuple[list[int], list[float]]:
        got = self._word_feats.get(word)
        if got is None:
            pairs = [self._hash("w:" + word, self.WORD)]
            pairs += [self._hash("c:" + g, self.CHAR) for g in char_grams(word)]
            got = ([b for b, _ in pairs], [v for _, v in pairs])
            if len(self._word_feats) < 200_000:  # bound the memo; a town's vocabulary is small
                self._word_feats[word] = got
        return got

    def _bigram(self, bigram: str) -> tuple[int, float]:
        got = self._bigram_feat.get(bigram)
        if got is None:
            got = self._hash("b:" + bigram, self.BIGRAM)
            if len(self._bigram_feat) < 500_000:
                self._bigram_feat[bigram] = got
        return got

    def _compute(self, texts: Sequence[str]) -> np.ndarray:
        """All texts' features in flat lists, summed into buckets with one `bincount`."""
        slots: list[int] = []
        values: list[float] = []
        for row, text in enumerate(texts):
            base = row * self.dim
            ws = words(text)
            for w in ws:
                buckets, vals = self._word(w)
                slots.extend(base + b for b in buckets)
                values.extend(vals)
            for a, b in zip(ws, ws[1:]):
                bucket, val = self._bigram(f"{a} {b}")
                slots.append(base + bucket)
                values.append(val)
        out = np.bincount(np.array(slots, dtype=np.intp), weights=np.array(values, dtype=np.float64),
                          minlength=len(texts) * self.dim).reshape(len(texts), self.dim)
        out = out.astype(np.float64, copy=False)  # bincount of no weights at all gives int64
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out.astype(np.float32)
