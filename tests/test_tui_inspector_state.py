"""The inspector reads an agent's state through the mind's own types (issue 13): the save's JSON is
decoded once by `AgentState.from_json`, the current block and actions are the day plan's own
lookups, and the TUI keeps no second parser of plans and actions. A state in an older shape still
shows; one the codec cannot read is a note on the screen, not a crash."""

from __future__ import annotations

import ast
import io
import json
import sqlite3
from contextlib import asynccontextmanager
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import AsyncIterator

import pytest
from rich.console import Console
from textual.app import App
from textual.pilot import Pilot

from helpers import ROOT, TINY, store_state, stored_state, wait_until
from smalltown.state.plan import DayPlan, PlanItem
from smalltown.scripted import ScriptedBackend
from smalltown.sim.shapes import state_problem
from smalltown.sim.open import create
from smalltown.tui.reader import SaveReader, UnreadableState
from smalltown.tui.screens.inspector import InspectorScreen
from smalltown.tui.widgets.fit_table import FitTable
from smalltown.world.load import load_world

AGENT = "Maria Lopez"
DAY = date(2023, 2, 13)


def at(hour: int, minute: int = 0, day: int = 0) -> datetime:
    return datetime(2023, 2, 13, hour, minute) + timedelta(days=day)


# --- the day plan's lookups ----------------------------------------------------------------------


def a_plan() -> DayPlan:
    work = PlanItem(540, 60, "work", "cafe:counter:till", [PlanItem(540, 15, "serve", "cafe:counter:till"),
                                                           PlanItem(555, 15, "serve", "cafe:counter:till"),
                                                           PlanItem(570, 30, "sweep", "cafe:floor:broom")])
    return DayPlan(DAY, 7, [("07:00", "wake up")], [PlanItem(0, 540, "sleeping", "home:room:bed"), work,
                                                    PlanItem(600, 840, "sleeping", "home:room:bed")])


def test_the_block_and_actions_an_action_is_in_are_the_plans_own_lookups():
    plan = a_plan()
    work = plan.blocks[1]
    assert plan.minute_in(at(9, 5)) == 545 and plan.minute_in(at(0, 30, day=1)) == 1470
    assert plan.minute_in(at(23, 0, day=-1)) == -60
    assert plan.block_during(at(9, 10), at(9, 30)) is work
    # the same action twice in a row is done as one: both are covered, the next is not
    assert plan.actions_during(work, at(9, 0), at(9, 30)) == work.actions[:2]
    assert plan.actions_during(work, at(9, 35), at(9, 35)) == work.actions[2:]  # an instant: its minute
    # asleep since last night: the day's first block; an action of another day is in no block
    assert plan.block_during(at(22, 0, day=-1), at(7, 0)) is plan.blocks[0]
    assert plan.block_during(at(22, 0, day=-1), at(23, 30, day=-1)) is None
    assert plan.block_during(at(9, 0, day=1), at(9, 30, day=1)) is None
    assert plan.actions_during(plan.blocks[0], at(1, 0), at(2, 0)) == []  # sleep is not broken down


def test_the_tui_parses_no_plan_or_action_of_its_own():
    """Plans and actions are read as the mind's types: nothing in tui/ indexes or `.get`s their
    JSON keys ("address" is left out: an object's event names one too)."""
    keys = {"plan", "action", "blocks", "actions", "items", "start", "end", "minutes", "activity", "place",
            "wake_up_hour", "summary_date", "since_reflection"}
    found = []
    for path in sorted((ROOT / "smalltown" / "tui").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            key = None
            if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
                key = node.slice.value
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
                  and node.args and isinstance(node.args[0], ast.Constant)):
                key = node.args[0].value
            if key in keys:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} [{key!r}]")
    assert found == []


# --- on the screen ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def save(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny town half an hour in: the agents have planned their day and begun it."""
    path = tmp_path_factory.mktemp("state") / "t.sqlite"
    sim = create(load_world(TINY), path, ScriptedBackend(1), overwrite=True)
    sim.run_until(sim.now + timedelta(minutes=30))
    sim.close()
    return path


