"""Backends by name, for the command line."""

from __future__ import annotations

from smalltown.llm.backend import Backend
from smalltown.llm.scripted import ScriptedBackend

BACKENDS = ("scripted",)


def make_backend(name: str, seed: int) -> Backend:
    if name == "scripted":
        return ScriptedBackend(seed)
    raise ValueError(f"unknown backend {name!r} (available: {', '.join(BACKENDS)})")
