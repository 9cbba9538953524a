"""The cassette backend: answers recorded in an earlier run's call log, replayed.

Keyed by task and prompt: a run with the same inputs asks the same questions in the same order
and gets the same answers, with zero model calls. A question the cassette lacks is reported
clearly, or answered by a live backend when one is given (`fallthrough`).

A run continued from tick T (a resumed save, or a fork of the recorded run) has asked its questions
up to T already: the cassette then replays only the calls recorded after T (`after_tick`, or
`start_after`, which Simulation.open calls with the tick it opens at)."""

from __future__ import annotations

import sqlite3
from collections import defaultdict, deque
from pathlib import Path

from smalltown.llm.backend import Answer, Backend, BackendUnavailable
from smalltown.llm.tasks import Task


class CassetteMiss(BackendUnavailable):
    """The cassette has no recorded answer for a question (the run's inputs differ)."""


class CassetteBackend:
    name = "cassette"

    def __init__(self, save_path: str | Path, fallthrough: Backend | None = None, after_tick: int = -1):
        path = Path(save_path)
        if not path.exists():
            raise CassetteMiss(f"{path}: no such save to replay answers from")
        self.model = f"cassette:{path.name}"
        self.fallthrough = fallthrough
        self.replayed = 0
        self.missed = 0
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            rows = conn.execute("SELECT tick, task, prompt, parsed_answer FROM llm_calls ORDER BY id").fetchall()
        except sqlite3.DatabaseError as e:
            raise CassetteMiss(f"{path}: not a smalltown save with a call log ({e})") from None
        finally:
            conn.close()
        self._rows = rows
        self.start_after(after_tick)

    def start_after(self, tick: int) -> None:
        """Replay only the calls recorded after `tick` (the run has asked the earlier ones)."""
        self.after_tick = tick
        self._answers: dict[tuple[str, str], deque[str]] = defaultdict(deque)
        n = 0
        for t, task, prompt, parsed in self._rows:
            if t > tick:
                self._answers[(task, prompt)].append(parsed)
                n += 1
        self.recorded = n

    def answer(self, task: Task, prompt: str) -> Answer:
        queue = self._answers.get((task.name, prompt))
        if queue:
            parsed = queue.popleft()
            self.replayed += 1
            return Answer(output=task.output.model_validate_json(parsed), raw=parsed)
        self.missed += 1
        if self.fallthrough is not None:
            return self.fallthrough.answer(task, prompt)
        first = prompt.strip().splitlines()[-1][:120] if prompt.strip() else ""
        raise CassetteMiss(
            f"the cassette has no answer for a {task.name!r} question ({first!r}); the run's "
            f"inputs differ from the recorded ones — pass --fallthrough BACKEND to answer live")
