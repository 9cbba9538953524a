"""The Asker, which every question goes through: it fits the question to the backend's window and
composes the wrappers around the backend's one attempt (llm/wrappers.py: retries, the fallback,
timing, the call log); it tracks the questions in flight, and stops them."""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from typing import Callable, Iterator

from smalltown.llm.backend import Backend, CallRecord, Stopped, capabilities, question_seed, task_key
from smalltown.llm.fit import PromptTooLong, fit
from smalltown.llm.own import checked
from smalltown.llm.schema import max_answer_tokens
from smalltown.llm.tasks import Answer, Output, Task
from smalltown.llm.wrappers import Fallback, NotFitted, Question, Recorded, Retry, Step, Timed, retrying


def dropped_note(task: Task, asked: Task, dropped: int) -> str:
    """What a call's note says of the records fitting dropped, naming those not retrieved apart
    (a retrieved record dropped has its retrieval logged at the call's tick; the others have none)."""
    if not dropped:
        return ""
    parts, other = [], 0
    for field, label in task.unretrieved.items():
        n = len(getattr(task, field)) - len(getattr(asked, field))
        if n > 0:
            parts.append(f"{n} " + label.format(s="s" if n > 1 else ""))
            other += n
    if dropped > other:
        parts.insert(0, f"{dropped - other} retrieved record{'s' if dropped - other > 1 else ''}")
    return " and ".join(parts) + " dropped to fit the prompt's budgets"


def call_ref(tick: int, key: str) -> dict:
    """A call as an action's provenance names it, known when it is asked (the log's row id is not,
    until the tick is written): the tick it was asked at and its key (backend.task_key). Its row
    is the asking agent's first logged call of that key at or after that tick (a question decided
    ahead, or a slow one, is logged at the later tick it is taken up)."""
    return {"tick": tick, "key": key}


class Asker:
    """What the mind holds: fits a task to the backend's window and asks it, through the wrappers
    that retry it, fall back, time and record the call (llm/wrappers.py, composed here); tracks
    the questions in flight, and stops them.

    A run never stops on a model answer: when the backend gives up on a task (UnusableAnswer,
    after its bounded retries) or the prompt cannot fit its window, the fallback backend answers
    it (the scripted one, by default), and the call log says so and why."""

    def __init__(self, backend: Backend, record: Callable[[CallRecord], None], fallback: Backend | None = None,
                 tick: Callable[[], int] = lambda: 0):
        self.backend = backend
        self._tick = tick  # the run's tick now: a question's seed depends on it (backend.question_seed)
        self._answerer = retrying(checked(backend, tick))  # checked answers, retried as its policy allows
        self._record = record
        self._local = threading.local()  # agents may ask at once, from worker threads
        self._lock = threading.Lock()
        self._in_flight: dict[int, tuple[str, str, float]] = {}  # thread -> (agent, task, started)
        self.stopping = threading.Event()  # set once by stop(): no question is answered after it
        self.answered = 0  # questions that have come back (answered, fallen back or failed): a run's rate
        self.fallback = fallback

    @property
    def fallback(self) -> Backend | None:
        return self._fallback

    @fallback.setter
    def fallback(self, backend: Backend | None) -> None:
        """Who answers what the backend cannot; the wrappers are composed again around it."""
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
        return asked, prompt, dropped_note(task, asked, dropped)

    def ask(self, agent: str, task: Task) -> Output:
        self._check_stop()
        q = Question(agent, task, task_key(task))
        tick = self._tick()
        ans = self._step(q)
        self._local.task = q.task
        self._local.ref = ref = call_ref(tick, q.key)
        for trail in getattr(self._local, "trails", ()):
            trail.append(ref)
        return ans.output

    @property
    def last_ref(self) -> dict:
        """The last call this thread made, as an action's provenance names it (`call_ref`)."""
        return self._local.ref

    @contextmanager
    def trail(self) -> Iterator[list[dict]]:
        """The calls this thread makes inside the block, as `call_ref`s, in order (nests)."""
        trails = self._local.__dict__.setdefault("trails", [])
        calls: list[dict] = []
        trails.append(calls)
        try:
            yield calls
        finally:
            del trails[next(i for i, t in enumerate(trails) if t is calls)]

    def note(self, text: str) -> None:
        """Attach a note (a fallback, a rejected answer) to the last recorded call."""
        self.last.note = f"{self.last.note}; {text}" if self.last.note else text

    # --- the steps the wrappers compose ---

    def _fitted(self, q: Question) -> Answer:
        """The question fitted to the backend's window, then asked (NotFitted if it cannot fit)."""
        try:
            q.task, q.prompt, q.note = self.prepare(q.task)
        except PromptTooLong as e:  # (whose question: the agent, where a bug report starts)
            raise NotFitted(f"{q.agent}: {e}" if q.agent else str(e)) from None
        can = capabilities(self.backend)
        kw: dict = {"key": q.key} if can.keyed else {}
        if can.pinned:
            kw["agent"] = q.agent
        if can.seed is not None:
            q.seed = kw["seed"] = question_seed(can.seed, q.agent, q.task.name, self._tick())
        try:
            return self._answerer.answer(q.task, q.prompt, **kw)
        finally:  # (answered or not: what each attempt cost and why it failed, for the call log)
            q.attempts = self._answerer.attempts() if isinstance(self._answerer, Retry) else []

    def _tracked(self, step: Step) -> Step:
        """`step`, listed in `in_flight()` while it runs."""
        def tracked(q: Question) -> Answer:
            me = threading.get_ident()
            with self._lock:
                self._in_flight[me] = (q.agent, q.task.name, time.monotonic())
            try:
                return step(q)
            finally:
                with self._lock:
                    self._in_flight.pop(me, None)
                    self.answered += 1
        return tracked

    def _check_stop(self) -> None:
        if self.stopping.is_set():  # (after an answer: whatever came back belongs to a dropped tick)
            raise Stopped

    def _keep(self, record: CallRecord) -> None:
        self.last = record
        self._record(record)
