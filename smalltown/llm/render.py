"""Tasks into prompt text: the only place typed inputs become prose.

A prompt is the agent's card (stable: a model caches it), then the task's instructions with the
answer's shape and one example (stable per task), then the data of this question (times on
every memory), then the question. Text from a world file, a user or a model is quoted as a JSON
string (`quote`), so it cannot pose as part of the prompt; names and times the engine writes are
shown as they are.

`render(task)` fills the task's template: each field shown by its type, then what the task's
renderer adds (llm/render_parts.py says how a task gets a template and a renderer; the renderers
of the tasks of llm/tasks are in the render_* modules imported here).
"""

from __future__ import annotations

import json
import re
import string
from functools import cache
from importlib import resources

from smalltown.llm import render_plan, render_talk, render_work  # noqa: F401 (they fill the renderers' table)
from smalltown.llm import tasks as T
from smalltown.llm.examples import EXAMPLES, example
from smalltown.llm.render_parts import (NONE, block, bullets, card, day, gathering, last_talk, moment, quote,
                                        records, renderer, routine)
from smalltown.world.model import Gathering


# --- the answer's shape ---------------------------------------------------------------------

def _describe(schema: dict, defs: dict) -> str:
    if "$ref" in schema:
        schema = defs[schema["$ref"].rsplit("/", 1)[-1]]
    if "enum" in schema:
        return "one of the options listed"
    kind = schema.get("type")
    if kind == "object":
        return "{" + ", ".join(f'"{k}": {_describe(v, defs)}' for k, v in schema.get("properties", {}).items()) + "}"
    if kind == "array":
        lo, hi = schema.get("minItems"), schema.get("maxItems")
        count = f"{lo} " if lo == hi and lo else f"{lo} to {hi} " if lo and hi else f"up to {hi} " if hi else ""
        return f"a list of {count}items, each {_describe(schema.get('items', {}), defs)}"
    if kind == "integer":
        lo, hi = schema.get("minimum"), schema.get("maximum")
        return f"a whole number {lo} to {hi}" if lo is not None and hi is not None else "a whole number"
    if kind == "boolean":
        return "true or false"
    if schema.get("pattern") == T.HHMM:
        return '"HH:MM"'
    if schema.get("maxLength"):
        return f"text of at most {schema['maxLength']} characters"
    return "text"


@cache
def answer_shape(task: type[T.Task]) -> str:
    """How to answer, the same for every question of a task: each field with what it holds,
    then one example (for other inputs)."""
    schema = task.output.model_json_schema()
    defs = schema.get("$defs", {})
    lines = ["Answer with one JSON object with these fields:"]
    for key, prop in schema.get("properties", {}).items():
        text = _describe(prop, defs)
        note = prop.get("description")
        lines.append(f'- "{key}": {text}' + (f" ({note})" if note else ""))
    lines.append("Example (its shape only: replace each <...> with the person's own answer): " + example(task.name))
    return "\n".join(lines)


# --- the data of each task ------------------------------------------------------------------


