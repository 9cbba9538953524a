"""The Backend seam: anything that can answer a Task, and the asker every call goes through."""

from __future__ import annotations

import hashlib
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Optional, Protocol

from smalltown.llm.fit import PromptTooLong, estimate, fit
from smalltown.llm.schema import max_answer_tokens
from smalltown.llm.tasks import RULES, Answer, Output, Task

if TYPE_CHECKING:
    from smalltown.llm.wrappers import RetryPolicy

__all__ = ["Answer", "Asker", "Backend", "BackendUnavailable", "CallRecord", "Capabilities", "DEFAULT_CONTEXT",
           "Stopped", "capabilities"]

DEFAULT_CONTEXT = 4096  # tokens: the window a backend without one of its own is fitted to


class BackendUnavailable(Exception):
    """A backend that cannot answer at all (a model that will not load, a server that is down, a
    cassette without the question): not a model answer, so the run stops, with this message."""


class Stopped(BaseException):
    """The run was told to stop (Ctrl-C, SIGTERM, a quit) while a question was being answered.
    Not a failure and not an answer: no fallback answers it, and the tick in flight is dropped.
    A BaseException, like KeyboardInterrupt, so that no `except Exception` swallows it."""


class Backend(Protocol):
    name: str
    model: str

    def answer(self, task: Task, prompt: str) -> Answer: ...

    # What it can do beyond answering, declared as `can` (a Capabilities); a backend that declares
    # nothing (a test's fake) can only answer, in a DEFAULT_CONTEXT window.


@dataclass(frozen=True)
class Capabilities:
    """What a backend can do beyond `answer`, declared by the backend (its `can`), so that those
    who use it read fields instead of probing it for attributes."""

    context: int = DEFAULT_CONTEXT  # tokens the model's window holds: prompt and answer
    count: Optional[Callable[[str], int]] = None  # the exact tokens of a prompt as sent (else estimated)
    keyed: bool = False  # `answer` takes `key=`, the question's typed-input key (a cassette replays by it)
    max_concurrency: int = 1  # questions it answers at once (a server): the sim's worker threads
    fallthrough: Optional["Backend"] = None  # a live backend it hands the questions it lacks to
    connect: Optional[Callable[[], None]] = None  # reach it before a run writes anything
    # end the answers in flight now (they raise Stopped) and refuse new ones; called from a
    # signal handler or another thread, so it takes no lock
    abort: Optional[Callable[[], None]] = None
    start_after: Optional[Callable[[int], None]] = None  # a run continued from a tick: skip what came before
    close: Optional[Callable[[], None]] = None  # let go of what it holds (a loaded model)
    retry: Optional[RetryPolicy] = None  # how its attempts are retried (llm/wrappers.py), if at all


NOTHING = Capabilities()


def capabilities(backend: Backend | None) -> Capabilities:
    """What `backend` declares it can do (nothing beyond answering, when it declares nothing)."""
    can = getattr(backend, "can", None)  # the one look-up: test fakes and stand-ins declare nothing
    return can if isinstance(can, Capabilities) else NOTHING


def estimate_prompt(prompt: str) -> int:
    """Tokens of a prompt as sent (the rules, the prompt, a chat template's markers), estimated."""
    return estimate(RULES) + estimate(prompt) + 16


def task_key(task: Task) -> str:
    """A question's identity: its typed inputs before fitting (what a cassette replays by)."""
    return hashlib.sha256(f"{task.name}\n{task.model_dump_json()}".encode()).hexdigest()[:32]


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
    note: str = ""  # what happened beyond a plain answer: records dropped to fit, a fallback and why
    key: str = ""  # task_key(task)
    fallback: str = ""  # why another backend answered: "too long", "cut off", "invalid", "failed"


