"""What the engine is handed to answer a run's questions: a backend chosen above it (the command
line's registry, cli/backends.py), made here for the run's seed. The engine names no backend."""

from __future__ import annotations

from typing import Protocol

from smalltown.llm.backend import Backend, capabilities
from smalltown.llm.embed import Embedder


class BackendChoice(Protocol):
    """A backend chosen by name, with its options, not made yet: sim/open.py makes it once it
    knows the run's seed, and only after what can refuse the start without it was checked."""

    name: str

    def check(self) -> None:
        """Refuse the start before anything is opened (a cassette stripped of its call log)."""

    def backend(self, seed: int) -> Backend:
        """The backend, sampling under `seed` unless the user gave one."""

    def embedder(self) -> Embedder | None:
        """The embedder the user named, or None (the model-free default)."""

    def fallback(self, seed: int) -> Backend | None:
        """Who answers what the backend cannot (the stand-in), or None when it is the stand-in."""


def connect(backend: Backend) -> None:
    """Make sure the backend (and a cassette's live fallthrough) can be reached before a run
    writes anything: a server that is down is then a clear error, not a save at tick 0. Backends
    with nothing to reach (scripted; llama, whose model is loaded when it is made) pass."""
    for b in (backend, capabilities(backend).fallthrough):
        reach = capabilities(b).connect
        if reach is not None:
            reach()
