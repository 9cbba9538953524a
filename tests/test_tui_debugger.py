"""The TUI as a debugger: breakpoints, stepping to an agent's next event, running until a time,
and the user's interventions, through the worker (`SimRunner`) and through the keys (pilot)."""

from __future__ import annotations

import threading
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Callable

import pytest
from textual.command import CommandPalette
from textual.widgets import Input, RichLog, Select, Static

from smalltown.config import Settings
from smalltown.scripted import ScriptedBackend
from smalltown.sim.breakpoints import Breakpoint, check
from smalltown.sim.commands import (Break, CopySave, EditObject, Intervention, Interview, Quit, RunUntil,
                                    SaveNow, Step, StepAgent, Toggle, Unbreak, Whisper)
from smalltown.store.records import Event
from smalltown.sim.open import create, resume
from smalltown.sim.simulation import TIME_FMT, Simulation
from smalltown.sim.clock import clock_near as until_from
from smalltown.tui.app import SmalltownApp
from smalltown.tui.keys import COMMANDS
from smalltown.tui.screens.forms import AskScreen, BreakpointsScreen, EditObjectScreen
from smalltown.tui.screens.interview import InterviewScreen
from smalltown.tui.widgets.map_view import MapView
from smalltown.tui.widgets.panels import AgentsPanel, EventLog
from smalltown.tui.runner import SimRunner
from smalltown.tui.snapshot import Frame
from smalltown.world.load import load_world
from helpers import query
from helpers import TINY, run_until_after, tiny_sim, wait_until

MARIA, KLAUS, ISABELLA = "Maria Lopez", "Klaus Mueller", "Isabella Rodriguez"


# --- the breakpoint conditions ---------------------------------------------------------------


def ev(agent: str | None, kind: str, text: str = "", **data: Any) -> Event:
    return Event(5, "2023-02-13 06:00:50", agent, kind, text or f"{agent} {kind}", data)


def test_each_breakpoint_kind_fires_on_its_own_condition_only() -> None:
    events = [ev(MARIA, "perceived"), ev(MARIA, "said", f"{MARIA}: hi", to=KLAUS),
              ev(KLAUS, "reflected"), ev(KLAUS, "replanned", reason="a party"),
              ev(ISABELLA, "entered", f"{ISABELLA} enters Hobbs Cafe: cafe")]
    calls = [(MARIA, "utterance"), (KLAUS, "daily_plan")]
    memories = [(ISABELLA, "Isabella is planning a Valentine's Day party")]

    def fired(bp: Breakpoint, evs: list[Event] = events) -> list[str | None]:
        return [h.agent for h in check([bp], evs, calls, memories)]

    assert fired(Breakpoint(1, "talk", KLAUS)) == [MARIA]  # the listener is in the conversation too
    assert fired(Breakpoint(1, "talk", ISABELLA)) == []
    assert fired(Breakpoint(1, "reflect")) == [KLAUS]
    assert fired(Breakpoint(1, "reflect", MARIA)) == []
    assert fired(Breakpoint(1, "replan", KLAUS)) == [KLAUS]
    assert fired(Breakpoint(1, "call", text="daily_plan")) == [KLAUS]
    assert fired(Breakpoint(1, "call", MARIA, "daily_plan")) == []
    assert fired(Breakpoint(1, "call", MARIA)) == [MARIA]
    assert fired(Breakpoint(1, "enter", text="hobbs")) == [ISABELLA]
    assert fired(Breakpoint(1, "enter", text="library")) == []
    assert fired(Breakpoint(1, "memory", text="VALENTINE")) == [ISABELLA]
    assert fired(Breakpoint(1, "memory", KLAUS, "valentine")) == []
    # "the next event" of an agent: not its perceptions, which happen every tick
    assert fired(Breakpoint(1, "event", MARIA, once=True), [ev(MARIA, "perceived")]) == []
    assert fired(Breakpoint(1, "event", MARIA, once=True)) == [MARIA]
    with pytest.raises(ValueError, match="needs the text"):
        Breakpoint(2, "memory", None, "  ")
    with pytest.raises(ValueError, match="unknown breakpoint kind"):
        Breakpoint(2, "sneeze")


