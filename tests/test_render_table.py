"""The renderers' table (llm/render_parts.py): a task brings its template and its renderer from the
file that defines it, a task has one renderer at most, and every placeholder of every template is
filled."""

from __future__ import annotations

from datetime import datetime
from typing import ClassVar

import pytest
from pydantic import Field

from prompt_cases import CASES
from smalltown.llm import render_parts
from smalltown.llm.examples import EXAMPLES
from smalltown.llm.render import _values, render, template
from smalltown.llm.render_parts import extra, quote, renderer
from smalltown.llm.tasks import TASKS, Output, PersonaCard, Record, Task

ANN = PersonaCard(name="Ann Lee", age=30, traits="kind", description="a baker", home="Elm House")
NOW = datetime(2023, 2, 13, 9, 0)


class RumourOut(Output):
    rumour: str = Field(min_length=1, max_length=80, description="what the person passes on")


class Rumour(Task):
    """A question defined outside llm/, with its own prompt (as a module of its own would bring)."""

    name: ClassVar[str] = "test_rumour"
    output: ClassVar[type[Output]] = RumourOut
    template_text: ClassVar[str] = ("Task: pass on a rumour.\n$answer_shape\n\n$persona_card\n\n"
                                    "Heard lately:\n$heard\n$teller_line\n\n\n\nWhat does $persona_name tell $listener?")
    listener: str
    teller: str = ""
    heard: list[Record] = []


@extra("test_rumour")
def _rumour(t: Rumour) -> dict[str, str]:
    return {"teller_line": f"Told by {quote(t.teller)}" if t.teller else ""}


EXAMPLES["test_rumour"] = {"rumour": "<what the person passes on, in a sentence>"}


def test_a_task_defined_outside_llm_brings_its_own_template_and_renderer():
    heard = [Record(time=NOW.replace(hour=8), kind="observation", text='the mill "closes"\nsoon')]
    prompt = render(Rumour(persona=ANN, now=NOW, listener="Bob Stone", teller="Cy", heard=heard))
    assert prompt == (
        "Task: pass on a rumour.\nAnswer with one JSON object with these fields:\n"
        '- "rumour": text of at most 80 characters (what the person passes on)\n'
        "Example (its shape only: replace each <...> with the person's own answer): "
        '{"rumour": "<what the person passes on, in a sentence>"}\n\n'
        "The person: Ann Lee, age 30.\nInnate traits: \"kind\"\nDescription: \"a baker\"\nLives in: Elm House.\n\n"
        'Heard lately:\n- (08:00) "the mill \\"closes\\"\\nsoon"\nTold by "Cy"\n\n'
        "What does Ann Lee tell Bob Stone?\n")  # (a name, shown as it is)
    assert "Told by" not in render(Rumour(persona=ANN, now=NOW, listener="Bob Stone"))  # (its renderer's choice)


def test_a_second_renderer_for_a_task_is_refused_naming_both():
    with pytest.raises(ValueError, match=r"two renderers for the task 'react': .*render_talk\._react and .*\.again"):
        @extra("react")
        def again(t: Task) -> dict[str, str]:
            return {}
    assert renderer("react").__module__ == "smalltown.llm.render_talk"


def test_every_renderer_of_the_package_belongs_to_a_task():
    ours = {name for name, fill in render_parts._RENDERERS.items() if fill.__module__.startswith("smalltown.")}
    assert ours and ours <= set(TASKS)


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_every_placeholder_of_a_tasks_template_is_filled(case):
    task = CASES[case]
    wanted = set(template(type(task)).get_identifiers())
    assert wanted - set(_values(task)) == set()
