"""Deterministic choices: the same seed and inputs give the same pick in every process."""

from __future__ import annotations

import hashlib


def stable_int(*parts: object) -> int:
    """A hash that is the same in every process (Python's hash() of a str is salted)."""
    h = hashlib.blake2b("\x1f".join(map(str, parts)).encode(), digest_size=8)
    return int.from_bytes(h.digest(), "big")