def test_until_reads_a_clock_time_as_its_next_occurrence() -> None:
    now = datetime(2023, 2, 13, 9, 30)
    assert until_from("17:30", now) == datetime(2023, 2, 13, 17, 30)
    assert until_from("9:00", now) == datetime(2023, 2, 14, 9, 0)  # passed today: tomorrow's
    assert until_from("+2h", now) == datetime(2023, 2, 13, 11, 30)
    assert until_from("2023-02-14 08:00", now) == datetime(2023, 2, 14, 8, 0)
    with pytest.raises(ValueError):
        until_from("25:00", now)


# --- the worker: commands in, frames and replies out -------------------------------------------


class Harness:
    """A SimRunner on its own thread, as the app runs it, with its frames collected."""

    def __init__(self, sim: Simulation, paused: bool = True) -> None:
        self.sim = sim
        self.frames: list[Frame] = []
        self.runner = SimRunner(sim, self._publish, paused=paused, speed_index=7)  # max speed
        self.thread = threading.Thread(target=self.runner.run, daemon=True)
        self.thread.start()

    def _publish(self, frame: Frame) -> None:
        self.frames.append(frame)
        self.runner.frame_shown()

    def wait(self, cond: Callable[[], bool], seconds: float = 30) -> None:
        deadline = time.monotonic() + seconds
        while not cond():
            assert time.monotonic() < deadline, "timed out"
            time.sleep(0.01)

    def paused_by_breakpoint(self) -> Frame:
        self.wait(lambda: any(f.hits for f in self.frames))
        frame = next(f for f in self.frames if f.hits)
        assert not frame.running
        return frame

    def ask(self, command: Intervention) -> Any:
        """An intervention, waiting for its reply."""
        box: list[Any] = []
        self.runner.send(command, box.append)
        self.wait(lambda: bool(box))
        return box[0]

    def stop(self) -> None:
        self.runner.send(Quit())
        self.thread.join(30)
        self.sim.close()


@pytest.fixture
def harness(tmp_path: Path):
    made: list[Harness] = []

    def make(settings: Settings | None = None) -> Harness:
        world = load_world(TINY)
        sim = create(world, tmp_path / "tiny.sqlite", ScriptedBackend(world.seed), settings=settings)
        made.append(Harness(sim))
        return made[-1]

    yield make
    for h in made:
        h.stop()


def test_a_talk_breakpoint_pauses_at_the_end_of_the_tick_where_the_conversation_starts(harness) -> None:
    h = harness()
    h.runner.send(Break(Breakpoint(1, "talk", MARIA)))
    h.runner.send(Toggle())
    frame = h.paused_by_breakpoint()
    # Maria's first talk (the stand-in's outgoing Isabella and Klaus may have talked before it)
    said = query(h.sim.save.path, "SELECT min(tick) FROM conversations WHERE ? IN (initiator, other)", MARIA)[0][0]
    assert said == query(h.sim.save.path, "SELECT min(tick) FROM events WHERE kind = 'said' AND tick >= ?", said)[0][0]
    assert frame.tick == said and h.sim.tick == said  # nothing ran past it
    assert "talks with" in frame.hits[0].describe() and MARIA in frame.hits[0].detail
    time.sleep(0.2)
    assert h.sim.tick == said  # it stays paused
    assert frame.breakpoints == (Breakpoint(1, "talk", MARIA),)  # and the breakpoint stays set