def edited(save: Path, tmp_path: Path, change) -> Path:
    """A copy of the save with the agent's stored state changed by `change(state)`."""
    path = tmp_path / "t.sqlite"
    path.write_bytes(save.read_bytes())
    conn = sqlite3.connect(path)
    with conn:
        state = stored_state(conn, AGENT)
        change(state)
        store_state(conn, AGENT, state)
    conn.close()
    return path


def read(path: Path, agent: str = AGENT):
    """The agent's state as stored (JSON) and as the inspector decodes it."""
    reader = SaveReader(path)
    try:
        return reader.store.agent_state(agent), reader.mind_state(agent)
    finally:
        reader.close()


@asynccontextmanager
async def inspecting(path: Path, agent: str = AGENT) -> AsyncIterator[Pilot]:
    """The inspector on the save, over a bare app; its reader closed afterwards."""
    reader = SaveReader(path)
    try:
        async with App[None]().run_test(size=(120, 40)) as pilot:
            await pilot.app.push_screen(InspectorScreen(reader, agent))
            yield pilot
    finally:
        reader.close()


def screen_text(app: App) -> str:
    width, height = app.size
    console = Console(width=width, height=height, file=io.StringIO(), record=True, legacy_windows=False)
    console.print(app.screen._compositor.render_update(full=True, screen_stack=app._background_screens))
    return " ".join(console.export_text().split())


def older(state: dict) -> None:
    """The state as an older save kept it: the day's items as text, blocks without a place, actions
    without their own object, and none of the keys added since."""
    plan = state["plan"]
    plan["items"] = [" ".join(i) for i in plan["items"]]
    for b in plan["blocks"]:
        for key in ("place", "runs_on"):
            b.pop(key, None)
        for a in b.get("actions") or []:
            a.pop("address", None)
            a.pop("place", None)
    for key in ("carried",):
        plan.pop(key, None)
    for key in ("known", "states", "summary_date", "talks", "told", "heard", "declined", "object_states",
                "place_answers", "pending_ratings", "schedule_memory", "intentions", "pending"):
        state.pop(key, None)


async def test_an_older_state_a_check_accepts_still_shows(save: Path, tmp_path: Path) -> None:
    path = edited(save, tmp_path, older)
    stored, state = read(path)
    assert state_problem(json.dumps(stored)) is None  # a save a check lets through
    assert state is not None and state.plan is not None and state.action is not None
    block = state.plan.block_during(state.action.start, state.action.end)
    assert block is not None
    async with inspecting(path) as pilot:
        await wait_until(pilot, lambda: "Now" in screen_text(pilot.app))
        shown = screen_text(pilot.app)
        assert state.action.activity in shown and f"until {state.action.end:%H:%M}" in shown
        assert block.activity in shown and "cannot be read" not in shown
        await pilot.press("2")
        screen = pilot.app.screen
        await wait_until(pilot, lambda: screen.query_one("#plan-blocks", FitTable).row_count > 0)
        assert screen.query_one("#plan-blocks", FitTable).row_count == len(state.plan.blocks)
        assert screen._current_block == state.plan.index(block)
        assert f"1. {state.plan.items[0][1]}" in screen_text(pilot.app)  # the text the older save kept


async def test_a_state_the_codec_cannot_read_is_a_note_not_a_crash(save: Path, tmp_path: Path) -> None:
    # A save no check has read (the inspector reads the running simulation's own file): the
    # action's times are not times.
    def broken(state: dict) -> None:
        state["action"]["start"] = "soon"

    path = edited(save, tmp_path, broken)
    with pytest.raises(UnreadableState, match="ValueError"):
        read(path)
    async with inspecting(path) as pilot:
        await wait_until(pilot, lambda: "cannot be read" in screen_text(pilot.app))
        assert "no action yet" in screen_text(pilot.app)
        await pilot.press("2")
        await wait_until(pilot, lambda: "no plan yet" in screen_text(pilot.app))
        assert isinstance(pilot.app.screen, InspectorScreen)


async def test_an_agent_not_in_the_save(save: Path) -> None:
    assert read(save, "Nobody Here") == ({}, None)
    async with inspecting(save, "Nobody Here") as pilot:
        await wait_until(pilot, lambda: "Nobody Here is not in this save." in screen_text(pilot.app))
