"""The Backend seam: anything that can answer a Task, and the recorder every call goes through."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Callable, Protocol

from smalltown.llm.tasks import Output, Task
from smalltown.llm.validate import UnusableAnswer


class BackendUnavailable(Exception):
    """A backend that cannot answer at all (a model that will not load, a server that is down, a
    cassette without the question): not a model answer, so the run stops, with this message."""


@dataclass
class Answer:
    output: Output
    raw: str  # the backend's answer text, before parsing
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0


class Backend(Protocol):
    name: str
    model: str

    def answer(self, task: Task, prompt: str) -> Answer: ...


@dataclass
class CallRecord:
    """One answered task, as stored in the save's `llm_calls` table."""

    agent: str
    task: str
    prompt: str
    raw_answer: str
    parsed_answer: str  # JSON
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int
    ms: float
    backend: str
    model: str
    note: str = ""  # e.g. why a fallback was used


class Asker:
    """What the mind holds: asks a task of the backend and records the call.

    A run never stops on a model answer: when the backend gives up on a task (UnusableAnswer,
    after its own bounded retries), the fallback backend answers it (the scripted one, by
    default), and the call log says so."""

    def __init__(self, backend: Backend, record: Callable[[CallRecord], None], fallback: Backend | None = None):
        self.backend = backend
        self.fallback = fallback
        self._record = record
        self._local = threading.local()  # agents may ask at once, from worker threads
        self._lock = threading.Lock()
        self._in_flight: dict[int, tuple[str, str, float]] = {}  # thread -> (agent, task, started)

    def in_flight(self) -> list[tuple[str, str, float]]:
        """The questions being answered right now (agent, task, time.monotonic() it was asked):
        safe to read from any thread, so an interface can show that the model is working."""
        with self._lock:
            return list(self._in_flight.values())

    @property
    def last(self) -> CallRecord:
        return self._local.last

    @last.setter
    def last(self, record: CallRecord) -> None:
        self._local.last = record

    def ask(self, agent: str, task: Task) -> Output:
        prompt = task.render()
        t0 = time.perf_counter()
        note = ""
        me = threading.get_ident()
        with self._lock:
            self._in_flight[me] = (agent, task.name, time.monotonic())
        try:
            ans = self.backend.answer(task, prompt)
        except UnusableAnswer as e:
            if self.fallback is None:
                raise
            ans = self.fallback.answer(task, prompt)
            note = f"fallback to {self.fallback.name}: {e.reason}"
            ans.raw = e.raw  # keep what the model said, for the log
            # what the failed attempts cost is still counted
            ans.prompt_tokens, ans.completion_tokens, ans.cached_tokens = getattr(e, "usage", (0, 0, 0))
        finally:
            with self._lock:
                self._in_flight.pop(me, None)
        ms = (time.perf_counter() - t0) * 1000
        self.last = CallRecord(
            agent=agent, task=task.name, prompt=prompt, raw_answer=ans.raw,
            parsed_answer=ans.output.model_dump_json(), prompt_tokens=ans.prompt_tokens,
            completion_tokens=ans.completion_tokens, cached_tokens=ans.cached_tokens,
            ms=round(ms, 3), backend=self.backend.name, model=self.backend.model, note=note,
        )
        self._record(self.last)
        return ans.output

    def note(self, text: str) -> None:
        """Attach a note (a fallback, a rejected answer) to the last recorded call."""
        self.last.note = f"{self.last.note}; {text}" if self.last.note else text
