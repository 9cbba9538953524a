"""What happens around one attempt at an answer: retrying it, falling back, timing and logging it.

A backend makes one attempt (`answer(task, prompt)`: an Answer, an UnusableAnswer, or `Transient`
for a failed exchange). These small wrappers, composed by the Asker (`Asker.__init__`), add the
rest, as Concordia's language-model wrappers do around a model:

- `Retry` (a Backend around a Backend): bounded retries for transient failures and for unusable
  answers, by the backend's declared `RetryPolicy` (its backoff, whether the attempt number changes
  its seed, how its last failure is worded); tokens spent are summed across attempts.
- `Fallback`, `Timed`, `Recorded` (steps around a step): a step answers one `Question` on its way
  to the call log, which the wrappers annotate (why another backend answered, how long it took)
  and the last one records."""

from __future__ import annotations

import dataclasses
import json
import threading
import time
from dataclasses import dataclass
from typing import Callable, Optional

from smalltown.llm.backend import (Answer, Backend, BackendUnavailable, CallRecord, Capabilities, RetryPolicy, Stopped,
                                   capabilities)
from smalltown.llm.render import render
from smalltown.llm.tasks import Task
from smalltown.llm.validate import UnusableAnswer

__all__ = ["Fallback", "NotFitted", "Question", "Recorded", "Retry", "RetryPolicy", "Step", "Timed", "Transient",
           "retrying"]


# --- retrying one backend ------------------------------------------------------------------------


class Transient(BackendUnavailable):
    """One attempt that got no answer (a server that failed, timed out, is rate-limiting): retried
    when `retry`, after at least `wait` seconds; when the retries run out, `error(what + how many
    attempts)` is raised: the run cannot go on (as it cannot when a backend is used unretried)."""

    def __init__(self, what: str, error: type[BackendUnavailable] = BackendUnavailable, retry: bool = True,
                 wait: float = 0.0):
        super().__init__(what)
        self.what = what
        self.error = error
        self.retry = retry
        self.wait = wait


class Retry:
    """`backend`, retried by `policy`: a transient failure up to `retries` more times in a row (the
    count starts again once the backend answers, usable or not), an unusable answer up to `retries`
    more times; a prompt too long for the window is not retried (no attempt changes it)."""

    def __init__(self, backend: Backend, policy: RetryPolicy, stopping: threading.Event | None = None):
        self.inner = backend
        self.policy = policy
        self.name, self.model = backend.name, backend.model
        self._stopping = stopping or threading.Event()  # set by `abort`: a backoff wait ends at once
        self._local = threading.local()  # each thread's last question's attempts

    @property
    def can(self) -> Capabilities:
        return dataclasses.replace(capabilities(self.inner), retry=None, abort=self.abort)

    def abort(self) -> None:
        """Stop the backend, and a backoff wait in progress (it raises Stopped). Sets flags only."""
        self._stopping.set()
        inner = capabilities(self.inner).abort
        if inner is not None:
            inner()

    def attempts(self) -> list[dict]:
        """The attempts of the last question this thread asked (`Attempt` records, as dicts)."""
        return getattr(self._local, "attempts", [])

    def answer(self, task: Task, prompt: str, **kw) -> Answer:
        p = self.policy
        spent = [0, 0, 0]  # prompt, completion, cached tokens over every attempt: all were paid for
        failures = unusable = attempt = 0
        notes: list[str] = []  # what the attempts' backend noted (kept whichever attempt answers)
        log: list[dict] = []
        self._local.attempts = log  # for the call log (the Asker reads it once the question is done)
        while True:
            if p.seeded:
                kw["attempt"] = attempt
            attempt += 1
            t0 = time.perf_counter()
            try:
                ans = self.inner.answer(task, prompt, **kw)
            except Transient as e:
                log.append(attempt_record(attempt, t0, kind="failed", reason=e.what))
                failures += 1
                if not e.retry or failures > p.retries:
                    tries = f" (after {failures} attempts)" if failures > 1 else ""
                    error = e.error(f"{e.what}{tries}")
                    error.retried = e.retry  # a failure of the moment, retried: a Fallback may answer it
                    error.source = getattr(e, "source", "")  # (the server, of several: as an answer's `model`)
                    raise error from None
                if self._stopping.wait(max(p.backoff * 2 ** (failures - 1), min(e.wait, p.max_wait))):
                    raise Stopped
                continue
            except UnusableAnswer as e:
                log.append(attempt_record(attempt, t0, e.usage, e.kind, e.reason, e.raw))
                failures = 0  # the backend answered: a later failure gets the full budget again
                spent = [a + b for a, b in zip(spent, e.usage)]
                notes += [e.note] if e.note else []
                if e.kind == "too long":
                    raise
                unusable += 1
                if unusable > p.retries:
                    model = e.model
                    if p.count_attempts:
                        e = UnusableAnswer(f"{e.reason} ({unusable} attempts)", e.raw, kind=e.kind)
                    e.usage, e.note, e.model = (spent[0], spent[1], spent[2]), "; ".join(notes), model
                    raise e from None
                continue
            log.append(attempt_record(attempt, t0, (ans.prompt_tokens, ans.completion_tokens, ans.cached_tokens)))
            return dataclasses.replace(ans, prompt_tokens=ans.prompt_tokens + spent[0],
                                       completion_tokens=ans.completion_tokens + spent[1],
                                       cached_tokens=ans.cached_tokens + spent[2],
                                       note="; ".join(notes + ([ans.note] if ans.note else [])))


