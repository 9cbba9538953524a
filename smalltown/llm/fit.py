"""Prompts that fit: a task's retrieved records dropped, lowest score first, until each list is
within its own budget and the prompt and its answer's budget fit the backend's context window.

Only the fields a task names in `trim` are cut (memories retrieved for it); what defines the
question (the persona, the observation, the conversation so far) is never cut. A prompt that
still does not fit is a `PromptTooLong`: the asker logs it as an error, it is not silently
answered by something else.
"""

from __future__ import annotations

import math
from typing import Callable

from smalltown.llm.render import render
from smalltown.llm.render_parts import record
from smalltown.llm.tasks import RULES, Task

Counter = Callable[[str], int]


class PromptTooLong(Exception):
    def __init__(self, tokens: int, budget: int, task: str):
        super().__init__(f"the {task} prompt is {tokens} tokens with nothing left to drop; "
                         f"{budget} fit beside the answer's budget")
        self.tokens, self.budget = tokens, budget


def estimate(text: str) -> int:
    """Tokens for a backend without a tokenizer: a cautious 2.5 characters a token (English prose
    runs about 4; quoted memories with their times run 2.7 with SmolLM2's tokenizer)."""
    return estimate_chars(len(text))


def estimate_chars(chars: int) -> int:
    """`estimate` of a text of `chars` characters (when only its length is at hand)."""
    return math.ceil(chars / 2.5)


def within_budgets(task: Task, count: Counter = estimate) -> tuple[Task, int]:
    """The task with each retrieved list cut to its token budget (`Task.budgets`), the lowest
    scores (then the oldest) going first; the records kept stay in their order."""
    update, dropped = {}, 0
    today = task.now.date()
    for field, limit in task.budgets.items():
        rs = getattr(task, field)
        costs = [count(record(r, today)) + 2 for r in rs]
        if sum(costs) <= limit:
            continue
        keep, used = set(), 0
        for i in sorted(range(len(rs)), key=lambda i: (-rs[i].score, -rs[i].time.timestamp(), -rs[i].id)):
            if used + costs[i] <= limit:
                keep.add(i)
                used += costs[i]
        update[field] = [r for i, r in enumerate(rs) if i in keep]
        dropped += len(rs) - len(keep)
    return (task.model_copy(update=update) if update else task), dropped


def _to_window(task: Task, prompt: str, budget: int, count: Counter) -> tuple[Task, str, int]:
    """Records dropped, lowest score (then oldest) first, until `count(prompt)` is within `budget`."""
    used = count(prompt)
    if used <= budget:
        return task, prompt, 0
    pool = sorted(((r.score, r.time, r.id, field, i) for field in task.trim
                   for i, r in enumerate(getattr(task, field))), key=lambda c: c[:3])
    gone: set[tuple[str, int]] = set()
    trimmed = task
    while used > budget:
        left = [c for c in pool if (c[3], c[4]) not in gone]
        if not left:
            raise PromptTooLong(used, budget, task.name)
        excess, saved = used - budget, 0
        scale = used / max(1, estimate(prompt))  # this counter's tokens per estimated token
        for c in left:  # drop until the estimated saving covers the excess
            gone.add((c[3], c[4]))
            saved += (estimate(record(getattr(task, c[3])[c[4]], task.now.date())) + 2) * scale
            if saved >= excess:
                break
        kept = {f: [r for i, r in enumerate(getattr(task, f)) if (f, i) not in gone] for f in task.trim}
        trimmed = task.model_copy(update=kept)
        prompt = render(trimmed)
        used = count(prompt)
    return trimmed, prompt, len(gone)


def fit(task: Task, budget: int, count: Counter | None = None) -> tuple[Task, str, int]:
    """`_fit`, and for a prompt that still does not fit, the task's options cut (`Task.shrunk`,
    e.g. an economy's ops) until it does: a prompt that fits is never touched."""
    while True:
        try:
            return _fit(task, budget, count)
        except PromptTooLong:
            smaller = task.shrunk()
            if smaller is None:
                raise
            task = smaller


def _fit(task: Task, budget: int, count: Counter | None = None) -> tuple[Task, str, int]:
    """(the task as asked, its prompt, how many records were dropped to fit its lists' budgets
    and `budget` tokens for the whole prompt).

    Which records a question keeps is decided with the estimate, the same for every backend, so a
    recorded run's questions are asked again exactly as they were (a cassette's answers cite
    records by their number). `count`, a backend's own tokenizer, is the last word: a prompt that
    its exact count still finds too long loses more records."""
    task, cut = within_budgets(task)
    task, prompt, n = _to_window(task, render(task), budget, lambda p: estimate(RULES) + estimate(p) + 16)
    cut += n
    if count is not None:
        task, prompt, n = _to_window(task, prompt, budget, count)
        cut += n
    return task, prompt, cut