"""The Backend seam: anything that can answer a Task, what it declares it can do, what a call records.
Every call goes through the Asker (llm/asker.py)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Callable, Optional, Protocol

from smalltown.llm.fit import estimate, estimate_chars
from smalltown.llm.tasks import RULES, Answer, Task
from smalltown.store.records import CallRecord

__all__ = ["Answer", "Backend", "BackendUnavailable", "CallRecord", "Capabilities", "DEFAULT_CONTEXT", "RetryPolicy",
           "Stopped", "capabilities", "question_seed"]

SEED_BITS = 31  # a seed every server takes (llama.cpp's is 32-bit unsigned, some servers' signed)

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
class RetryPolicy:
    """How a backend's attempts are retried (declared in its Capabilities, `retry`)."""

    retries: int = 0  # attempts after the first, for transient failures and again for unusable answers
    backoff: float = 0.0  # seconds before the first retry of a transient failure, doubled each time
    max_wait: float = 30.0  # the most a server's own wait (Retry-After) holds us up
    seeded: bool = False  # the attempt number is passed on (`attempt=`): another seed, another sample
    count_attempts: bool = False  # the last unusable answer's reason ends with "(N attempts)"


@dataclass(frozen=True)
class Capabilities:
    """What a backend can do beyond `answer`, declared by the backend (its `can`), so that those
    who use it read fields instead of probing it for attributes."""

    context: int = DEFAULT_CONTEXT  # tokens the model's window holds: prompt and answer
    count: Optional[Callable[[str], int]] = None  # the exact tokens of a prompt as sent (else estimated)
    keyed: bool = False  # `answer` takes `key=`, the question's typed-input key (a cassette replays by it)
    pinned: bool = False  # `answer` takes `agent=`, who asks (several servers: each agent's go to one)
    max_concurrency: int = 1  # questions it answers at once (a server): the sim's worker threads
    fallthrough: Optional["Backend"] = None  # a live backend it hands the questions it lacks to
    connect: Optional[Callable[[], None]] = None  # reach it before a run writes anything
    # end the answers in flight now (they raise Stopped) and refuse new ones; called from a
    # signal handler or another thread, so it takes no lock
    abort: Optional[Callable[[], None]] = None
    start_after: Optional[Callable[[int], None]] = None  # a run continued from a tick: skip what came before
    close: Optional[Callable[[], None]] = None  # let go of what it holds (a loaded model)
    retry: Optional[RetryPolicy] = None  # how its attempts are retried (llm/wrappers.py), if at all
    about: str = ""  # how it answers, for a run's start-up line (a server's structured-output mode)
    # the run's sampling seed, when it samples: `answer` then takes `seed=`, each question's own
    # (`question_seed`), so an answer does not depend on which thread asked first
    seed: Optional[int] = None


NOTHING = Capabilities()


def capabilities(backend: Backend | None) -> Capabilities:
    """What `backend` declares it can do (nothing beyond answering, when it declares nothing)."""
    can = getattr(backend, "can", None)  # the one look-up: test fakes and stand-ins declare nothing
    return can if isinstance(can, Capabilities) else NOTHING


def estimate_prompt(prompt: str) -> int:
    """Tokens of a prompt as sent (the rules, the prompt, a chat template's markers), estimated."""
    return estimate_sent(len(prompt))


def estimate_sent(chars: int) -> int:
    """`estimate_prompt` of a prompt of `chars` characters (as the call log keeps it)."""
    return estimate(RULES) + estimate_chars(chars) + 16


def task_key(task: Task) -> str:
    """A question's identity: its typed inputs before fitting (what a cassette replays by)."""
    return hashlib.sha256(f"{task.name}\n{task.model_dump_json()}".encode()).hexdigest()[:32]




def question_seed(run_seed: int, agent: str, task: str, tick: int) -> int:
    """The sampling seed of one question: a stable hash (not Python's `hash`, which varies between
    processes) of the run's seed, who asks, what and at which tick. The same question at the same
    tick samples alike in every run, whatever the concurrency; two agents sample differently.
    (Derived from the call log's own columns, so the log needs no column for it.)"""
    text = f"{run_seed}\x1f{agent}\x1f{task}\x1f{tick}".encode()
    return int.from_bytes(hashlib.sha256(text).digest()[:8], "big") % (1 << SEED_BITS)
