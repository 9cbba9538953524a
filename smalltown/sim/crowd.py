"""The crowd: the tick's model work, asked at once. Each phase of a tick gathers every agent's
question (a reflection, a reaction, a conversation's next line, a next action) and hands the lot
to `Crowd.each`, which runs them on up to the backend's `max_concurrency` workers and gives the
results back in item order: the tick applies them in agent order, so a run is the same whatever
order the answers come back in, and at concurrency 1 the same calls are made in the same order."""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor, wait
from contextvars import copy_context
from typing import Callable, Sequence, TypeVar

from smalltown.llm.backend import Backend, Stopped, capabilities
from smalltown.sim import passes

T = TypeVar("T")
R = TypeVar("R")


class Crowd:
    def __init__(self, backend: Backend, stopping: Callable[[], bool]):
        self.backend = backend
        self.stopping = stopping
        self._pool: ThreadPoolExecutor | None = None
        self._workers = 0
        # counts the phases (and the stretches between them): the call log is ordered by phase, then
        # agent; the current pass's (sim/passes.py) while one runs, else this one (a command's)
        self._own = _Counter()

    def _counter(self) -> "passes.Pass | _Counter":
        return passes.current() or self._own

    @property
    def phase(self) -> int:
        return self._counter().phase

    @phase.setter
    def phase(self, value: int) -> None:
        self._counter().phase = value

    @property
    def workers(self) -> int:
        return max(1, capabilities(self.backend).max_concurrency)

    def each(self, items: Sequence[T], fn: Callable[[T], R]) -> list[R]:
        """fn(item) for every item, at once up to the backend's concurrency; results in item order.
        `fn` may touch only its own item's minds, and must not call `each` (the pool is not nested).
        Every item finishes (or the run stops) before this returns or raises: Stopped first, else
        the first failure in item order."""
        counter = self._counter()  # (read once: this is called ~4 times a tick)
        counter.phase += 1
        try:
            return self._each(items, fn)
        finally:
            counter.phase += 1

    def _each(self, items: Sequence[T], fn: Callable[[T], R]) -> list[R]:
        workers = min(len(items), self.workers)
        if workers <= 1:  # inline: the same calls, in the same order, as at any concurrency
            return [fn(x) for x in items]
        if self._pool is None or self._workers < workers:
            if self._pool is not None:
                self._pool.shutdown(wait=True)
            self._workers = max(workers, self.workers)
            self._pool = ThreadPoolExecutor(max_workers=self._workers, thread_name_prefix="mind")
        futures = [self._pool.submit(copy_context().run, fn, x) for x in items]  # (the pass goes along)
        while wait(futures, timeout=0.1).not_done:  # a stop does not wait on a stuck worker
            if self.stopping():
                raise Stopped
        failures = [f.exception() for f in futures if f.exception() is not None]
        for e in failures:
            if isinstance(e, Stopped):
                raise e
        if failures:
            raise failures[0]
        return [f.result() for f in futures]

    def submit(self, fn: Callable[[], R]) -> Future:
        """fn() on a worker, its result taken later (`result`: sim/later.py); inline at
        concurrency 1, where the same calls are made in the same order as on workers."""
        if self.workers <= 1:
            done: Future = Future()
            try:
                done.set_result(fn())
            except BaseException as e:  # (Stopped too: raised when the result is taken)
                done.set_exception(e)
            return done
        if self._pool is None or self._workers < self.workers:
            if self._pool is not None:
                self._pool.shutdown(wait=True)
            self._workers = self.workers
            self._pool = ThreadPoolExecutor(max_workers=self._workers, thread_name_prefix="mind")
        return self._pool.submit(copy_context().run, fn)

    def result(self, future: Future) -> R:
        """A submitted job's result, waited for without outwaiting a stop."""
        while wait([future], timeout=0.1).not_done:
            if self.stopping():
                raise Stopped
        return future.result()

    def close(self) -> None:
        if self._pool is not None:  # a stopped run does not wait on a worker stuck in a backend
            self._pool.shutdown(wait=not self.stopping(), cancel_futures=True)


class _Counter:
    """The crowd's phase counter outside any pass (a command's questions)."""

    phase = 0
