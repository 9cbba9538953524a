"""The inspector's Social tab (issue 16): an agent's feelings, goal, latest decision, promises and
the places it found unavailable, read from the save of a run with the PIANO modules on; with them
off it says there is nothing, and text from a stranger's save is shown as text."""

from __future__ import annotations

import io
import sqlite3
from contextlib import asynccontextmanager
from pathlib import Path
from typing import AsyncIterator

import pytest
from rich.console import Console
from textual.app import App
from textual.pilot import Pilot

import helpers
from helpers import FRAGMENTS, ROOT, TINY, assert_safe, cli, store_state, stored_state
from smalltown.store.records import EventRow
from smalltown.tui.reader import SaveReader
from smalltown.tui.screens.inspector import InspectorScreen
from smalltown.tui.screens.inspector_social import MODULE_SETTINGS, trails

LILA = ROOT / "worlds" / "lila.toml"
ALL_ON = [a for name in MODULE_SETTINGS for a in ("--set", f"{name}=true")]
CAFE_HOURS = ('[sectors."Hobbs Cafe".arenas."cafe"]', '[sectors."Hobbs Cafe"]\nhours = "08:00-20:00"\n\n'
              '[sectors."Hobbs Cafe".arenas."cafe"]')


def run(path: Path, world: Path, until: str, *settings: str) -> Path:
    cli("run", world, "--headless", "--until", until, "--save", path, "--backend", "scripted", *settings, check=True)
    return path


