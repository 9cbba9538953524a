"""Prompts that fit: a task's retrieved records dropped, lowest score first, until its prompt and
its answer's budget fit the backend's context window.

Only the fields a task names in `trim` are cut (memories retrieved for it); what defines the
question (the persona, the observation, the conversation so far) is never cut. A prompt that
still does not fit is a `PromptTooLong`: the asker logs it as an error, it is not silently
answered by something else.
"""

from __future__ import annotations

import math
from typing import Callable

from smalltown.llm.render import record
from smalltown.llm.tasks import Task

Counter = Callable[[str], int]


class PromptTooLong(Exception):
    def __init__(self, tokens: int, budget: int, task: str):
        super().__init__(f"the {task} prompt is {tokens} tokens with nothing left to drop; "
                         f"{budget} fit beside the answer's budget")
        self.tokens, self.budget = tokens, budget


def estimate(text: str) -> int:
    """Tokens for a backend without a tokenizer: a cautious 3 characters a token (English runs
    about 4; names, quotes and times run shorter)."""
    return math.ceil(len(text) / 3)


def fit(task: Task, budget: int, count: Counter) -> tuple[Task, str, int]:
    """(the task as asked, its prompt, how many records were dropped to fit `budget` tokens)."""
    prompt = task.render()
    used = count(prompt)
    if used <= budget:
        return task, prompt, 0
    # candidates, first to go first: lowest score, then oldest, then lowest id
    pool = sorted(((r.score, r.time, r.id, field, i) for field in task.trim
                   for i, r in enumerate(getattr(task, field))), key=lambda c: c[:3])
    gone: set[tuple[str, int]] = set()
    while used > budget:
        left = [c for c in pool if (c[3], c[4]) not in gone]
        if not left:
            raise PromptTooLong(used, budget, task.name)
        excess, saved = used - budget, 0
        for c in left:  # drop until the estimated saving covers the excess
            gone.add((c[3], c[4]))
            saved += count(record(getattr(task, c[3])[c[4]])) + 2
            if saved >= excess:
                break
        kept = {f: [r for i, r in enumerate(getattr(task, f)) if (f, i) not in gone] for f in task.trim}
        trimmed = task.model_copy(update=kept)
        prompt = trimmed.render()
        used = count(prompt)
    return trimmed, prompt, len(gone)