MAX_ATTEMPT_RAW = 2000  # characters of an attempt's raw answer kept in the call log's `attempts`


def attempt_record(n: int, t0: float, usage: tuple[int, int, int] = (0, 0, 0), kind: str = "", reason: str = "",
                   raw: str = "") -> dict:
    """One attempt, as the call log's `attempts` column lists it: its number (from 1), its tokens,
    its milliseconds, and, when it failed, why ("failed": no answer; else the unusable answer's
    kind: "invalid", "cut off", ... whatever kind a wrapper raised) and its raw answer (bounded)."""
    record = {"attempt": n, "prompt_tokens": usage[0], "completion_tokens": usage[1], "cached_tokens": usage[2],
              "ms": round((time.perf_counter() - t0) * 1000, 3)}
    if kind:
        record.update(kind=kind, reason=reason[:MAX_ATTEMPT_RAW], raw=raw[:MAX_ATTEMPT_RAW])
    return record


def logged_attempts(attempts: list[dict]) -> str:
    """The `attempts` column's value: JSON, when there was more than one attempt or one failed; ''."""
    return json.dumps(attempts) if len(attempts) > 1 or any(a.get("kind") for a in attempts) else ""


def retrying(backend: Backend) -> Backend:
    """`backend` with the retries it declares (itself, when it declares none or is retried already)."""
    policy = capabilities(backend).retry
    return Retry(backend, policy) if policy is not None and not isinstance(backend, Retry) else backend


# --- one question on its way to the call log -----------------------------------------------------


@dataclass
class Question:
    """One question as the wrappers pass it along, and what they learn of it for the call log."""

    agent: str
    task: Task  # as asked: fitted to the window (what an answer's citations are numbered against)
    key: str  # the question's identity: its task before fitting (backend.task_key)
    prompt: str = ""
    note: str = ""  # what happened beyond a plain answer: records dropped to fit, a fallback and why
    fallback: str = ""  # why another backend answered: "too long", "cut off", "invalid", "failed"
    ms: float = 0.0
    seed: int | None = None  # the question's sampling seed, when the backend samples (backend.question_seed)
    attempts: list[dict] = dataclasses.field(default_factory=list)  # each attempt (attempt_record), when retried


Step = Callable[[Question], Answer]


class NotFitted(UnusableAnswer):
    """The question cannot fit the backend's window (it was not asked): "too long"."""

    def __init__(self, reason: str):
        super().__init__(reason, "", kind="too long")


GONE_AFTER = 3  # questions in a row whose every attempt failed: the backend is gone, the run stops


