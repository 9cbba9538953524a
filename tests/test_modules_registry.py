"""The modules registry (mind/modules.py) and docs/architecture.md's "Modules and their clocks"
table agree, and the registry names real files, settings and clocks."""

from __future__ import annotations

from dataclasses import fields, replace

import pytest

from helpers import ROOT
from smalltown.config import Settings
from smalltown.mind.module import CLOCKS, Clock, Module
from smalltown.mind.modules import HEADER, MODULES, event_kinds, register, registered, running, table


def test_the_docs_table_is_the_registry():
    lines = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8").splitlines()
    start = lines.index(HEADER)
    end = next((i for i in range(start, len(lines)) if not lines[i].startswith("|")), len(lines))
    assert lines[start:end] == table()


def test_every_module_names_its_file_setting_and_clock():
    settings = {f.name for f in fields(Settings)}
    names = [m.name for m in MODULES]
    assert len(set(names)) == len(names)
    for m in MODULES:
        assert (ROOT / "smalltown" / m.file).is_file(), m.file
        assert m.clock.kind in CLOCKS, m.name
        if m.clock.kind == "every N minutes":
            assert m.clock.every(Settings()) > 0, m.name
        for s in filter(None, (x.strip() for x in m.setting.split(","))):
            assert s in settings, s
    # every PIANO module is registered with its setting
    switched = {s.strip() for m in MODULES for s in m.setting.split(",")}
    assert {"action_awareness", "controller_broadcast", "commitments", "social_awareness", "goal_generation",
            "slow_reflection", "roles"} <= switched


def test_the_engine_runs_every_slow_module_from_the_registry():
    """Each slow module gives the engine what it calls, and its steps' keys (the names its questions
    carry in a save) are unique; `running` picks them by their settings."""
    slow = [m for m in MODULES if m.steps]
    assert [m.name for m in slow] == ["goal generation", "role inference", "reflection"]
    keys = [s.key for m in slow for s in m.steps]
    assert keys == ["goal", "role", "reflection", "insights"]
    for m in slow:
        assert m.due is not None and m.question is not None and m.tasks, m.name
    assert running(Settings()) == []
    on = Settings().override(goal_generation=True, roles=True)
    assert [m.name for m in running(on)] == ["goal generation", "role inference"]
    assert [m.name for m in running(Settings().override(roles=True))] == []  # (its window is the goals')
    assert [m.name for m in running(Settings().override(architecture="piano"))] == ["goal generation", "reflection"]


def test_a_module_is_registered_once_and_unregistered_after():
    mod = Module("a test module", "mind/goals.py", Clock("rare", "never"), "", "nothing", "nothing",
                 events={"tested": "is tested"})
    before = list(MODULES)
    with registered(mod):
        assert MODULES[-1] is mod and event_kinds()["tested"] == "is tested"
        with pytest.raises(ValueError, match="registered already"):
            register(mod)
    assert MODULES == before and "tested" not in event_kinds()


def test_the_stand_in_answers_every_task_through_its_registry():
    """The scripted backend finds each task's answer by its type (scripted/registry.py): every task
    has one, and a type registered twice is refused."""
    from smalltown.llm.tasks import TASKS, DailyPlan
    from smalltown.scripted import ScriptedBackend  # noqa: F401 (its modules register their answers)
    from smalltown.scripted.registry import HANDLERS, answers, handler

    assert set(TASKS.values()) <= set(HANDLERS)
    with pytest.raises(ValueError, match="answers DailyPlan already"):
        answers(DailyPlan)(lambda t, seed: None)
    with pytest.raises(KeyError, match="no answer for"):
        handler(type("Unanswered", (DailyPlan,), {}))


def test_a_preset_is_a_set_of_registered_modules():
    """Each switch a preset names is a registered module's setting (a preset turning on something
    that is not a module fails here)."""
    from smalltown.config import PRESETS, SWITCHES

    settings_of_modules = {s.strip() for m in MODULES for s in m.setting.split(",") if s.strip()}
    assert set(SWITCHES) <= settings_of_modules
    for name, (on, _fill) in PRESETS.items():
        assert set(on) <= set(SWITCHES), name


def test_the_presets_fill_the_settings_they_filled_before_they_were_sets_of_modules():
    """The settings each preset gives, as they were when presets were written switch by switch."""
    piano = ("social_awareness", "controller_broadcast", "commitments", "action_awareness", "goal_generation",
             "slow_reflection")
    before = {
        "generative_agents": {**dict.fromkeys(piano, False), "reflection": True, "attention_minutes": 0.0,
                              "reflection_every_minutes": 0},
        "piano": {**dict.fromkeys(piano, True), "reflection": True, "attention_minutes": 5.0,
                  "reflection_every_minutes": 480},
        "baseline": {**dict.fromkeys(piano, False), "reflection": False, "attention_minutes": 5.0,
                     "reflection_every_minutes": 0},
    }
    for name, fill in before.items():
        assert Settings().override(architecture=name) == replace(Settings(), architecture=name, **fill), name
