"""The stand-in's answers, found through the task: each scripted module registers the function
that answers a task type (`@answers(TaskType)`), and the backend looks the task's type up here.
A handler is given the task and the run's seed (the same seed and inputs, the same answer)."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Callable, Iterator

from smalltown.llm.tasks import Output, Task

Handler = Callable[[Task, int], Output]  # (the task, the run's seed) -> its answer

HANDLERS: dict[type[Task], Handler] = {}


def answers(*kinds: type[Task]) -> Callable[[Handler], Handler]:
    """Register the decorated function as the stand-in's answer to each task type in `kinds`."""
    def register(handler: Handler) -> Handler:
        for kind in kinds:
            if kind in HANDLERS:
                raise ValueError(f"the stand-in answers {kind.__name__} already ({HANDLERS[kind].__qualname__})")
            HANDLERS[kind] = handler
        return handler
    return register


@contextmanager
def answering(kind: type[Task], handler: Handler) -> Iterator[None]:
    """`handler` registered for the block only (a task a test declares)."""
    answers(kind)(handler)
    try:
        yield
    finally:
        del HANDLERS[kind]


def handler(kind: type[Task]) -> Handler:
    try:
        return HANDLERS[kind]
    except KeyError:
        raise KeyError(f"the stand-in has no answer for {kind.__name__} (register one with "
                       f"smalltown.scripted.registry.answers)") from None
