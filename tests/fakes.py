"""Test backends: small fakes that answer tasks without a model.

- `QueueBackend`: answers from queues of outputs per task (the shape of simonw/llm's MockModel):
  a unit test of the mind says exactly what the "model" answers, and checks what was asked.
- `RandomBackend`: a random answer that is valid under each question's narrowed schema (its
  options, its counts, its lengths): whatever a model could say that passes validation. A town
  run on it must never crash, whatever the answers.
"""

from __future__ import annotations

import random
import string
from collections import defaultdict, deque

from smalltown.llm.schema import request_schema
from smalltown.llm.tasks import Answer, Output, Task


class QueueBackend:
    name = "queue"
    model = "queue"

    def __init__(self, answers: dict[str, list[Output | dict]] | None = None, default: "RandomBackend | None" = None):
        self.queues: dict[str, deque] = defaultdict(deque)
        for task, outs in (answers or {}).items():
            self.queues[task].extend(outs)
        self.default = default
        self.asked: list[tuple[Task, str]] = []

    def push(self, task: str, *outputs: Output | dict) -> None:
        self.queues[task].extend(outputs)

    def answer(self, task: Task, prompt: str) -> Answer:
        self.asked.append((task, prompt))
        queue = self.queues.get(task.name)
        if queue:
            out = queue.popleft()
            out = task.output.model_validate(out if isinstance(out, dict) else out.model_dump())
            return Answer(output=out, raw=out.model_dump_json())
        if self.default is None:
            raise AssertionError(f"QueueBackend: no answer queued for {task.name!r}")
        return self.default.answer(task, prompt)

    def of(self, name: str) -> list[Task]:
        """The tasks of that name asked so far."""
        return [t for t, _ in self.asked if t.name == name]

    def prompt(self, name: str, i: int = -1) -> str:
        """The prompt of the i-th task of that name asked (the last by default)."""
        return [p for t, p in self.asked if t.name == name][i]


def _value(rng: random.Random, node: dict, defs: dict) -> object:
    if "$ref" in node:
        node = defs[node["$ref"].rsplit("/", 1)[-1]]
    if "enum" in node:
        return rng.choice(node["enum"])
    kind = node.get("type")
    if kind == "object":
        return {k: _value(rng, v, defs) for k, v in node.get("properties", {}).items()}
    if kind == "array":
        lo, hi = node.get("minItems", 0), node.get("maxItems", 4)
        return [_value(rng, node.get("items", {}), defs) for _ in range(rng.randint(lo, min(hi, lo + 4)))]
    if kind == "integer":
        return rng.randint(node.get("minimum", 0), min(node.get("maximum", 100), node.get("minimum", 0) + 200))
    if kind == "boolean":
        return rng.random() < 0.5
    if node.get("pattern"):
        return f"{rng.randint(0, 23):02d}:{rng.choice((0, 15, 30, 45)):02d}"
    n = rng.randint(max(1, node.get("minLength", 0)), min(node.get("maxLength", 40), 40))
    return "".join(rng.choice(string.ascii_lowercase + "  ") for _ in range(n)).strip() or "x"


class RandomBackend:
    name = "random"
    model = "random"

    def __init__(self, seed: int = 0):
        self.rng = random.Random(seed)
        self.calls = 0

    def answer(self, task: Task, prompt: str) -> Answer:
        schema = request_schema(task)
        for _ in range(50):
            data = _value(self.rng, schema, schema.get("$defs", {}))
            try:
                out = task.output.model_validate(data)
            except ValueError:
                continue
            if not task.check(out):
                self.calls += 1
                return Answer(output=out, raw=out.model_dump_json())
        raise AssertionError(f"RandomBackend: no valid answer for {task.name}")