class Fallback:
    """`step`, with `backend` answering what it cannot: a question too long for its window (asked
    whole, unfitted), an answer it gave up on (whose raw text and cost stay in the log), or a
    question whose every attempt failed for a reason of the moment (a server's HTTP 500, a
    timeout: "failed") -- unless `gone_after` questions in a row have failed so, with no answer
    between from the same server (of several: the failure's `source` and the answer's `model`
    name it, "MODEL @ URL"): then it is gone and its error stops the run, as does a failure that
    retrying cannot mend (a refused request, a redirect)."""

    def __init__(self, step: Step, backend: Backend, gone_after: int = GONE_AFTER):
        self.step = step
        self.backend = backend
        self.gone_after = gone_after
        self._failed: dict[str, int] = {}  # questions failed in a row, by server (across the threads that ask)
        self._lock = threading.Lock()

    def __call__(self, q: Question) -> Answer:
        asked = q.task
        try:
            ans = self.step(q)
        except BackendUnavailable as e:
            if not getattr(e, "retried", False):
                raise
            source = getattr(e, "source", "")
            with self._lock:
                self._failed[source] = self._failed.get(source, 0) + 1
                gone = self._failed[source] >= self.gone_after
            if gone:
                raise type(e)(f"{e} ({self.gone_after} questions in a row failed: the backend is gone)") from None
            ans = self.backend.answer(q.task, q.prompt)
            q.fallback = "failed"
            q.note = "; ".join(x for x in (q.note, f"fallback to {self.backend.name}: {e}") if x)
            spent = [sum(a.get(k, 0) for a in q.attempts) for k in ("prompt_tokens", "completion_tokens", "cached_tokens")]
            return dataclasses.replace(ans, raw="", prompt_tokens=spent[0], completion_tokens=spent[1],
                                       cached_tokens=spent[2], model=source)  # (what its attempts cost)
        except NotFitted as e:
            q.task, q.prompt, q.note, q.fallback = asked, render(asked), f"error: {e}", "too long"
            return self.backend.answer(q.task, q.prompt)
        except UnusableAnswer as e:
            self._answered(e.model)  # (the server answered, if not usably)
            ans = self.backend.answer(q.task, q.prompt)
            q.fallback = e.kind
            q.note = "; ".join(x for x in (q.note, e.note, f"fallback to {self.backend.name}: {e.reason}") if x)
            # what the model said stays in the log, and what the failed attempts cost is still counted
            return dataclasses.replace(ans, raw=e.raw, prompt_tokens=e.usage[0], completion_tokens=e.usage[1],
                                       cached_tokens=e.usage[2], model=e.model)
        self._answered(ans.model)
        return ans

    def _answered(self, source: str) -> None:
        with self._lock:
            self._failed.pop(source or "", None)


class Timed:
    """`step`, its wall time (fitting included, when the step fits) kept as the question's `ms`."""

    def __init__(self, step: Step):
        self.step = step

    def __call__(self, q: Question) -> Answer:
        t0 = time.perf_counter()
        ans = self.step(q)
        q.ms = round((time.perf_counter() - t0) * 1000, 3)
        return ans


class Recorded:
    """`step`, each answered question handed to `record` as a CallRecord, under `backend`'s name."""

    def __init__(self, step: Step, record: Callable[[CallRecord], None], backend: Backend,
                 before: Optional[Callable[[], None]] = None):
        self.step = step
        self.record = record
        self.backend = backend
        self.before = before  # called once answered, before recording (may raise: nothing is recorded)

    def __call__(self, q: Question) -> Answer:
        ans = self.step(q)
        q.note = "; ".join(x for x in (q.note, ans.note) if x)  # (a fallback's answer carries none)
        if self.before is not None:
            self.before()
        self.record(CallRecord(
            agent=q.agent, task=q.task.name, prompt=q.prompt, raw_answer=ans.raw,
            parsed_answer=ans.output.model_dump_json(), prompt_tokens=ans.prompt_tokens,
            completion_tokens=ans.completion_tokens, cached_tokens=ans.cached_tokens, ms=q.ms,
            backend=self.backend.name, model=ans.model or self.backend.model, note=q.note, key=q.key, fallback=q.fallback,
            attempts=logged_attempts(q.attempts)))
        return ans
