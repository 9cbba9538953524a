"""The wrappers around one attempt (llm/wrappers.py), on their own: a backend that fails as told,
then answers, is retried by the policy it declares; the Asker composes the retries, the fallback,
the timing and the call log around it."""

from __future__ import annotations

import threading
import time

import pytest
from realistic import realistic_tasks

from smalltown.llm.render import render
from smalltown.llm.asker import Asker
from smalltown.llm.backend import Answer, BackendUnavailable, Capabilities, Stopped
from smalltown.llm.tasks import Task
from smalltown.llm.validate import UnusableAnswer
from smalltown.llm.wrappers import Retry, RetryPolicy, Transient, retrying
from smalltown.scripted import ScriptedBackend


class Down(BackendUnavailable):
    """The error a backend gives up with once its retries are spent."""


class Flaky:
    """Fails as its script says, one failure per attempt, then answers as the stand-in would:
    "down" is a transient failure, "bad" an unusable answer costing (10, 2, 5) tokens, "long" a
    prompt too long for its window, "refused" a failure not worth retrying."""

    name, model = "flaky", "flaky-1"

    def __init__(self, *script: str, policy: RetryPolicy | None = None, wait: float = 0.0):
        self.script = list(script)
        self.policy = policy
        self.wait = wait
        self.attempts: list[dict] = []  # the keywords each attempt was given

    @property
    def can(self) -> Capabilities:
        return Capabilities(retry=self.policy)

    def answer(self, task: Task, prompt: str, **kw) -> Answer:
        self.attempts.append(kw)
        what = self.script.pop(0) if self.script else "ok"
        if what == "down":
            raise Transient(f"flaky is down (attempt {len(self.attempts)})", Down, wait=self.wait)
        if what == "refused":
            raise Transient("flaky refuses", Down, retry=False)
        if what in ("bad", "long"):
            e = UnusableAnswer(f"{what} answer {len(self.attempts)}", f"raw {len(self.attempts)}",
                               kind="too long" if what == "long" else "invalid")
            e.usage = (10, 2, 5)
            raise e
        ans = ScriptedBackend(0).answer(task, prompt)
        ans.prompt_tokens, ans.completion_tokens, ans.cached_tokens = 100, 20, 50
        return ans


TASK = realistic_tasks()["object_state"]


def answer(backend, retries: int = 2, **policy) -> Answer:
    return Retry(backend, RetryPolicy(retries, **policy)).answer(TASK, render(TASK))


def test_transient_failures_are_retried_then_given_up_with_the_backends_error():
    assert answer(b := Flaky("down", "down")).output.state and len(b.attempts) == 3
    with pytest.raises(Down, match=r"flaky is down \(attempt 3\) \(after 3 attempts\)$"):
        answer(b := Flaky("down", "down", "down"))
    assert len(b.attempts) == 3
    with pytest.raises(Down, match="flaky refuses$"):  # not worth retrying: one attempt, no count
        answer(b := Flaky("refused"))
    assert len(b.attempts) == 1


def test_the_failure_count_starts_again_once_the_backend_answers():
    """Down, then an unusable answer (the server is up), then down again: each run of failures
    gets the whole budget; unusable answers have their own."""
    ans = answer(b := Flaky("down", "bad", "down", "bad", "down"), retries=2)
    assert ans.output.state and len(b.attempts) == 6


def test_unusable_answers_are_retried_and_every_attempt_is_paid_for():
    ans = answer(Flaky("bad", "bad"))
    assert (ans.prompt_tokens, ans.completion_tokens, ans.cached_tokens) == (120, 24, 60)
    with pytest.raises(UnusableAnswer) as e:
        answer(Flaky("bad", "bad", "bad"))
    assert e.value.reason == "bad answer 3" and e.value.raw == "raw 3" and e.value.usage == (30, 6, 15)
    with pytest.raises(UnusableAnswer) as e:  # llama's wording: how many attempts it took
        answer(Flaky("bad", "bad", "bad"), count_attempts=True)
    assert e.value.reason == "bad answer 3 (3 attempts)" and e.value.kind == "invalid"


def test_a_prompt_too_long_is_not_retried():
    with pytest.raises(UnusableAnswer) as e:
        answer(b := Flaky("long"))
    assert e.value.kind == "too long" and len(b.attempts) == 1


def test_a_seeded_backend_is_told_each_attempt_number():
    answer(b := Flaky("bad", "bad"), seeded=True)
    assert b.attempts == [{"attempt": 0}, {"attempt": 1}, {"attempt": 2}]
    answer(b := Flaky("bad"))
    assert b.attempts == [{}, {}]


def test_the_backoff_doubles_honours_a_servers_wait_up_to_a_cap_and_ends_on_abort():
    t0 = time.perf_counter()
    answer(Flaky("down", "down"), backoff=0.05)  # 0.05 + 0.1
    assert 0.15 <= time.perf_counter() - t0 < 1.0
    t0 = time.perf_counter()
    answer(Flaky("down", wait=60.0), max_wait=0.2)  # the server asks for a minute: the cap holds
    assert 0.2 <= time.perf_counter() - t0 < 1.0
    r = Retry(Flaky("down", wait=60.0), RetryPolicy(1, max_wait=60.0))
    threading.Timer(0.2, r.can.abort).start()
    t0 = time.perf_counter()
    with pytest.raises(Stopped):
        r.answer(TASK, render(TASK))
    assert time.perf_counter() - t0 < 5.0


def test_retrying_wraps_what_declares_a_policy_once():
    plain = Flaky()
    assert retrying(plain) is plain
    r = retrying(Flaky(policy=RetryPolicy(1)))
    assert isinstance(r, Retry) and retrying(r) is r and r.can.retry is None
    assert (r.name, r.model) == ("flaky", "flaky-1")


def test_the_asker_retries_falls_back_and_logs_what_happened():
    records = []
    asker = Asker(Flaky("down", "bad", policy=RetryPolicy(2)), records.append, fallback=ScriptedBackend(0))
    asker.ask("Klaus Mueller", TASK)
    r = records[-1]
    assert (r.backend, r.model, r.fallback, r.note) == ("flaky", "flaky-1", "", "")
    assert (r.prompt_tokens, r.completion_tokens, r.cached_tokens) == (110, 22, 55) and r.ms >= 0
    asker = Asker(Flaky("bad", "bad", policy=RetryPolicy(1)), records.append, fallback=ScriptedBackend(0))
    assert asker.ask("Klaus Mueller", TASK) == ScriptedBackend(0).answer(TASK, render(TASK)).output
    r = records[-1]
    assert r.fallback == "invalid" and r.note == "fallback to scripted: bad answer 2" and r.raw_answer == "raw 2"
    assert (r.prompt_tokens, r.completion_tokens, r.cached_tokens) == (20, 4, 10)
    with pytest.raises(Down):  # a backend that cannot answer is not a model answer: no fallback
        Asker(Flaky("refused", policy=RetryPolicy(1)), records.append, fallback=ScriptedBackend(0)).ask(
            "Klaus Mueller", TASK)
    assert len(records) == 2


def test_a_stop_ends_the_askers_backoff_and_nothing_is_logged():
    records = []
    asker = Asker(Flaky("down", wait=60.0, policy=RetryPolicy(1, max_wait=60.0)), records.append)
    threading.Timer(0.2, asker.stop).start()
    with pytest.raises(Stopped):
        asker.ask("Klaus Mueller", TASK)
    assert records == [] and asker.in_flight() == []
