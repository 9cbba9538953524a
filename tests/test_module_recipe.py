"""A new module from this file alone (docs/architecture.md "Recipes" → "Add a module"): gossip, on
its own clock (every 30 game minutes), with its task and output type, its prompt, its stand-in
answer, its event kind and breakpoint, its own saved state and its inspector panel. Registered for
each test only (the registry, the stand-in's answers and the tasks are as before after it).
A real module puts these in its own files and names its switch in config.py; this one, with no
setting, runs whenever it is registered."""

from __future__ import annotations

import io
import sqlite3
from datetime import datetime, timedelta
from pathlib import Path
from typing import ClassVar

import pytest
from pydantic import Field

from helpers import ROOT, stored_state, wait_until
from smalltown.llm.examples import EXAMPLES
from smalltown.store.save import open_reader
from smalltown.llm.tasks import TASKS, Output, Task
from smalltown.mind.module import Applied, Clock, Emit, Module, Panel, SlowStep, TownView
from smalltown.mind.modules import MODULES, registered
from smalltown.scripted import ScriptedBackend
from smalltown.scripted.registry import HANDLERS, answering
from smalltown.sim.breakpoints import BREAK_KINDS, Breakpoint, check, next_event
from smalltown.sim.events import KINDS
from smalltown.sim.open import create
from smalltown.world.load import load_world

TINY = ROOT / "worlds" / "tiny.toml"
AGENT = "Maria Lopez"
EVERY = 30  # game minutes


# --- the module's task: inputs, output, prompt --------------------------------------------------

class GossipOut(Output):
    rumour: str = Field(min_length=1, max_length=80, description="one short piece of news to pass on")


PROMPT = """Task: $persona_name passes on one short piece of news about the town.
$answer_shape

The last news $persona_name passed on: $heard

It is $now. What does $persona_name pass on?"""


class Gossip(Task):
    name: ClassVar[str] = "gossip"
    output: ClassVar[type[Output]] = GossipOut
    template_text: ClassVar[str] = PROMPT  # the task's own prompt text (no file under llm/prompts/)
    heard: str = ""  # the last rumour passed on ("" = none yet)


# --- the stand-in's answer: from the typed inputs only --------------------------------------------

def stand_in(task: Task, seed: int) -> GossipOut:
    assert isinstance(task, Gossip)
    return GossipOut(rumour=f"{task.persona.name.split()[0]} heard news at {task.now:%H:%M}")


# --- the module: its question and its answer applied (its own state, an event) --------------------

def question(mind, now: datetime, town: TownView) -> Gossip:
    return Gossip(persona=mind.persona, now=now, heard=mind.state.modules.get("gossip", {}).get("heard", ""))


def apply(mind, out: Output, shown: Task, now: datetime) -> Applied:
    assert isinstance(out, GossipOut)
    own = mind.state.modules.setdefault("gossip", {})
    own["heard"], own["told"] = out.rumour, own.get("told", 0) + 1
    return Applied([Emit("gossiped", f"{mind.name} passes on: {out.rumour}", {"rumour": out.rumour})])


GOSSIP = Module(
    "gossip", "mind/gossip.py", Clock("every N minutes", "every 30 game minutes", EVERY), "",
    "the last news passed on", "modules.gossip", slow="always", tasks=(Gossip,), question=question,
    steps=(SlowStep("gossip", apply),), events={"gossiped": "passes on a piece of news"},
    panel=Panel("Gossip", lambda own: [("last passed on", own.get("heard", "")), ("times", str(own.get("told", 0)))]))


def screen_text(app) -> str:
    """What the terminal shows, as plain text (as `App.export_screenshot` renders it)."""
    from rich.console import Console

    width, height = app.size
    console = Console(width=width, height=height, file=io.StringIO(), force_terminal=True, record=True,
                      legacy_windows=False, safe_box=False)
    console.print(app.screen._compositor.render_update(full=True, screen_stack=app._background_screens))
    return console.export_text()


