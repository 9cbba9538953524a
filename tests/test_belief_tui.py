"""Belief in the debugger: the map's belief layer (L) colours agents by level, a conversion is an
event in the log, `converted` is a kind the breakpoints form offers, and the inspector's Belief tab
shows the level, since when, and the exposures that moved it."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from culture_world import culture_world
from helpers import screen_text, wait_until
from smalltown.scripted import ScriptedBackend
from smalltown.sim.open import create
from smalltown.world.load import load_world

CONVERT = "Giorgio Rossi"  # an indirect convert at 09:02 of this world's scripted run (tests/test_belief.py's day)
PRIEST = "Klaus Mueller"


@pytest.fixture(scope="module")
def save(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("belief-tui")
    world = load_world(culture_world(tmp))
    sim = create(world, tmp / "s.sqlite", ScriptedBackend(world.seed), overwrite=True)
    try:
        sim.run_until(world.start.replace(hour=9, minute=10))
    finally:
        sim.close()
    return tmp / "s.sqlite"


@pytest.mark.asyncio
async def test_the_belief_layer_colours_agents_by_level(save: Path) -> None:
    from smalltown.cli.backends import choose
    from smalltown.sim.open import RunOptions, open_run
    from smalltown.tui.app import SmalltownApp
    from smalltown.tui.palette import BELIEF_STYLES
    from smalltown.tui.widgets.map_view import MapView

    sim, _ = open_run(save, RunOptions(backend=choose("scripted")))
    app = SmalltownApp(sim)
    async with app.run_test(size=(140, 44)) as pilot:
        await pilot.pause()
        view = app.query_one(MapView)
        marks = {a.name: a.belief for a in app.frame.agents}
        assert marks[PRIEST] == 2 and marks[CONVERT] == 1 and marks["Sam Moore"] == 0
        alone = {a.tile: a.name for a in app.frame.agents if [b.tile for b in app.frame.agents].count(a.tile) == 1}
        await pilot.press("L")
        await wait_until(pilot, lambda: view.belief_layer)
        for tile, name in alone.items():
            assert view._overlay[tile][1].bgcolor == BELIEF_STYLES[marks[name]].bgcolor, name  # (the selected one: reversed too)
        await pilot.press("L")
        await wait_until(pilot, lambda: not view.belief_layer)
        for tile, name in alone.items():  # their own colours again
            assert view._overlay[tile][1].bgcolor == view._marker[name].bgcolor, name


@pytest.mark.asyncio
async def test_the_inspector_has_a_belief_tab(save: Path) -> None:
    from textual.app import App
    from textual.widgets import TabbedContent

    from smalltown.sim.breakpoints import BREAK_KINDS
    from smalltown.tui.reader import SaveReader
    from smalltown.tui.screens.inspector import InspectorScreen

    assert BREAK_KINDS["converted"]

    class Host(App[None]):
        def on_mount(self) -> None:
            self.reader = SaveReader(save)
            self.push_screen(InspectorScreen(self.reader, CONVERT))

    app = Host()
    async with app.run_test(size=(140, 44)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, InspectorScreen))
        tabs = app.screen.query_one(TabbedContent)
        assert str(tabs.get_tab("module-belief").label) == "Belief"
        tabs.active = "module-belief"
        await wait_until(pilot, lambda: "Noodlism" in screen_text(app))
        text = " ".join(screen_text(app).split())
        assert "Noodlism" in text and "level 1 since 2023-02-13 09:02:00" in text and "heard Isabella Rodriguez at level 2" in text
        app.reader.close()


def test_replay_holds_the_levels_the_run_held_at_each_snapshot(save: Path) -> None:
    """Replay's levels (the save's `converted` events, priests from when they were ordained) are the
    belief module's state as each hourly snapshot kept it, and at the last tick as the save ends."""
    from smalltown.sim.history import History

    with History(save) as h:
        ticks = [*h.snapshot_ticks(), h.last_tick]
        assert len(ticks) >= 3
        for t in [*ticks, *reversed(ticks)]:  # (scrubbed forward, then back)
            levels = h.state_at(t).levels
            for name in h.names:
                kept = h.reader.agent_state_by(name, t)[1].get("modules", {}).get("belief", {})
                want = {d: e["level"] for d, e in kept.items() if e.get("level")}
                assert levels.get(name, {}) == want, (t, name)
        assert h.state_at(h.last_tick).levels[CONVERT] == {"Noodlism": 1}


@pytest.mark.asyncio
async def test_the_belief_layer_in_replay_shows_the_levels_of_the_tick_shown(save: Path) -> None:
    from smalltown.tui.palette import BELIEF_STYLES
    from smalltown.tui.replay import ReplayApp
    from smalltown.tui.widgets.map_view import MapView

    app = ReplayApp(save)
    async with app.run_test(size=(140, 44)) as pilot:
        await pilot.pause()
        marks = {a.name: a.belief for a in app.frame.agents}
        assert marks[PRIEST] == 2 and marks[CONVERT] == 1 and marks["Sam Moore"] == 0
        view = app.query_one(MapView)
        await pilot.press("L")
        await wait_until(pilot, lambda: view.belief_layer)
        convert = next(a for a in app.frame.agents if a.name == CONVERT)
        if [a.tile for a in app.frame.agents].count(convert.tile) == 1:
            assert view._overlay[convert.tile][1].bgcolor == BELIEF_STYLES[1].bgcolor
        before = app.history.tick_of(app.history.world.start.replace(hour=9, minute=1))
        app.seek(before)  # before the conversion: not yet a convert; the priest already ordained
        await pilot.pause()
        assert app.frame.tick == before, (app.frame.tick, before, app.tick)
        marks = {a.name: a.belief for a in app.frame.agents}
        assert marks[CONVERT] == 0 and marks[PRIEST] == 2
