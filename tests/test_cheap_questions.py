"""What makes a scripted question cheap must not change what is asked or answered: narrowed
schemas share the unnarrowed parts with their kind's (and must never change them), the answer's
token bound is read without building the request schema, prompts reuse quoted texts and cards,
and the stand-in's object choice hashes its seeded tie-break only among ties."""

from __future__ import annotations

import json
import random

from realistic import CAFE_OBJECTS, ISABELLA, KLAUS, realistic_tasks

from smalltown.llm.render import render
from smalltown.llm.schema import _worst, max_answer_tokens, request_schema
from smalltown.llm.tasks import TASKS, ChoosePlace, Decompose
from smalltown.llm.tasks.base import _schema
from smalltown.scripted.objects import _ownership, choose_object, match, score
from smalltown.scripted.words import stem_set
from smalltown.seeded import stable_int
from smalltown.world.model import SLEEPING


def test_narrowing_leaves_every_kind_schema_as_pydantic_writes_it():
    for task in realistic_tasks().values():  # each narrows its own kind's: options, counts, objects
        request_schema(task)
        max_answer_tokens(task)
    for name, kind in TASKS.items():  # the schema every question of a kind shares is unchanged
        assert _schema(kind.output) == kind.output.model_json_schema(), name
    d = realistic_tasks()["decompose"]
    assert d.objects and request_schema(d)["$defs"]["SubAction"]["properties"]["object"]["enum"] == d.objects
    bare = d.model_copy(update={"objects": []})
    assert "enum" not in request_schema(bare)["$defs"]["SubAction"]["properties"]["object"]


def test_the_answer_bound_is_the_request_schema_bound():
    tasks = list(realistic_tasks().values())
    tasks.append(ChoosePlace(persona=KLAUS, now=tasks[0].now, activity="read", level="object", within="in x",
                             current="", options=[f"option {'x' * i}" for i in range(40)]))
    for task in tasks:
        built = request_schema(task)
        assert max_answer_tokens(task) == _worst(built, built.get("$defs", {})) + 8, task.name


def test_a_card_follows_the_persona_it_is_given():
    d = realistic_tasks()["decompose"]
    first = render(d)
    changed = d.model_copy(update={"persona": ISABELLA.model_copy(update={"summary": "A brand new summary."})})
    assert '"A brand new summary."' in render(changed)
    assert "A brand new summary" not in first and render(d) == first


def _old_choice(step: str, objects: list[str], p, prev: str = "", kind: str = "") -> str:
    """The choice as it was made before: every object's seeded draw hashed into its key."""
    from smalltown.scripted.objects import KIND_WORDS

    st = set(stem_set(step)) | ({"sleep"} if step == SLEEPING else set())

    def key(o: str, s: set[str]) -> tuple:
        return score(frozenset(s), o, p), o == prev, -(stable_int(p.name, step, o) % 997)

    best = max(objects, key=lambda o: key(o, st))
    if match(frozenset(st), best) > 0 and score(frozenset(st), best, p) > 0:
        return best
    if prev in objects:
        return prev
    if kind in KIND_WORDS:
        ks = set(stem_set(KIND_WORDS[kind]))
        kbest = max(objects, key=lambda o: key(o, ks))
        if match(frozenset(ks), kbest) > 0 and score(frozenset(ks), kbest, p) > 0:
            return kbest
    return max(objects, key=lambda o: (_ownership(o, p), -(stable_int(p.name, step, o) % 997)))


def test_object_choice_draws_among_ties_as_it_drew_among_all():
    rng = random.Random(15)
    names = CAFE_OBJECTS + ["bedroom: bed", "bedroom: Klaus's bed", "bathroom: shower", "studio: easel",
                            "office: desk", "garden: bench", "hall: chair", "hall: lamp", "hall: rug"]
    steps = ["serve a customer", "brew coffee", "sweep the floor", "hum a tune", SLEEPING, "take a shower",
             "tidy up", "think", "paint the mural", "water the plants"]
    ties = 0
    for _ in range(400):
        objects = rng.sample(names, rng.randint(1, len(names)))
        step, prev = rng.choice(steps), rng.choice(["", *objects])
        kind = rng.choice(["", "work", "leisure", "meal"])
        got = choose_object(step, objects, ISABELLA, prev, kind)
        assert got == _old_choice(step, objects, ISABELLA, prev, kind), (step, objects, prev, kind)
        ties += sum(1 for o in objects if match(stem_set(step), o) == 0) > 1
    assert ties > 50  # the draw among ties was exercised


def test_cached_stems_cannot_be_changed_by_a_caller():
    stems = stem_set("cooking dinner")
    assert isinstance(stems, frozenset) and {"cook", "dinner"} <= stems
    assert json.dumps(sorted(stem_set("cooking dinner"))) == json.dumps(sorted(stems))


def test_a_decompose_names_only_its_objects():
    d = realistic_tasks()["decompose"]
    assert isinstance(d, Decompose)
    from smalltown.scripted import ScriptedBackend

    out = ScriptedBackend(3).answer(d).output
    assert all(a.object in d.objects for a in out.actions) and d.check(out) == ""