@pytest.fixture
def gossip(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setitem(EXAMPLES, Gossip.name, {"rumour": "<one short piece of news>"})  # its answer's example
    before = (list(MODULES), dict(HANDLERS), dict(TASKS))
    with registered(GOSSIP), answering(Gossip, stand_in):
        yield GOSSIP
    assert (list(MODULES), dict(HANDLERS), dict(TASKS)) == before  # nothing leaks into other tests
    assert "gossiped" not in KINDS and "gossiped" not in BREAK_KINDS


def run(path: Path):
    world = load_world(TINY)
    sim = create(world, path, ScriptedBackend(world.seed), sets=["slow_lag_ticks=6"])
    return sim, world


def test_the_module_runs_on_its_clock_and_its_event_is_saved(gossip, tmp_path: Path) -> None:
    path = tmp_path / "g.sqlite"
    sim, world = run(path)
    try:
        events = []
        while sim.now < world.start + timedelta(hours=1, minutes=2):
            events += sim.step()
    finally:
        sim.close()
    told = [e for e in events if e.kind == "gossiped" and e.agent == AGENT]
    # asked at the first tick (06:00:10) and every 30 game minutes after, each applied 6 ticks (60 s) later
    assert [e.time for e in told] == ["2023-02-13 06:01:10", "2023-02-13 06:31:10", "2023-02-13 07:01:10"]
    assert told[-1].text == f"{AGENT} passes on: Maria heard news at 07:00"
    with sqlite3.connect(path) as conn:
        saved = [(k, t) for k, t in conn.execute("SELECT kind, text FROM events WHERE agent = ? AND kind = 'gossiped'",
                                                 (AGENT,))]
        state = stored_state(conn, AGENT)
        calls = conn.execute("SELECT count(*) FROM llm_calls WHERE agent = ? AND task = 'gossip'",
                             (AGENT,)).fetchone()[0]
    assert saved == [("gossiped", e.text) for e in told] and calls == 3
    reader = open_reader(path)  # the call log holds the prompt rendered from the module's own text
    try:
        prompt = reader.call_detail(reader.calls(agent=AGENT, task="gossip")[0].id)["prompt"]
    finally:
        reader.close()
    assert f"Task: {AGENT} passes on one short piece of news about the town." in prompt
    assert state["modules"]["gossip"] == {"heard": "Maria heard news at 07:00", "told": 3,
                                          "asked": "2023-02-13 07:00:10"}  # (its clock's: when it last asked)


def test_a_breakpoint_on_its_event_kind_stops_the_run_at_it(gossip, tmp_path: Path) -> None:
    assert BREAK_KINDS["gossiped"] == "passes on a piece of news"
    bp = Breakpoint(1, "gossiped", AGENT)
    assert bp.describe() == f"#1 when {AGENT} passes on a piece of news"
    sim, world = run(tmp_path / "b.sqlite")
    try:
        while not (hits := check([bp], events := sim.step(), [], [])):
            assert sim.tick < 100
    finally:
        sim.close()
    assert sim.tick == 7 and hits[0].detail == f"{AGENT} passes on: Maria heard news at 06:00"
    assert next_event(AGENT, [e for e in events if e.kind == "gossiped"]).kind == "gossiped"


async def test_its_panel_is_drawn_in_the_inspector(gossip, tmp_path: Path) -> None:
    from textual.app import App
    from textual.widgets import TabbedContent

    from smalltown.tui.reader import SaveReader
    from smalltown.tui.screens.inspector import InspectorScreen

    path = tmp_path / "p.sqlite"
    sim, world = run(path)
    try:
        sim.run_until(world.start + timedelta(minutes=5))
    finally:
        sim.close()

    class Host(App[None]):
        def on_mount(self) -> None:
            self.reader = SaveReader(path)
            self.push_screen(InspectorScreen(self.reader, AGENT))

    app = Host()
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, InspectorScreen))
        tabs = app.screen.query_one(TabbedContent)
        tabs.active = "module-gossip"
        await wait_until(pilot, lambda: "last passed on" in screen_text(app))
        lines = [" ".join(line.split()) for line in screen_text(app).splitlines()]
        assert "last passed on Maria heard news at 06:00" in lines and "times 1" in lines
        assert str(tabs.get_tab("module-gossip").label) == "Gossip"
        app.reader.close()
