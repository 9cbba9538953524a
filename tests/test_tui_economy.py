"""The economy in the TUI (issue 17): an agent's holdings in the inspector's Goods tab, the town
screen (T) with the chest, everyone's holdings, the ledger and the civics, live and in replay (as
the run was at the tick shown); a world without an economy has neither; names from a world file
are shown as text. On the market town and on the tiny town given an economy."""

from __future__ import annotations

import io
import shutil
import sqlite3
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from rich.console import Console
from textual.app import App

from helpers import ROOT, TINY, assert_safe, store_state, stored_state, tiny_sim, wait_until, TINY_ECONOMY, ledger_holdings
from smalltown.scripted import ScriptedBackend
from smalltown.sim.commands import RunUntil
from smalltown.sim.open import create
from smalltown.tui.app import SmalltownApp
from smalltown.tui.reader import SaveReader
from smalltown.tui.replay import ReplayApp
from smalltown.tui.screens.day_marks import MARK_KINDS, by_cell, sign
from smalltown.tui.screens.inspector import InspectorScreen
from smalltown.tui.screens.town_goods import TownScreen
from smalltown.store.records import EventRow
from smalltown.store.schema import TIME_FMT
from smalltown.world.load import load_world_text

MARKET = ROOT / "worlds" / "market.toml"
SIZE = (130, 44)
HOSTILE_ITEM = "[b]loaf[/b][red]"  # markup in an item's name: shown as these very characters


def world_of(path: Path, extra: str = "", edit: tuple[str, str] | None = None):
    text = path.read_text() + extra
    if edit:
        text = text.replace(*edit)
    map_path = (path.parent / ("../maps/tiny.toml" if path == TINY else "../maps/market.toml")).resolve()
    return load_world_text(path.name, text, map_path.name, map_path.read_text())


WORLDS = {"market": lambda: world_of(MARKET), "tiny+economy": lambda: world_of(TINY, TINY_ECONOMY)}


def run(world, path: Path, hours: float):
    sim = create(world, path, ScriptedBackend(world.seed), overwrite=True)
    sim.run_until(world.start + timedelta(hours=hours))
    return sim


def screen_text(app: App) -> str:
    """The screen's words, each run of spaces one space."""
    console = Console(width=app.size.width, height=app.size.height, file=io.StringIO(), record=True)
    console.print(app.screen._compositor.render_update(full=True, screen_stack=app._background_screens))
    return " ".join(console.export_text().split())


def ledger(path: Path) -> list[tuple]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT id, tick, time, kind, giver, taker, item, qty, note FROM ledger ORDER BY id").fetchall()
    finally:
        conn.close()


def held_by_ledger(world, rows) -> dict[str, dict[str, int]]:
    """Holdings computed here, apart from the engine: the starting inventories plus the ledger."""
    held = ledger_holdings(world, rows)
    return {h: {i: n for i, n in inv.items() if n > 0} for h, inv in held.items()}


def holds_text(held: dict[str, int], items) -> str:
    """The Goods tab's rows, in the world file's order of items."""
    return " ".join(f"{item} {held[item]}" for item in items if held.get(item))