def _values(task: T.Task) -> dict[str, str]:
    """Every `$name` a task's template may use."""
    p = task.persona
    today = task.now.date()
    v: dict[str, str] = {
        "persona_card": card(p), "persona_name": p.name, "persona_home": p.home,
        "persona_age": str(p.age), "persona_traits": quote(p.traits),
        "persona_routine": routine(p.routine, p.home), "now": moment(task.now), "today": day(task.now),
        "answer_shape": answer_shape(T.Utterance if isinstance(task, T.CommittingUtterance) else type(task)),
    }
    for name in type(task).model_fields:
        if name in ("persona", "now"):
            continue
        value = getattr(task, name)
        if name in task.numbered:
            v[name] = records(value, task.count(name), today) if value else NONE
        elif isinstance(value, list) and value and isinstance(value[0], T.Record):
            # oldest first (unnumbered: no answer points at a position): the next question's
            # retrieval mostly adds newer memories, so a cached prefix stays longer
            v[name] = records(sorted(value, key=lambda r: (r.time, r.id)), today=today)
        elif isinstance(value, list) and value and isinstance(value[0], Gathering):
            v[name] = "\n".join(gathering(g) for g in value)
        elif isinstance(value, list) and value and isinstance(value[0], T.Block):
            v[name] = "\n".join(f"- {block(b)}" for b in value)
        elif isinstance(value, list) and value and isinstance(value[0], T.PlanStep):
            v[name] = "\n".join(f"- {s.time} {quote(s.activity)}" for s in value)
        elif isinstance(value, list) and value and isinstance(value[0], T.TranscriptLine):
            v[name] = "\n".join(f"{line.speaker}: {quote(line.text)}" for line in value)
        elif isinstance(value, list) and value and isinstance(value[0], T.Done):
            v[name] = "\n".join(f"- {d.time} {quote(d.activity)}" + (f" at {d.object}" if d.object else "")
                                for d in value)
        elif isinstance(value, list):
            plain = name in ("known_places", "options", "objects")
            v[name] = bullets([str(x) for x in value], plain) if value else NONE
        elif isinstance(value, T.LastTalk) or (value is None and name == "last_talk"):
            v[name] = last_talk(value, today)
        elif isinstance(value, T.Block):
            v[name] = block(value)
        elif value is None:
            v[name] = NONE
        elif isinstance(value, str) and name not in PLAIN:
            v[name] = quote(value)
        else:
            v[name] = str(value)
    v.update(renderer(task.name)(task))
    v["broadcast_part"] = broadcast(task)
    goal = getattr(task, "goal", "") if task.name != "social_goal" else ""
    v["goal_line"] = f"{p.name}'s current goal: {quote(goal)}" if goal else ""
    return v


# Fields shown as they are: names of people and places (a world file's names are one line with
# no double quotes or backslashes, see world/schema.py) and times the engine writes.
PLAIN = frozenset({"listener", "other", "observed", "initiator", "level", "within", "current", "place",
                   "start", "activity_start", "from_time", "object", "quality", "town"})


def broadcast(t: T.Task) -> str:
    """The controller's broadcast, as a paragraph of its own (none when it is off: the prompt is
    then what it was): its decision, the open promises, and for an utterance that may promise,
    what is planned next and the places a promise may name."""
    name, parts = t.persona.name, []
    d = getattr(t, "decision", None)
    if d is not None:
        target = f" ({d.target})" if d.target else ""
        parts.append(f"What {name} has decided to do (at {d.time}): {quote(d.intent)}{target}, because: {quote(d.reason)}")
    promises = getattr(t, "promises", [])
    if promises:
        parts.append(f"What {name} has promised to do today (keep these):\n" + "\n".join(
            f"- by {p.by} at {p.where}: {quote(p.what)} (promised to {p.to})" for p in promises))
    if isinstance(t, T.CommittingUtterance):
        if t.plan_next is not None:
            parts.append(f"What {name} plans to do next: {block(t.plan_next)}")
        # (the answer's shape at the top is the plain utterance's, this field is asked for here: a
        # speaker's first line, which may promise, and its next lines then share their prompt up to
        # the transcript's end, the part a model may reuse from one line to the next)
        parts.append(f'Also give "commitment": if {name} promises {t.listener} to do something later today, '
                     f'what, by when and where, as {commitment_shape()}; else null. The places:\n'
                     + bullets(t.known_places, plain=True))
    return "\n\n".join(parts)


def commitment_shape() -> str:
    """The example of an utterance's promise, as the end of its prompt asks for it."""
    return json.dumps(EXAMPLES["utterance_commit"]["commitment"], ensure_ascii=False)


@cache
def template(task: type[T.Task]) -> string.Template:
    """The task's template: its own `template_text`, else llm/prompts/<its template_name or name>.txt."""
    if task.template_text:
        return string.Template(task.template_text)
    name = task.template_name or task.name
    return string.Template(resources.files("smalltown.llm").joinpath(f"prompts/{name}.txt").read_text())


def render(task: T.Task) -> str:
    """The prompt (no code is executed: `$name` placeholders are filled, text values quoted)."""
    text = template(type(task)).safe_substitute(_values(task))
    return re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"


def grown_part(task: T.Task) -> str:
    """The start of `render(task)` through its growing field (`Task.grows`), which the next
    question of its kind repeats: "" for a task without one."""
    source = template(type(task)).template
    end = source.find("$" + task.grows) if task.grows else -1
    if end < 0:
        return ""
    head = string.Template(source[:end + 1 + len(task.grows)]).safe_substitute(_values(task))
    return re.sub(r"\n{3,}", "\n\n", head).lstrip()