def test_call_enter_and_memory_breakpoints_match_what_the_tick_saved(harness) -> None:
    h = harness()
    h.runner.send(Break(Breakpoint(1, "enter", KLAUS, "bathroom")))
    h.runner.send(Toggle())
    frame = h.paused_by_breakpoint()
    entered = query(h.sim.save.path, "SELECT min(tick) FROM events WHERE kind = 'entered' AND agent = ? "
                    "AND text LIKE '%bathroom%'", KLAUS)[0][0]
    assert frame.tick == entered

    h.frames.clear()
    h.runner.send(Unbreak(1))
    h.runner.send(Break(Breakpoint(2, "call", None, "decompose")))
    h.runner.send(Toggle())
    frame = h.paused_by_breakpoint()
    assert query(h.sim.save.path, "SELECT count(*) FROM llm_calls WHERE task = 'decompose' AND tick = ?",
                 frame.tick)[0][0] >= 1
    assert query(h.sim.save.path, "SELECT count(*) FROM llm_calls WHERE task = 'decompose' AND tick < ? "
                 "AND tick > ?", frame.tick, entered)[0][0] == 0  # the first one after the last pause

    h.frames.clear()
    h.runner.send(Unbreak(None))
    h.runner.send(Break(Breakpoint(3, "memory", None, "shower")))
    h.runner.send(Toggle())
    frame = h.paused_by_breakpoint()
    stamp = frame.now.strftime(TIME_FMT)
    assert query(h.sim.save.path, "SELECT count(*) FROM memories WHERE created = ? AND description LIKE "
                 "'%shower%'", stamp)[0][0] >= 1


def test_a_reflect_breakpoint_and_a_whisper_that_makes_the_agent_replan(harness) -> None:
    h = harness(Settings(reflection_threshold=30))
    h.runner.send(Break(Breakpoint(1, "reflect", MARIA)))
    h.runner.send(Toggle())
    frame = h.paused_by_breakpoint()
    assert query(h.sim.save.path, "SELECT count(*) FROM events WHERE kind = 'reflected' AND agent = ? "
                 "AND tick = ?", MARIA, frame.tick)[0][0] == 1

    # run on until Klaus has a plan of today's, then whisper: he re-plans, and the breakpoint says so
    h.frames.clear()
    h.runner.send(Unbreak(None))
    h.runner.send(Break(Breakpoint(2, "call", KLAUS, "hourly_schedule")))
    h.runner.send(Toggle())
    h.paused_by_breakpoint()
    memory = h.ask(Whisper(KLAUS, "I should visit the library today"))
    assert memory.description == "Thought: I should visit the library today"
    assert query(h.sim.save.path, "SELECT e.text, json_extract(e.data, '$.reason') FROM events e JOIN "
                 "events w ON w.tick = e.tick AND w.agent = e.agent AND w.kind = 'whispered' "
                 "WHERE e.kind = 'replanned' AND e.agent = ?", KLAUS).count(
        (f"{KLAUS} re-plans the rest of the day", memory.description)) == 1


def test_step_to_an_agents_next_event_and_run_until_a_time(harness) -> None:
    h = harness()
    h.runner.send(StepAgent(KLAUS))
    h.wait(lambda: any(f.stopped for f in h.frames))
    frame = next(f for f in h.frames if f.stopped)
    first = query(h.sim.save.path, "SELECT min(tick) FROM events WHERE agent = ? AND kind != 'perceived'",
                  KLAUS)[0][0]
    assert frame.tick == first and not frame.running and frame.chase is None
    assert frame.stopped.startswith(f"{KLAUS}'s next event: {KLAUS}") and frame.hits == ()

    h.frames.clear()
    when = h.sim.now + timedelta(minutes=5)
    h.runner.send(RunUntil(when))
    h.wait(lambda: any(f.stopped and "Reached" in f.stopped for f in h.frames))
    assert h.sim.now == when


def test_interventions_reply_with_what_changed_and_are_in_the_save(harness, tmp_path: Path) -> None:
    h = harness()
    h.runner.send(Step())
    h.wait(lambda: h.sim.tick == 1)
    answer, retrieval = h.ask(Interview(MARIA, "What are you looking forward to?", "a news reporter"))
    assert answer and retrieval.results
    assert query(h.sim.save.path, "SELECT count(*) FROM memories WHERE agent = ? AND description LIKE "
                 "'a news reporter asked%'", MARIA)[0][0] == 1

    address = next(iter(h.sim.world.objects))
    assert h.ask(EditObject(address, "on fire")) == (address, "on fire")
    assert query(h.sim.save.path, "SELECT state FROM objects WHERE address = ?", address) == [("on fire",)]
    h.runner.send(Step())
    h.wait(lambda: h.frames and h.frames[-1].tick == 2)
    assert address in h.frames[-1].changed_objects and h.frames[-1].objects[address] == "on fire"

    error = h.ask(EditObject("Nowhere:at:all", "on fire"))
    assert isinstance(error, KeyError)  # reported back, and the town runs on

    tick, path = h.ask(SaveNow())
    assert tick == 2 and path == str(h.sim.save.path)
    copy = tmp_path / "copies" / "fork.sqlite"
    assert h.ask(CopySave(str(copy))) == copy
    assert query(copy, "SELECT value FROM meta WHERE key = 'tick'") == [("2",)]
    assert isinstance(h.ask(CopySave(str(copy))), FileExistsError)  # never overwrites