@pytest.fixture(scope="module")
def market_save(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("tui-eco") / "market.sqlite"
    run(world_of(MARKET), path, 10).close()
    return path


# --- the inspector's Goods tab ------------------------------------------------------------------


@pytest.mark.asyncio
@pytest.mark.parametrize("name", sorted(WORLDS))
async def test_the_goods_tab_shows_what_the_economy_holds_after_a_scripted_stretch(tmp_path, name) -> None:
    sim = run(WORLDS[name](), tmp_path / "eco.sqlite", 6)
    assert ledger(sim.save.path), "the stretch moved nothing: nothing to show"
    app = SmalltownApp(sim)
    async with app.run_test(size=SIZE) as pilot:
        for agent in [a.name for a in sim.agents]:
            held = sim.economy.holdings(agent)  # the live economy, paused: what the tab must show
            await pilot.app.push_screen(InspectorScreen(app._save_reader(), agent))
            await pilot.press("6")
            await pilot.pause()
            out = screen_text(app)
            assert "Holds" in out and "Latest transfers" in out, out
            assert (holds_text(held, sim.economy.items) in out) if held else ("holds nothing" in out), (agent, held, out)
            goods = app.screen._goods.view.read()
            assert goods.holdings == {h: sim.economy.holdings(h) for h in goods.holders}
            app.pop_screen()
            await pilot.pause()


@pytest.mark.asyncio
async def test_in_replay_the_goods_are_as_they_were_at_the_tick_shown(market_save) -> None:
    world, rows = world_of(MARKET), ledger(market_save)
    middle = rows[len(rows) // 2][1]  # a tick some transfers came before and some after
    then = held_by_ledger(world, [r for r in rows if r[1] <= middle])
    assert then != held_by_ledger(world, rows)
    app = ReplayApp(market_save, at=middle)
    async with app.run_test(size=SIZE) as pilot:
        for agent in app._names:
            app._select(agent)
            await pilot.press("i", "6")
            await wait_until(pilot, lambda: isinstance(app.screen, InspectorScreen))
            await pilot.pause()
            out = screen_text(app)
            assert (holds_text(then.get(agent, {}), world.economy.items) or "holds nothing") in out, (agent, out)
            await pilot.press("escape")
            await wait_until(pilot, lambda: not isinstance(app.screen, InspectorScreen))


# --- the town screen ----------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_the_town_screen_lists_the_saves_ledger_newest_first_and_filters_it(market_save) -> None:
    rows = ledger(market_save)
    world = world_of(MARKET)
    app = ReplayApp(market_save)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("T")
        await wait_until(pilot, lambda: isinstance(app.screen, TownScreen))
        await pilot.pause()
        table = app.screen.query_one("#ledger")
        assert table.row_keys == [str(r[0]) for r in reversed(rows)]
        first = [str(c) for c in table._rows[0][1]]
        last = rows[-1]
        assert first[1] == last[3] and first[4] == str(last[7]) and first[5] == last[6]
        held = held_by_ledger(world, rows)
        holdings = {k: [str(c) for c in cells] for k, cells in app.screen.query_one("#holdings")._rows}
        for holder, cells in holdings.items():
            assert cells[1:] == [str(held.get(holder, {}).get(i, 0) or "·") for i in world.economy.items]
        out = screen_text(app)
        chest = held.get("chest", {})
        assert "Town chest " + ", ".join(f"{n} {i}" for i, n in chest.items()) in out
        await pilot.press("k")  # the first kind of transfer: gathers only
        await pilot.pause()
        assert table.row_keys == [str(r[0]) for r in reversed(rows) if r[3] == "gather"]
        await pilot.press("k", "a")  # crafts, of the first agent (as giver or taker)
        await pilot.pause()
        who = world.agents[0].name
        assert table.row_keys == [str(r[0]) for r in reversed(rows) if r[3] == "craft" and who in (r[4], r[5])]


@pytest.mark.asyncio
async def test_a_world_without_an_economy_has_no_town_key_and_no_goods_tab(tmp_path) -> None:
    sim = tiny_sim(tmp_path, "06:05")
    app = SmalltownApp(sim)
    async with app.run_test(size=SIZE) as pilot:
        assert app.check_action("town", ()) is False
        assert "Town" not in screen_text(app)  # not in the footer
        await pilot.press("T")
        await pilot.pause()
        assert app.screen is app.screen_stack[0]  # nothing opened
        await pilot.press("i")
        await wait_until(pilot, lambda: isinstance(app.screen, InspectorScreen))
        await pilot.press("6")  # no Goods tab: the key does nothing
        await pilot.pause()
        assert "Goods" not in screen_text(app) and not app.screen.query("#goods")
        await app.push_screen(TownScreen(app._save_reader()))  # opened anyway (a stranger's call): it says why
        await pilot.pause()
        assert "This world has no economy (no [economy] in its file)" in screen_text(app)


@pytest.mark.asyncio
async def test_a_hostile_item_name_and_constitution_are_shown_as_text(tmp_path) -> None:
    world = world_of(TINY, TINY_ECONOMY, ('"coffee beans"', f'"{HOSTILE_ITEM}"'))
    sim = run(world, tmp_path / "hostile.sqlite", 6)
    path = sim.save.path
    assert any(r[6] == HOSTILE_ITEM for r in ledger(path))
    sim.close()
    law = "[bold red]Everyone[/] pays \x1b[2J a tenth"
    conn = sqlite3.connect(path)  # the civics' events, as another helper's engine writes them
    conn.execute("INSERT INTO events(tick, time, agent, kind, text, data) VALUES (?, ?, NULL, 'constitution', ?, ?)",
                 (10, "2023-02-13 06:01:40", "The town adopts its constitution",
                  '{"version": 2, "rate": 0.1, "text": "' + law.replace("\x1b", "\\u001b") + '"}'))
    conn.execute("INSERT INTO events(tick, time, agent, kind, text, data) VALUES (?, ?, NULL, 'tally', ?, ?)",
                 (11, "2023-02-13 06:01:50", "tally", '{"results": {"[i]yes[/i]": 3, "no": 1}, "frozen": false}'))
    conn.commit()
    conn.close()
    app = ReplayApp(path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("T")
        await wait_until(pilot, lambda: isinstance(app.screen, TownScreen))
        await pilot.pause()
        out = screen_text(app)
        assert_safe(out, HOSTILE_ITEM, "Constitution v2", "tax rate 0.1", "[bold red]Everyone[/] pays ␛[2J a tenth",
                    '"[i]yes[/i]": 3')
        await pilot.press("escape")
        await pilot.pause()
        app._select("Isabella Rodriguez")
        await pilot.press("i", "6")
        await wait_until(pilot, lambda: isinstance(app.screen, InspectorScreen))
        await pilot.pause()
        assert_safe(screen_text(app), HOSTILE_ITEM)


# --- the day view's and the timeline's marks ---------------------------------------------------


def test_the_day_view_marks_the_economys_ops_and_a_kind_it_does_not_know_yet(market_save) -> None:
    reader = SaveReader(market_save)
    try:
        events = reader.events(None, MARK_KINDS, limit=None)[::-1]
        world = reader.world()
        day = reader.store.day(world.start.date(), world.gatherings)
    finally:
        reader.close()
    kinds = {e.kind for e in events}
    assert {"gather", "craft", "give"} <= kinds
    # a civics' kind this version's event list does not name yet: marked all the same
    law = EventRow(10 ** 6, 99, gathers_time(events), events[0].agent, "constitution", "adopted", {"version": 1})
    marks = by_cell([*events, law], day, 15)
    for e in [e for e in events if e.kind in ("gather", "craft", "give")] + [law]:
        if datetime.strptime(e.time, TIME_FMT) >= day.end:  # (the day is drawn up to the run's last tick)
            continue
        col = int((datetime.strptime(e.time, TIME_FMT) - day.start).total_seconds() // 900)
        assert e in marks[e.agent, col]
    assert sign([law]) == ("§", "#ffd43b") and sign([e for e in events if e.kind == "gather"][:1]) == ("↑", "#c0eb75")


def gathers_time(events) -> str:
    return next(e.time for e in events if e.kind == "gather")


def test_town_screen_snapshot(snap_compare, market_save: Path, tmp_path: Path) -> None:
    save = shutil.copy(market_save, tmp_path / "market.sqlite")  # (a fixed name: the screen may show it)
    assert snap_compare(ReplayApp(save), terminal_size=(110, 34), press=["T"])


@pytest.mark.asyncio
async def test_the_live_town_screen_follows_the_run(tmp_path) -> None:
    sim = run(world_of(MARKET), tmp_path / "live.sqlite", 0.5)
    assert not ledger(sim.save.path)  # nothing moved yet at 06:30
    app = SmalltownApp(sim)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("T")
        await wait_until(pilot, lambda: isinstance(app.screen, TownScreen))
        table = app.screen.query_one("#ledger")
        assert table.row_keys == []
        app._runner.send(RunUntil(sim.world.start + timedelta(hours=3, minutes=30)))
        await wait_until(pilot, lambda: not app.frame.running and app.frame.now.hour == 9 and table.row_keys, 60)
        await wait_until(pilot, lambda: table.row_keys == [str(r[0]) for r in reversed(ledger(sim.save.path))], 5)


@pytest.mark.asyncio
@pytest.mark.parametrize("tab", ["5", "6"])
async def test_an_agents_role_is_shown_in_the_social_and_goods_tabs(market_save, tmp_path, tab) -> None:
    save = shutil.copy(market_save, tmp_path / "role.sqlite")
    conn = sqlite3.connect(save)
    state = stored_state(conn, "Bea Quillon")
    state["role"] = "[b]baker[/b] of the town"  # a model's word: shown as text
    store_state(conn, "Bea Quillon", state)
    conn.commit()
    conn.close()
    reader = SaveReader(save)
    try:
        async with App[None]().run_test(size=SIZE) as pilot:
            await pilot.app.push_screen(InspectorScreen(reader, "Bea Quillon"))
            await pilot.press(tab)
            await pilot.pause()
            assert_safe(screen_text(pilot.app), "Role [b]baker[/b] of the town")
    finally:
        reader.close()
