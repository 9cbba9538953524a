"""The cassette backend: answers recorded in an earlier run's call log, replayed.

Keyed by task and question: a run with the same inputs asks the same questions in the same order
and gets the same answers, with zero model calls. A question is its key (`backend.task_key`, a
hash of its typed inputs, in the call log since save schema 4), or, in an older save without
keys, its prompt. A question the cassette lacks is reported clearly, or answered by a live
backend when one is given (`fallthrough`).

The key recorded is the question's before the Asker fitted it; the Asker hands it to the cassette
(`keyed`). The question itself is fitted as it was when recorded: which records a question keeps
is decided the same way for every backend (llm/fit.py), within the window the recording had
(`context`, 4096 unless `--ctx` says otherwise), so a replayed answer's citations ("tells 3",
"because of 2") point at the same records.

A run continued from tick T (a resumed save, or a fork of the recorded run) has asked its questions
up to T already: the cassette then replays only the calls recorded after T (`after_tick`, or
`start_after`, which `sim.open.resume` calls with the tick it opens at)."""

from __future__ import annotations

from collections import defaultdict, deque
from pathlib import Path

from pydantic import ValidationError

from smalltown.llm.backend import DEFAULT_CONTEXT, Answer, Backend, BackendUnavailable, Capabilities, capabilities, task_key
from smalltown.llm.schema import max_answer_tokens
from smalltown.llm.tasks import TASKS, Task
from smalltown.llm.validate import UnusableAnswer
from smalltown.store.errors import SaveError
from smalltown.store.save import open_reader

class CassetteMiss(BackendUnavailable):
    """The cassette has no recorded answer for a question (the run's inputs differ)."""


class CassetteBackend:
    name = "cassette"

    def __init__(self, save_path: str | Path, fallthrough: Backend | None = None, after_tick: int = -1,
                 context: int = DEFAULT_CONTEXT):
        self.context = context  # the recording's window
        path = Path(save_path)
        if not path.exists():
            raise CassetteMiss(f"{path}: no such save to replay answers from")
        if not path.is_file():  # a folder (SQLite would say "disk I/O error")
            raise CassetteMiss(f"{path}: not a save file (--from names the save whose answers to replay)")
        self.model = f"cassette:{path.name}"
        self.fallthrough = fallthrough
        self.replayed = 0
        self.missed = 0
        try:  # opened as every command opens a save: schema untrusted, rows checked (store/validate.py)
            reader = open_reader(path)
        except SaveError as e:
            raise CassetteMiss(f"--from: {e}") from None
        try:
            keyed = reader.meta("schema_version") >= 4
            rows = reader.recorded_calls()
        finally:
            reader.close()
        for rid, _tick, task, _key, _prompt, parsed in rows:  # each answer fits its question, checked now
            problem = _unusable(task, parsed)
            if problem:
                raise CassetteMiss(f"--from {path}: refusing it as a cassette: llm_calls row {rid}: "
                                   f"parsed_answer: {problem}")
        rows = [r[1:] for r in rows]
        self.keyed = True  # `answer` takes the question's key (the save's keys: schema 4 on)
        self._has_keys = keyed
        self._rows = rows
        self.start_after(after_tick)

    @property
    def can(self) -> Capabilities:
        return Capabilities(context=self.context, keyed=True, fallthrough=self.fallthrough,
                            start_after=self.start_after, seed=capabilities(self.fallthrough).seed,
                            pinned=capabilities(self.fallthrough).pinned)

    def start_after(self, tick: int) -> None:
        """Replay only the calls recorded after `tick` (the run has asked the earlier ones)."""
        self.after_tick = tick
        # a call with a key is found by its key; one without (recorded before keys were) by its prompt
        self._answers: dict[tuple[str, str, str], deque[str]] = defaultdict(deque)
        n = 0
        for t, task, key, prompt, parsed in self._rows:
            if t > tick:
                self._answers[(task, "key", key) if key else (task, "prompt", prompt)].append(parsed)
                n += 1
        self.recorded = n

    def answer(self, task: Task, prompt: str, key: str | None = None, seed: int | None = None,
               agent: str | None = None) -> Answer:
        queue = (self._answers.get((task.name, "key", key or task_key(task))) if self._has_keys else None) \
            or self._answers.get((task.name, "prompt", prompt))
        if queue:
            parsed = queue.popleft()
            self.replayed += 1
            # the recorded answer was valid for its question, which this one is: its model suffices
            return Answer(output=task.output.model_validate_json(parsed), raw=parsed)
        self.missed += 1
        if self.fallthrough is not None:
            return self._live(task, prompt, seed, agent)
        first = prompt.strip().splitlines()[-1][:120] if prompt.strip() else ""
        raise CassetteMiss(
            f"the cassette has no answer for a {task.name!r} question ({first!r}); the run's "
            f"inputs differ from the recorded ones — pass --fallthrough BACKEND to answer live")

    def _live(self, task: Task, prompt: str, seed: int | None = None, agent: str | None = None) -> Answer:
        """The fallthrough's answer, to the question as the cassette was asked it (the mind reads
        an answer's citations against it): one too long for the live backend's own window is an
        UnusableAnswer, "too long", which the Asker's fallback answers."""
        live = self.fallthrough
        can = capabilities(live)
        if can.count is not None:  # (one without a tokenizer is not counted: the stand-in)
            need, context = can.count(prompt) + max_answer_tokens(task), can.context
            if need > context:
                raise UnusableAnswer(f"the {task.name} prompt and its answer need {need} tokens; "
                                     f"{live.name}'s window holds {context}", "", kind="too long")
        # the live backend samples with the question's seed, as it would without the cassette
        # (and goes to its agent's server, when the live backend pins agents to several)
        kw = {**({} if seed is None else {"seed": seed}), **({"agent": agent} if can.pinned else {})}
        return live.answer(task, prompt, **kw)


def _unusable(task: str, parsed: str | None) -> str | None:
    """Why a recorded answer cannot be replayed for its task (or None): a stranger's call log."""
    kind = TASKS.get(task)
    if kind is None:
        return None  # a task this smalltown does not ask: never looked up
    if parsed is None:
        return "no answer recorded"
    try:
        kind.output.model_validate_json(parsed)
    except ValidationError as e:
        err = e.errors()[0]
        return f"not a {task!r} answer ({'.'.join(map(str, err['loc'])) or 'the answer'}: {err['msg']})"
    return None