class Asker:
    """What the mind holds: fits a task to the backend's window and asks it, through the wrappers
    that retry it, fall back, time and record the call (llm/wrappers.py, composed here); tracks
    the questions in flight, and stops them.

    A run never stops on a model answer: when the backend gives up on a task (UnusableAnswer,
    after its bounded retries) or the prompt cannot fit its window, the fallback backend answers
    it (the scripted one, by default), and the call log says so and why."""

    def __init__(self, backend: Backend, record: Callable[[CallRecord], None], fallback: Backend | None = None):
        from smalltown.llm.wrappers import retrying

        self.backend = backend
        self._answerer = retrying(backend)  # one attempt becomes the attempts its policy allows
        self._record = record
        self._local = threading.local()  # agents may ask at once, from worker threads
        self._lock = threading.Lock()
        self._in_flight: dict[int, tuple[str, str, float]] = {}  # thread -> (agent, task, started)
        self.stopping = threading.Event()  # set once by stop(): no question is answered after it
        self.fallback = fallback

    @property
    def fallback(self) -> Backend | None:
        return self._fallback

    @fallback.setter
    def fallback(self, backend: Backend | None) -> None:
        """Who answers what the backend cannot; the wrappers are composed again around it."""
        from smalltown.llm.wrappers import Fallback, Recorded, Timed

        self._fallback = backend
        step = self._fitted if backend is None else Fallback(self._fitted, backend)
        self._step = Recorded(self._tracked(Timed(step)), self._keep, self.backend, before=self._check_stop)

    def stop(self) -> None:
        """Stop every answer in flight and refuse new ones (they raise Stopped). Safe from a
        signal handler or any thread: it sets a flag and tells each backend to abort."""
        self.stopping.set()
        for b in (self._answerer, capabilities(self._answerer).fallthrough, self.fallback):
            abort = capabilities(b).abort
            if abort is not None:
                abort()

    def in_flight(self) -> list[tuple[str, str, float]]:
        """The questions being answered right now (agent, task, time.monotonic() it was asked):
        safe to read from any thread, so an interface can show that the model is working."""
        with self._lock:
            return list(self._in_flight.values())

    @property
    def last(self) -> CallRecord:
        return self._local.last

    @property
    def last_task(self) -> Task:
        """The last task this thread asked, as it was asked: fitted to the window, so what an
        answer cites by number ("because of 3", "tells 2") is numbered as in its prompt."""
        return self._local.task

    @last.setter
    def last(self, record: CallRecord) -> None:
        self._local.last = record

    def prepare(self, task: Task) -> tuple[Task, str, str]:
        """(the task as it will be asked, its prompt, a note): fitted to the backend's window."""
        can = capabilities(self.backend)
        asked, prompt, dropped = fit(task, can.context - max_answer_tokens(task), can.count)
        return asked, prompt, (f"{dropped} retrieved record{'s' if dropped > 1 else ''} dropped to fit the prompt's budgets"
                               if dropped else "")

    def ask(self, agent: str, task: Task) -> Output:
        from smalltown.llm.wrappers import Question

        self._check_stop()
        q = Question(agent, task, task_key(task))
        ans = self._step(q)
        self._local.task = q.task
        return ans.output

    def note(self, text: str) -> None:
        """Attach a note (a fallback, a rejected answer) to the last recorded call."""
        self.last.note = f"{self.last.note}; {text}" if self.last.note else text

    # --- the steps the wrappers compose ---

    def _fitted(self, q) -> Answer:
        """The question fitted to the backend's window, then asked (NotFitted if it cannot fit)."""
        from smalltown.llm.wrappers import NotFitted

        try:
            q.task, q.prompt, q.note = self.prepare(q.task)
        except PromptTooLong as e:
            raise NotFitted(str(e)) from None
        if capabilities(self.backend).keyed:
            return self._answerer.answer(q.task, q.prompt, key=q.key)
        return self._answerer.answer(q.task, q.prompt)

    def _tracked(self, step):
        """`step`, listed in `in_flight()` while it runs."""
        def tracked(q) -> Answer:
            me = threading.get_ident()
            with self._lock:
                self._in_flight[me] = (q.agent, q.task.name, time.monotonic())
            try:
                return step(q)
            finally:
                with self._lock:
                    self._in_flight.pop(me, None)
        return tracked

    def _check_stop(self) -> None:
        if self.stopping.is_set():  # (after an answer: whatever came back belongs to a dropped tick)
            raise Stopped

    def _keep(self, record: CallRecord) -> None:
        self.last = record
        self._record(record)
