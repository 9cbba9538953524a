"""The TUI's hints match what it shows, and a key with nothing to show says so: the inspector's
footer counts the tabs this world has (Goods only with an economy), a number past them and `T` in
a world without an economy give a message instead of nothing, and the Plan tab marks exactly one
action current even when the current action is the same action several rows long."""

from __future__ import annotations

from datetime import timedelta

import pytest
from textual.widgets import TabbedContent

from helpers import ROOT, tiny_sim, wait_until
from smalltown.scripted import ScriptedBackend
from smalltown.sim.open import create
from smalltown.tui.app import SmalltownApp
from smalltown.tui.replay import ReplayApp
from smalltown.tui.screens.inspector import CURRENT, InspectorScreen
from smalltown.tui.widgets.fit_table import FitTable
from smalltown.world.load import load_world

MARKET = ROOT / "worlds" / "market.toml"  # a world with an economy


def hints(app) -> list[str]:
    """The key hints the screen's footer shows: 'KEY Description'."""
    return [f"{b.binding.key_display or b.binding.key} {b.binding.description}"
            for b in app.screen.active_bindings.values() if b.binding.show and b.enabled]


@pytest.mark.asyncio
async def test_the_inspectors_tab_keys_match_its_tabs_and_a_key_past_them_says_so(tmp_path) -> None:
    app = SmalltownApp(tiny_sim(tmp_path, "06:05"))  # the tiny town: no economy, so no Goods tab
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("i")
        await wait_until(pilot, lambda: isinstance(app.screen, InspectorScreen))
        tabs = [p.id for p in app.screen.query_one(TabbedContent).query("TabPane")]
        assert len(tabs) == 5 and "goods" not in tabs
        assert "1-5 Tabs" in hints(app) and not any("1-6" in h for h in hints(app))
        await pilot.press("5")
        assert app.screen.query_one(TabbedContent).active == tabs[4]
        await pilot.press("6")
        await wait_until(pilot, lambda: any("5 tabs here: 1-5" in n.message for n in app._notifications))
        assert app.screen.query_one(TabbedContent).active == tabs[4]


@pytest.mark.asyncio
async def test_with_an_economy_the_goods_tab_is_counted(tmp_path) -> None:
    world = load_world(MARKET)
    sim = create(world, tmp_path / "m.sqlite", ScriptedBackend(world.seed), overwrite=True)
    app = SmalltownApp(sim)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("i")
        await wait_until(pilot, lambda: isinstance(app.screen, InspectorScreen))
        tabs = [p.id for p in app.screen.query_one(TabbedContent).query("TabPane")]
        assert "goods" in tabs and f"1-{len(tabs)} Tabs" in hints(app)
        await pilot.press(str(tabs.index("goods") + 1))
        assert app.screen.query_one(TabbedContent).active == "goods"


@pytest.mark.asyncio
@pytest.mark.parametrize("kind", ["live", "replay"])
async def test_T_without_an_economy_says_why_nothing_opens(tmp_path, kind) -> None:
    sim = tiny_sim(tmp_path, "06:05")
    if kind == "replay":
        path = sim.save.path
        sim.close()
        app = ReplayApp(path)
    else:
        app = SmalltownApp(sim)
    async with app.run_test(size=(120, 40)) as pilot:
        assert app.check_action("town", ()) is False and not any(h.endswith(" Town") for h in hints(app))
        await pilot.press("T")
        await wait_until(pilot, lambda: any("no economy" in n.message for n in app._notifications))
        assert len(app.screen_stack) == 1  # nothing opened


@pytest.mark.asyncio
async def test_the_plan_tab_marks_exactly_one_current_action(tmp_path) -> None:
    """At 10:00 each of the tiny town's agents is doing an action its plan lists several times in
    a row (done as one): one row is marked, the one holding the save's clock."""
    sim = tiny_sim(tmp_path, "10:00")
    now = sim.now
    app = SmalltownApp(sim)
    async with app.run_test(size=(160, 50)) as pilot:
        for name in app._names:
            state = app._save_reader().mind_state(name)
            block = state.plan.block_during(state.action.start, state.action.end)
            covered = state.plan.actions_during(block, state.action.start, state.action.end)
            assert len(covered) > 1, name  # (what this test is about: several rows, one action)
            app.push_screen(InspectorScreen(app._save_reader(), name))
            await wait_until(pilot, lambda: isinstance(app.screen, InspectorScreen))
            await pilot.press("2")
            await pilot.pause()
            table = app.screen.query_one("#plan-actions", FitTable)
            marked = [key for key in table.row_keys if str(table.get_row(key)[0]) == CURRENT]
            assert len(marked) == 1, (name, marked)
            action = block.actions[int(marked[0])]
            minute = state.plan.minute_in(now)
            assert action.start <= minute < action.end, (name, action, minute)
            blocks = app.screen.query_one("#plan-blocks", FitTable)
            assert sum(str(blocks.get_row(k)[0]) == CURRENT for k in blocks.row_keys) == 1
            app.pop_screen()
            await pilot.pause()
