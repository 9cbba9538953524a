"""The cassette backend: answers recorded in an earlier run's call log, replayed.

Keyed by task and prompt: a run with the same inputs asks the same questions in the same order
and gets the same answers, with zero model calls. A question the cassette lacks is reported
clearly, or answered by a live backend when one is given (`fallthrough`)."""

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

    def __init__(self, save_path: str | Path, fallthrough: Backend | None = None):
        path = Path(save_path)
        if not path.exists():
            raise CassetteMiss(f"{path}: no such save to replay answers from")
        self.model = f"cassette:{path.name}"
        self.fallthrough = fallthrough
        self.replayed = 0
        self.missed = 0
        self._answers: dict[tuple[str, str], deque[str]] = defaultdict(deque)
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            rows = conn.execute("SELECT task, prompt, parsed_answer FROM llm_calls ORDER BY id").fetchall()
        except sqlite3.DatabaseError as e:
            raise CassetteMiss(f"{path}: not a smalltown save with a call log ({e})") from None
        finally:
            conn.close()
        for task, prompt, parsed in rows:
            self._answers[(task, prompt)].append(parsed)
        self.recorded = len(rows)

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