# --- the keys and screens --------------------------------------------------------------------


def log_text(app: SmalltownApp) -> str:
    return "\n".join(line.text for line in app.query_one(EventLog).lines)


@pytest.mark.asyncio
async def test_breakpoints_screen_adds_lists_and_removes(tmp_path: Path) -> None:
    app = SmalltownApp(tiny_sim(tmp_path), start_paused=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("b")
        screen = app.screen
        assert isinstance(screen, BreakpointsScreen)
        screen.query_one("#agent", Select).value = KLAUS
        screen.query_one("#kind", Select).value = "enter"
        screen.query_one("#text", Input).focus()
        await pilot.press(*"bathroom", "enter")
        await wait_until(pilot, lambda: len(app.frame.breakpoints) == 1)
        assert app.frame.breakpoints[0] == Breakpoint(1, "enter", KLAUS, "bathroom")
        await pilot.pause(0.6)
        assert "enters a place" in str(screen.query_one("#list").get_row_at(0)[1])

        screen.query_one("#kind", Select).value = "memory"  # a memory breakpoint needs its text
        await pilot.click("#add")
        assert "needs the text" in str(screen.query_one("#error", Static).content)
        assert len(app.frame.breakpoints) == 1

        screen.query_one("#list").focus()
        await pilot.press("x")
        await wait_until(pilot, lambda: app.frame.breakpoints == ())
        await pilot.press("escape")
        await pilot.press("space")  # nothing set: it runs on
        await wait_until(pilot, lambda: app.frame.tick > 10)


@pytest.mark.asyncio
async def test_a_breakpoint_hit_selects_the_agent_and_says_why(tmp_path: Path) -> None:
    # Klaus wakes at 07:00; at 07:10 he sets off for the bathroom, and enters it a minute later.
    app = SmalltownApp(tiny_sim(tmp_path, until="07:10"), start_paused=True)
    async with app.run_test(size=(120, 40)) as pilot:
        assert app.selected == ISABELLA
        app._add_breakpoint("enter", KLAUS, "")
        await pilot.press("space")
        await wait_until(pilot, lambda: app.selected == KLAUS)
        assert not app.frame.running
        assert "Breakpoint #1: Klaus Mueller enters" in log_text(app)
        entered = query(app.sim.save.path, "SELECT min(tick) FROM events WHERE kind = 'entered' AND agent = ?",
                        KLAUS)[0][0]
        assert app.frame.tick == entered  # paused at the end of the tick where he entered


@pytest.mark.asyncio
async def test_step_agent_and_run_until_from_the_keys(tmp_path: Path) -> None:
    app = SmalltownApp(tiny_sim(tmp_path), start_paused=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("right_square_bracket", "right_square_bracket")  # Klaus
        assert app.selected == KLAUS
        await pilot.press("s")
        await wait_until(pilot, lambda: bool(app.frame.tick) and not app.frame.running)
        assert app.frame.tick == query(app.sim.save.path, "SELECT min(tick) FROM events WHERE agent = ? "
                                       "AND kind != 'perceived'", KLAUS)[0][0]

        await pilot.press("g")
        assert isinstance(app.screen, AskScreen)
        await pilot.press(*"25:99", "enter")
        assert "not a time of day" in str(app.screen.query_one("#error", Static).content)
        app.screen.query_one("#answer", Input).value = ""
        target = app.frame.now + timedelta(minutes=3)
        await pilot.press(*"+3m", "enter")
        await wait_until(pilot, lambda: app.frame.now >= target and not app.frame.running, 20)
        assert app.frame.now == target


@pytest.mark.asyncio
async def test_whisper_interview_and_edit_object_from_the_keys(tmp_path: Path) -> None:
    app = SmalltownApp(tiny_sim(tmp_path), start_paused=True)
    save = tmp_path / "tiny.sqlite"
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("n")
        await wait_until(pilot, lambda: app.frame.tick == 1)

        await pilot.press("w")
        await pilot.press(*"Bake a cake", "enter")
        await wait_until(pilot, lambda: "Whispered to Isabella Rodriguez" in log_text(app))
        assert query(save, "SELECT count(*) FROM memories WHERE description = 'Thought: Bake a cake'")[0][0] == 1

        await pilot.press("a")
        screen = app.screen
        assert isinstance(screen, InterviewScreen)
        screen.query_one("#persona", Input).value = "a baker"
        screen.query_one("#question", Input).focus()
        await pilot.press(*"Who are you?", "enter")
        await wait_until(pilot, lambda: not screen.waiting)
        chat = "\n".join(line.text for line in screen.query_one("#chat", RichLog).lines)
        assert "a baker: Who are you?" in chat and f"{ISABELLA}: " in chat and "drew on" in chat
        assert query(save, "SELECT count(*) FROM memories WHERE description LIKE 'a baker asked%'")[0][0] == 1
        await pilot.press("escape")

        # the cursor on an object: e edits that object
        view = app.query_one(MapView)
        obj = next(iter(app.sim.world.objects.values()))
        view.set_cursor(obj.tiles[0])
        await pilot.pause()
        assert obj.name in str(app.query_one("#where", Static).content)
        await pilot.press("e")
        assert isinstance(app.screen, EditObjectScreen)
        assert app.screen.query_one("#address", Input).value == obj.address
        await pilot.press("enter", *"flooded", "enter")  # the address kept, then the state
        await wait_until(pilot, lambda: "is now 'flooded'" in log_text(app))
        assert query(save, "SELECT state FROM objects WHERE address = ?", obj.address) == [("flooded",)]
        await pilot.press("n")
        await wait_until(pilot, lambda: app.frame.tick == 2)
        assert obj.address in app.frame.changed_objects
        assert "is flooded" in str(app.query_one("#where", Static).content)


@pytest.mark.asyncio
async def test_save_fork_save_as_and_open(tmp_path: Path) -> None:
    app = SmalltownApp(tiny_sim(tmp_path), start_paused=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("n", "n")
        await wait_until(pilot, lambda: app.frame.tick == 2)
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: "Saved" in log_text(app))

        await pilot.press("F")
        field = app.screen.query_one("#answer", Input)
        assert field.value.endswith("tiny-fork.sqlite")
        await pilot.press("enter")
        await wait_until(pilot, lambda: "Forked at tick 2" in log_text(app))
        assert query(tmp_path / "tiny-fork.sqlite", "SELECT value FROM meta WHERE key = 'tick'") == [("2",)]

        await pilot.press("F")  # a file that is there is refused
        app.screen.query_one("#answer", Input).value = str(tmp_path / "tiny-fork.sqlite")
        await pilot.press("enter")
        assert "already exists" in str(app.screen.query_one("#error", Static).content)
        await pilot.press("escape")

        await pilot.press("S")
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.return_code is not None)
    assert app.return_value == tmp_path / "tiny-copy.sqlite"
    assert query(tmp_path / "tiny-copy.sqlite", "SELECT value FROM meta WHERE key = 'tick'") == [("2",)]

    app = SmalltownApp(tiny_sim(tmp_path / "b"), start_paused=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("O")
        app.screen.query_one("#answer", Input).value = str(tmp_path / "nothing.sqlite")
        await pilot.press("enter")
        assert "no such file" in str(app.screen.query_one("#error", Static).content)
        app.screen.query_one("#answer", Input).value = str(TINY)
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.return_code is not None)
    assert app.return_value == TINY


@pytest.mark.asyncio
async def test_the_command_palette_lists_every_action_and_runs_them(tmp_path: Path) -> None:
    app = SmalltownApp(tiny_sim(tmp_path), start_paused=True)
    # (but the second binding of a key that says why it has nothing to show here, and Ctrl-C's quit
    # that exits 130: the palette's Quit is that action)
    bound = {b.action for b in SmalltownApp.BINDINGS
             if not b.action.startswith("nothing_to_show") and b.action != "interrupt"}
    assert "quit" in bound
    listed = {action for action, _, _ in COMMANDS}
    assert bound <= listed, f"not in the palette: {bound - listed}"
    async with app.run_test(size=(120, 40)) as pilot:
        titles = [c.title for c in app.get_system_commands(app.screen)]
        assert "Breakpoints…" in titles and "Whisper to the selected agent…" in titles
        await pilot.press("ctrl+p")
        assert isinstance(app.screen, CommandPalette)
        await pilot.press(*"step one", "enter")
        await wait_until(pilot, lambda: app.frame.tick == 1)


@pytest.mark.asyncio
async def test_map_and_agents_list_pick_agents_draw_paths_and_tell_what_is_where(tmp_path: Path) -> None:
    # 07:15: Isabella sets off for Hobbs Cafe; Maria is asleep in Willow Cottage until 08:00
    sim = tiny_sim(tmp_path, until="07:15")
    app = SmalltownApp(sim, start_paused=True)
    async with app.run_test(size=(120, 40)) as pilot:
        # a walker's way ahead is drawn, ending in an X
        for _ in range(2):
            await pilot.press("n")
        await wait_until(pilot, lambda: app.frame.tick == sim.tick == 452)
        walker = next(a for a in app.frame.agents if len(a.path) > 2)
        app._select(walker.name)
        await pilot.pause()
        view = app.query_one(MapView)
        ahead = walker.path[1]
        assert view._overlay[ahead][0] == "·" and view._overlay[walker.path[-1]][0] == "X"

        # a click on the agents list picks an agent; a click on the map puts the cursor there
        panel = app.query_one(AgentsPanel)
        y = next(i for i in range(40) if panel.name_at(i) == MARIA)
        await pilot.click(AgentsPanel, offset=(2, y))
        assert app.selected == MARIA
        maria = next(a for a in app.frame.agents if a.name == MARIA)
        off_x, off_y = view._offset()
        await pilot.click(MapView, offset=(maria.tile[0] + off_x - view.scroll_offset.x,
                                           maria.tile[1] + off_y - view.scroll_offset.y))
        assert view.cursor == maria.tile
        where = str(app.query_one("#where", Static).content)
        assert MARIA in where and "Willow Cottage" in where
        await pilot.press("shift+right")
        assert view.cursor == (maria.tile[0] + 1, maria.tile[1])


class SlowBackend(ScriptedBackend):
    """A model that takes its time: every answer costs 0.3 s of waiting."""

    def answer(self, task, prompt):
        time.sleep(0.3)
        return super().answer(task, prompt)


@pytest.mark.asyncio
async def test_keys_are_handled_within_100ms_while_a_slow_model_thinks(tmp_path: Path) -> None:
    world = load_world(TINY)
    sim = create(world, tmp_path / "slow.sqlite", SlowBackend(world.seed))
    app = SmalltownApp(sim, start_paused=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("space")
        await wait_until(pilot, lambda: app._runner.in_flight()[1] != [], 10)  # the model is answering
        await wait_until(pilot, lambda: "thinking" in str(app.query_one("#busy", Static).content), 5)
        assert "·" in str(app.query_one("#busy", Static).content)  # who asks what
        # when the key's action runs, measured from the moment the key is sent (pilot.press itself
        # also waits for the screen to settle, which is not the interface's delay)
        handled: list[float] = []
        select = app._select
        app._select = lambda name: (handled.append(time.perf_counter()), select(name))
        delays = []
        for _ in range(5):
            await wait_until(pilot, lambda: app._runner.in_flight()[1] != [], 10)  # the model is answering
            t0 = time.perf_counter()
            await pilot.press("right_square_bracket")
            await wait_until(pilot, lambda: len(handled) > len(delays), 1)
            delays.append(handled[-1] - t0)
        print(f"key to handled while the model works: max {max(delays) * 1000:.0f} ms")
        assert max(delays) < 0.1


@pytest.mark.parametrize("size", [(80, 24), (160, 50)], ids=["80x24", "160x50"])
def test_screen_after_a_few_ticks_with_a_path_a_cursor_and_a_breakpoint(snap_compare, tmp_path: Path,
                                                                        size: tuple[int, int]) -> None:
    """The main layout mid-run: a walker selected with its path drawn, the cursor on an object
    whose state changed, a breakpoint set. Deterministic: the scripted town, run to 08:29:50 and
    stepped by hand (Klaus leaves the kitchen table for Johnson Park at 08:30, Maria dresses by her
    bed, Isabella bakes at the cafe)."""
    sim = tiny_sim(tmp_path, until="08:29:50")
    app = SmalltownApp(sim, start_paused=True)

    async def run_before(pilot) -> None:
        for _ in range(4):
            await pilot.press("n")
        await wait_until(pilot, lambda: app.frame.tick == sim.tick == 903)
        app._add_breakpoint("talk", None, "")
        await pilot.press("right_square_bracket", "right_square_bracket")  # Klaus, walking
        await wait_until(pilot, lambda: app.frame.breakpoints != ())
        klaus = next(a for a in app.frame.agents if a.name == KLAUS)
        assert app.selected == KLAUS and klaus.walking and len(klaus.path) > 2
        table = app.sim.world.objects["Willow Cottage:kitchen:kitchen table"]
        assert table.address in app.frame.changed_objects  # idle since Klaus got up
        app.query_one(MapView).set_cursor(table.tiles[0])
        await pilot.pause()
        assert app.selected == KLAUS

    assert snap_compare(app, terminal_size=size, run_before=run_before)


def test_a_run_opened_part_way_marks_what_changed_in_its_last_half_hour(tmp_path: Path) -> None:
    """The map marks objects changed in the last half hour, and the agents list who reflected in
    it, also when the app opens a run that got there without it (resumed, or run headless)."""
    sim = tiny_sim(tmp_path)
    reflected: list[Event] = []
    try:
        sim.run_until(sim.now + timedelta(days=2), stop=lambda: bool(reflected),
                      on_tick=lambda events: reflected.extend(e for e in events if e.kind == "reflected"))
        assert reflected, "nobody reflected in two days"
        sim.run_until(sim.now + timedelta(minutes=5))
        frame = SimRunner(sim, lambda f: None, paused=True).frame()
        since = (sim.now - timedelta(minutes=30)).strftime(TIME_FMT)
        changed = {a for (a,) in query(sim.save.path, "SELECT DISTINCT json_extract(data, '$.address') FROM events "
                                       "WHERE kind = 'object' AND time > ?", since)}
        reflected = {a for (a,) in query(sim.save.path, "SELECT DISTINCT agent FROM events WHERE kind = 'reflected' "
                                         "AND time > ?", since)}
        assert changed and frame.changed_objects == changed
        assert reflected and {a.name for a in frame.agents if a.reflecting} == reflected
        older = query(sim.save.path, "SELECT json_extract(data, '$.address') FROM events WHERE kind = 'object' "
                      "AND time <= ?", since)
        assert {a for (a,) in older} - changed  # and not what changed before
    finally:
        sim.close()


# --- rewind and replay ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def hour_and_a_half(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny save run to 07:30, closed: snapshots at 06:00 and 07:00."""
    path = tmp_path_factory.mktemp("run") / "tiny.sqlite"
    world = load_world(TINY)
    sim = create(world, path, ScriptedBackend(world.seed))
    sim.run_until(world.start + timedelta(hours=1, minutes=30))
    sim.close()
    return path


@pytest.mark.asyncio
async def test_rewind_opens_a_new_save_as_the_run_was_then(hour_and_a_half: Path, tmp_path: Path) -> None:
    path = tmp_path / "tiny.sqlite"
    path.write_bytes(hour_and_a_half.read_bytes())
    sim = resume(path, ScriptedBackend(1))
    app = SmalltownApp(sim, start_paused=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("r")
        await pilot.press(*"8:00", "enter")  # the last 8:00 was yesterday: before the run
        assert "the run goes from" in str(app.screen.query_one("#error", Static).content)
        app.screen.query_one("#answer", Input).value = "7:10"
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.return_code is not None)
    fork = tmp_path / "tiny-at-0710.sqlite"
    assert app.return_value == fork
    assert query(fork, "SELECT value FROM meta WHERE key = 'game_time'") == [('"2023-02-13 07:00:00"',)]
    assert query(path, "SELECT value FROM meta WHERE key = 'game_time'") == [('"2023-02-13 07:30:00"',)]


@pytest.fixture(scope="module")
def past_the_first_conversation(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny save run until ten minutes after its first conversation (Isabella and Maria at the
    cafe at 13:04:40, as the town is tuned at this writing), closed."""
    sim = tiny_sim(tmp_path_factory.mktemp("talked"))
    run_until_after(sim, lambda: sim.save.conversation_count() > 0)
    path = sim.save.path
    sim.close()
    return path


@pytest.mark.asyncio
async def test_replay_scrubs_back_and_forth_and_shows_the_town_as_it_was(past_the_first_conversation: Path) -> None:
    from smalltown.sim.history import History
    from smalltown.tui.replay import ReplayApp
    from smalltown.tui.screens.inspector import InspectorScreen
    from smalltown.tui.screens.timeline import ConversationsScreen

    save = past_the_first_conversation
    before = save.read_bytes()
    app = ReplayApp(save)
    history = History(save)
    end = history.last_tick
    talk_tick, talk_time, reason, first_line = query(
        save, "SELECT tick, time, reason, json_extract(lines, '$[0].text') FROM conversations ORDER BY id LIMIT 1")[0]

    def tiles_at(tick: int) -> dict:
        return {n: a.tile for n, a in history.state_at(tick).agents.items()}

    def shown() -> str:
        return "\n".join(str(s.content) for s in app.screen.query("Static"))

    async with app.run_test(size=(120, 40)) as pilot:
        assert app.frame.tick == end
        await pilot.press("comma")
        assert app.frame.tick == end - 1
        await pilot.press("less_than_sign", "less_than_sign")
        assert app.frame.tick == end - 121
        assert {a.name: a.tile for a in app.frame.agents} == tiles_at(end - 121)
        assert app.query_one(MapView)._agents == app.frame.agents  # what the map draws

        await pilot.press("g")
        await pilot.press(*"6:00", "enter")  # the start of the run
        assert app.frame.tick == 0
        await pilot.press("full_stop")  # one tick on: its events, the first of the day
        assert app.frame.tick == 1
        assert [(e.kind, e.text) for e in app.frame.events] == [(e.kind, e.text) for e in history.events(1, 0)]
        assert any(e.kind == "started" and e.agent == ISABELLA for e in app.frame.events)

        await pilot.press("i", "3")  # the inspector's memories: those made by then
        assert isinstance(app.screen, InspectorScreen)
        await pilot.pause()
        assert [int(k) for k in app.screen._memories] == [m.id for m in history.memories_at(app.selected, 1)][::-1]
        await pilot.press("escape")
        await pilot.press("d")  # nobody has talked yet
        assert isinstance(app.screen, ConversationsScreen)
        assert app.screen.conversations == [] and "has not talked with anyone yet" in shown()
        await pilot.press("escape")

        await pilot.press("g")  # to the first conversation: its lines are in the log, and in d
        app.screen.query_one("#answer", Input).value = talk_time[11:]  # "13:04:40"
        await pilot.press("enter")
        assert app.frame.tick == talk_tick
        assert any(e.kind == "said" and e.tick == talk_tick for e in app.frame.events)
        await pilot.press("d")  # the same screen as the live TUI's, up to the time shown
        talk = app.screen.conversations[0]
        assert [c.tick for c in app.screen.conversations] == [talk_tick]
        assert (talk.lines[0].text, talk.reason) == (first_line, reason)
        assert talk_time[11:] in str(app.screen.query_one("#title", Static).content)  # "up to 13:04:40"
        await pilot.press("escape")

        await pilot.press("space")
        await wait_until(pilot, lambda: app.frame.tick > talk_tick + 2)
        await pilot.press("space")
        assert not app.playing
        await pilot.press("q")
    history.close()
    assert save.read_bytes() == before  # read-only
