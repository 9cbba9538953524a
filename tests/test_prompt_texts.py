"""Every task's prompt, rendered from fixed inputs (tests/prompt_cases.py), is the text stored in
tests/__snapshots__/test_prompt_texts.ambr: a change to a template or a renderer shows there, line by
line, and a refactor of the renderers changes none of it. After a deliberate change to a prompt (run on
the real model first), store the new texts with `python3 -m pytest tests/test_prompt_texts.py
--snapshot-update` and read the diff."""

from __future__ import annotations

import pytest

from prompt_cases import CASES
from smalltown.llm.render import render
from smalltown.llm.tasks import TASKS


def test_every_task_is_rendered_and_every_input_is_filled_in_somewhere():
    assert {t.name for t in CASES.values()} == set(TASKS)
    for name in TASKS:
        filled = CASES[f"{name}-filled"]
        unset = [f for f, field in type(filled).model_fields.items()
                 if getattr(filled, f) == field.get_default(call_default_factory=True)]
        assert unset == [], f"{name}: inputs never shown set: {unset}"


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_a_tasks_prompt_is_its_stored_text(case, snapshot):
    assert render(CASES[case]) == snapshot
