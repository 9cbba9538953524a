"""The module registry (mind/modules.py) as the front ends read it, standing above the mind: the
inspector panels of the modules a run has on."""

from __future__ import annotations

from smalltown.config import Settings, SettingsError
from smalltown.mind.module import Panel
from smalltown.mind.modules import MODULES


def panels(saved: dict) -> list[tuple[str, Panel]]:
    """(module name, its panel) for each registered module with a panel that is on under a save's
    settings (`meta.settings`: the changes from the defaults); none when they do not read."""
    try:
        settings = Settings().saved(saved)
    except SettingsError:
        return []
    return [(m.name, m.panel) for m in MODULES if m.panel is not None and m.switched_on(settings)]
