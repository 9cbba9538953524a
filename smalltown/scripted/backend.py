"""The scripted backend: every task answered deterministically from its typed inputs, no model.

It lets the whole architecture run offline and fast: the town's routines, gatherings and
declared facts (world data) drive plans and talk; records are read by their typed fields
(kind, time, importance, whom and which facts they concern), never by the prose in them. Same
seed and inputs, same answers. One module per family of tasks, each registering its answers by
task type (scripted/registry.py): `plan` (day, schedule, next action), `steps` (decomposition),
`objects` (places, object states), `memory` (importance, reflection, summary), `talk` (reacting,
conversation lines and summary), `interview`, and the PIANO and economy modules' own.
"""

from __future__ import annotations

from smalltown.llm.tasks import Answer, Task
from smalltown.scripted.registry import handler  # (the package imports its modules: each registers its answers)


class ScriptedBackend:
    """A backend like any other (`answer(task, prompt) -> Answer`); the prompt is ignored."""

    name = "scripted"
    model = "scripted"
    # declares no capabilities (llm.backend.capabilities: nothing beyond answering): it answers
    # anything at once from the typed inputs, needs no window, and imports nothing but the seam

    def __init__(self, seed: int = 0):
        self.seed = seed

    def answer(self, task: Task, prompt: str = "") -> Answer:
        out = handler(type(task))(task, self.seed)
        out = type(out).model_validate(out.model_dump())  # what a model's answer goes through
        return Answer(output=out, raw=out.model_dump_json())
