"""The modules registry (mind/modules.py) and docs/architecture.md's "Modules and their clocks"
table agree, and the registry names real files, settings and clocks."""

from __future__ import annotations

from dataclasses import fields

from helpers import ROOT
from smalltown.config import Settings
from smalltown.mind.modules import CLOCKS, HEADER, MODULES, table


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
        assert m.clock in CLOCKS, m.name
        for s in filter(None, (x.strip() for x in m.setting.split(","))):
            assert s in settings, s
    # every PIANO module of issue 16 is registered with its setting
    switched = {s.strip() for m in MODULES for s in m.setting.split(",")}
    assert {"action_awareness", "controller_broadcast", "commitments", "social_awareness", "goal_generation",
            "slow_reflection"} <= switched