@pytest.fixture(scope="module")
def saves(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("social")
    tiny = d / "tiny-hours.toml"  # the tiny town with its cafe closed before 08:00
    text = TINY.read_text().replace('"../maps/', f'"{ROOT / "maps"}/')
    tiny.write_text(text.replace(CAFE_HOURS[0], CAFE_HOURS[1], 1))
    return {"lila": run(d / "lila.sqlite", LILA, "+14h", *ALL_ON),
            "tiny": run(d / "tiny.sqlite", tiny, "+3h", *ALL_ON),
            "off": run(d / "off.sqlite", TINY, "+2h")}


@asynccontextmanager
async def social_tab(path: Path, agent: str) -> AsyncIterator[Pilot]:
    reader = SaveReader(path)
    try:
        async with App[None]().run_test(size=(120, 60)) as pilot:
            await pilot.app.push_screen(InspectorScreen(reader, agent))
            await pilot.pause()
            await pilot.press("5")
            await pilot.pause()
            yield pilot
    finally:
        reader.close()


def screen_text(app: App) -> str:
    """The screen's words, each run of spaces one space."""
    console = Console(width=app.size.width, height=app.size.height, file=io.StringIO(), record=True)
    console.print(app.screen._compositor.render_update(full=True, screen_stack=app._background_screens))
    return " ".join(console.export_text().split())


def state_of(path: Path, agent: str):
    reader = SaveReader(path)
    try:
        return reader.mind_state(agent)
    finally:
        reader.close()


async def test_a_run_with_the_modules_on_shows_feelings_goal_decision_and_promises(saves) -> None:
    agent = "Nora Vance"  # the listener: three people talk to her, kindly and rudely
    state = state_of(saves["lila"], agent)
    assert state.social and state.goal and state.decision  # what the tab is to show is in the save
    async with social_tab(saves["lila"], agent) as pilot:
        out = screen_text(pilot.app)
    for other, bond in state.social.items():
        # a row per person: the value beside its bar, the relationship in a sentence
        assert f"{other} {bond.sentiment} {'█' * bond.sentiment}{'░' * (10 - bond.sentiment)}" in out, out
        assert bond.summary in out
    rude = min(state.social.values(), key=lambda b: b.sentiment)
    assert rude.sentiment <= 3 and " → " in out  # the feeling's course, conversation by conversation
    assert "Goal" in out and state.goal in out
    assert "Latest decision" in out and state.decision.intent in out and state.decision.reason in out
    assert "Promises" in out and " kept, " in out and "kept" in out
    assert "Nothing here" not in out


async def test_the_second_world_shows_places_found_closed(saves) -> None:
    agent = "Isabella Rodriguez"  # up at 06:00 for the cafe, which opens at 08:00
    async with social_tab(saves["tiny"], agent) as pilot:
        out = screen_text(pilot.app)
    assert "Places found unavailable" in out and "unexpected" in out and "Hobbs Cafe" in out
    assert "Goal" in out and "Latest decision" in out


async def test_with_the_modules_off_the_tab_says_there_is_nothing(saves) -> None:
    async with social_tab(saves["off"], "Isabella Rodriguez") as pilot:
        out = screen_text(pilot.app)
        await pilot.press("1")  # and the other tabs still work
        await pilot.pause()
        assert "Memory" in screen_text(pilot.app)
    assert "Nothing here: the PIANO modules were off in this run" in out
    assert "Feelings" not in out and "Promises" not in out


async def test_text_from_the_save_is_shown_as_text(saves, tmp_path: Path) -> None:
    path = tmp_path / "hostile.sqlite"
    path.write_bytes(saves["lila"].read_bytes())
    agent = "Nora Vance"
    hostile = "".join(FRAGMENTS)
    conn = sqlite3.connect(path)
    with conn:
        state = stored_state(conn, agent)
        other = next(iter(state["social"]))
        state["social"][other]["summary"] = "summary " + hostile
        state["goal"] = "goal [bold]not bold[/bold]"
        store_state(conn, agent, state)
    conn.close()
    async with social_tab(path, agent) as pilot:
        out = helpers.screen_text(pilot.app)
    assert_safe(out, "goal [bold]not bold[/bold]", "summary [/bold][/][red]")


def test_a_feelings_course_is_read_from_its_events() -> None:
    def ev(i: int, other: object, value: object, previous: object) -> EventRow:
        return EventRow(i, i, "2023-02-13 10:00:00", "A", "sentiment", "",
                        {"other": other, "value": value, "previous": previous})
    newest_first = [ev(4, "B", 2, 7), ev(3, "C", "x", 5), ev(2, "B", 7, 5), ev(1, ["odd"], 1, 1)]
    assert trails(newest_first) == {"B": [5, 7, 2]}  # odd data from a stranger's save is passed over


# --- the new kinds elsewhere: the day view, the timeline, the breakpoint form -------------------


async def test_the_day_view_marks_the_cells_of_feelings_and_promises(saves) -> None:
    from smalltown.tui.replay import ReplayApp
    from smalltown.tui.screens.day import DayScreen
    from smalltown.tui.screens.day_marks import MARKS

    app = ReplayApp(saves["lila"])
    async with app.run_test(size=(160, 30)) as pilot:
        await pilot.press("D")
        screen = app.screen
        assert isinstance(screen, DayScreen)
        grid = str(screen.query_one("#day-grid").content)
        for kind in ("sentiment", "committed", "kept", "goal"):
            assert MARKS[kind][0] in grid, kind
        # the cursor on a marked cell lists what happened there
        (agent, col), events = next((k, v) for k, v in screen._marks.items() if v[0].kind == "sentiment")
        screen.row, screen.col, screen._moment = screen._names.index(agent), col, None
        screen._draw()
        below = str(screen.query_one("#day-cell").content)
        assert "♥" in below and "feels" in below and events[0].time[11:16] in below
    assert not [e for es in screen._marks.values() for e in es if e.kind == "decided"]  # too many to mark


async def test_the_timeline_lists_the_new_kinds_and_hides_decided_at_first(saves) -> None:
    from smalltown.tui.screens.timeline import KINDS, TimelineScreen

    reader = SaveReader(saves["lila"])
    try:
        async with App[None]().run_test(size=(120, 40)) as pilot:
            await pilot.app.push_screen(TimelineScreen(reader))
            await pilot.pause()
            shown_kinds = {e.kind for e in pilot.app.screen.table.items}
            assert {"sentiment", "committed", "kept", "goal"} <= shown_kinds
            assert "decided" not in shown_kinds and "perceived" not in shown_kinds
            pilot.app.screen.show_kinds(["decided"])
            await pilot.pause()
            assert {e.kind for e in pilot.app.screen.table.items} == {"decided"}
    finally:
        reader.close()
    assert {"decided", "goal", "sentiment", "committed", "kept", "broken", "unexpected", "blocked"} <= set(KINDS)


async def test_a_feeling_breakpoint_set_in_the_form_pauses_the_town(tmp_path: Path) -> None:
    from textual.widgets import Input, Select

    from helpers import wait_until
    from smalltown.scripted import ScriptedBackend
    from smalltown.sim.breakpoints import BREAK_KINDS
    from smalltown.sim.open import create
    from smalltown.tui.app import SmalltownApp
    from smalltown.tui.screens.forms import BreakpointsScreen
    from smalltown.tui.widgets.panels import EventLog
    from smalltown.world.load import load_world

    world = load_world(LILA)
    sim = create(world, tmp_path / "lila.sqlite", ScriptedBackend(world.seed), sets=["social_awareness=true"])
    sim.run_until(world.start.replace(hour=8, minute=50))  # the first talk is at nine
    app = SmalltownApp(sim, start_paused=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("b")
        form = app.screen
        assert isinstance(form, BreakpointsScreen)
        offered = {value for _, value in form.query_one("#kind", Select)._options}
        assert set(BREAK_KINDS) - {"event"} <= offered and {"sentiment", "goal", "kept", "broken"} <= offered
        form.query_one("#agent", Select).value = "Nora Vance"
        form.query_one("#kind", Select).value = "sentiment"
        form.query_one("#text", Input).focus()
        await pilot.press(*"Lilah", "enter")
        await wait_until(pilot, lambda: len(app.frame.breakpoints) == 1)
        await pilot.press("escape", "space")
        await wait_until(pilot, lambda: not app.frame.running and app.frame.tick > 0 and "Breakpoint #1" in
                         "\n".join(line.text for line in app.query_one(EventLog).lines), seconds=20)
        assert "Nora Vance feels" in "\n".join(line.text for line in app.query_one(EventLog).lines)


def test_the_goals_before_are_newest_first_each_once() -> None:
    from smalltown.state.agent import AgentState
    from smalltown.tui.screens.inspector_social import goal

    state = AgentState(goal="tend the garden", goals=["bake bread", "fix the fence", "bake bread", "tend the garden"])
    console = Console(width=80, file=io.StringIO(), record=True)
    console.print(goal(state, None))
    lines = [line.split() for line in console.export_text().splitlines()]
    assert lines[0][:1] == ["Goal"] and lines[1] == ["Before", "bake", "bread"] and lines[2] == ["fix", "the", "fence"]
