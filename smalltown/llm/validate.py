"""From a model's raw text to a validated task output, or a clear reason why not.

A JSON-schema grammar fixes the shape of an answer but not every rule (llama.cpp's schema grammar
does not enforce integer bounds or list lengths, for example); every answer is validated here
against the output model's full rules.
"""

from __future__ import annotations

import json

from pydantic import ValidationError

from smalltown.llm.tasks import Output, Task

MAX_ANSWER_CHARS = 64_000  # an answer longer than this is runaway generation, not an answer


class UnusableAnswer(Exception):
    """A model answer that cannot be used: not JSON, wrong shape, or breaking a rule.

    `kind` says why, in a word the call log counts by: "invalid" (not JSON, or breaking the
    schema or the question's options), "cut off" (it hit its token limit), "too long" (the
    prompt cannot fit the window), "failed" (the backend failed while answering), "copied" (it
    reproduces the prompt's example or another agent's answer) and "incoherent" (it contradicts
    itself or the world), both from llm/own.py."""

    def __init__(self, reason: str, raw: str, kind: str = "invalid"):
        super().__init__(reason)
        self.reason = reason
        self.raw = raw
        self.kind = kind
        self.usage: tuple[int, int, int] = (0, 0, 0)  # (prompt, completion, cached) tokens spent
        self.note = ""  # what the backend did beyond answering, for the call log (as Answer.note)
        self.model = ""  # who answered, when it says more than the backend's model (as Answer.model)


def parse_answer(task: type[Task] | Task, raw: str) -> Output:
    """Validate `raw` against the task's output model; raise UnusableAnswer, never anything else."""
    if not isinstance(raw, str):
        raise UnusableAnswer(f"answer is {type(raw).__name__}, not text", repr(raw)[:200])
    if len(raw) > MAX_ANSWER_CHARS:
        raise UnusableAnswer(f"answer is {len(raw)} characters long", raw[:200])
    text = raw.strip()
    if text.startswith("```"):  # a fenced block from a chatty server
        text = text.strip("`").removeprefix("json").strip()
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as e:
        raise UnusableAnswer(f"not JSON: {e}", raw) from None
    if not isinstance(data, dict):
        raise UnusableAnswer(f"expected a JSON object, got {type(data).__name__}", raw)
    try:
        out = task.output.model_validate(data)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(answer)"
        raise UnusableAnswer(f"{where}: {first['msg']} ({e.error_count()} problem(s))", raw) from None
    except (ValueError, TypeError, RecursionError) as e:  # e.g. integers too large to convert
        raise UnusableAnswer(f"invalid value: {e}", raw) from None
    if isinstance(task, Task) and (problem := task.check(out)):  # this question's own options and counts
        raise UnusableAnswer(problem, raw)
    return out
