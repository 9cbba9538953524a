"""The debugger in `smalltown replay`: the inspector, the model calls, the timeline and breakpoints
on a recorded run as it was at the scrubbed tick, and replay's own help. Pressed through the keys
(pilot) on a short scripted save, and checked against the save itself."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from textual.widgets import Input, Select, Static

from helpers import query, tiny_sim, wait_until
from smalltown.tui.replay import ReplayApp
from smalltown.tui.screens.calls import CallsScreen
from smalltown.tui.screens.forms import BreakpointsScreen
from smalltown.tui.screens.help import KEYS, REPLAY_KEYS, HelpScreen
from smalltown.tui.screens.inspector import InspectorScreen
from smalltown.tui.screens.timeline import TimelineScreen
from smalltown.tui.widgets.panels import EventLog

ISABELLA, KLAUS = "Isabella Rodriguez", "Klaus Mueller"
SIZE = (140, 44)
START = datetime(2023, 2, 13, 6)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny town, scripted, from 06:00 to 09:10 (snapshots at 06:00, 07:00, 08:00, 09:00)."""
    sim = tiny_sim(tmp_path_factory.mktemp("replay"), "09:10")
    path = sim.save.path
    sim.close()
    return path


def log_text(app: ReplayApp) -> str:
    """The event log's lines as one, unwrapped."""
    return re.sub(r"\s+", " ", " ".join(line.text for line in app.query_one(EventLog).lines))


def tick_of(stamp: str) -> int:
    """The tick of a game time of the first day (10-second ticks from 06:00)."""
    return int((datetime.fromisoformat(stamp) - START).total_seconds()) // 10


def stamp_of(tick: int) -> str:
    return (START + timedelta(seconds=tick * 10)).strftime("%Y-%m-%d %H:%M:%S")


@pytest.mark.asyncio
async def test_the_inspector_shows_the_agent_as_it_was_at_the_scrubbed_tick(recorded: Path) -> None:
    # Isabella's newest memory, and a tick just before it was made
    mem_id, created = query(recorded, "SELECT id, created FROM memories WHERE agent = ? ORDER BY id DESC LIMIT 1",
                            ISABELLA)[0]
    before = tick_of(created) - 1
    then = query(recorded, "SELECT id FROM memories WHERE agent = ? AND created <= ? ORDER BY id DESC",
                 ISABELLA, stamp_of(before))
    app = ReplayApp(recorded)
    async with app.run_test(size=SIZE) as pilot:
        assert app.selected == ISABELLA
        await pilot.press("i")  # at the end of the run: the memory is there
        screen = app.screen
        assert isinstance(screen, InspectorScreen)
        await pilot.press("3")
        await pilot.pause()
        assert str(mem_id) in screen._memories
        assert "state as kept" not in str(screen.query_one("#ins-clock", Static).content)
        await pilot.press("escape")

        app.seek(before)
        await pilot.press("i")
        screen = app.screen
        await pilot.press("3")
        await pilot.pause()
        assert str(mem_id) not in screen._memories
        assert [int(k) for k in screen._memories] == [i for (i,) in then]
        clock = str(screen.query_one("#ins-clock", Static).content)
        assert f"tick {before}" in clock and "replay at" in clock
        await pilot.press("escape")

        app.seek(5)  # ten minutes in: the state kept last is the first snapshot's, before any plan
        await pilot.press("i")
        screen = app.screen
        clock = str(screen.query_one("#ins-clock", Static).content)
        assert "state as kept at Mon 06:00:00" in clock
        assert screen._state is not None and screen._state.plan is None
        await pilot.press("2")
        await pilot.pause()
        assert "no plan yet" in str(screen.query_one("#plan-items", Static).content)
        await pilot.press("escape")

        app.seek(app.history.last_tick)  # at the end: the plan the save holds now
        await pilot.press("i")
        assert app.screen._state.plan is not None


@pytest.mark.asyncio
async def test_the_inspector_retrievals_stop_at_the_scrubbed_tick(recorded: Path) -> None:
    ticks = [t for (t,) in query(recorded, "SELECT tick FROM retrievals WHERE agent = ? ORDER BY id", ISABELLA)]
    assert len(ticks) >= 2
    app = ReplayApp(recorded)
    async with app.run_test(size=SIZE) as pilot:
        app.seek(ticks[1] - 1)  # the first retrieval made, the second not yet
        await pilot.press("i", "4")
        await pilot.pause()
        shown = app.screen.query_one("#ret-body")._retrievals
        assert [r["tick"] for r in shown.values()] == [t for t in ticks if t < ticks[1]][::-1]


@pytest.mark.asyncio
async def test_calls_and_timeline_list_what_happened_up_to_the_scrubbed_tick(recorded: Path) -> None:
    at = 400  # 07:06:40
    # the screens open on the selected agent, as in the live TUI
    calls = query(recorded, "SELECT count(*) FROM llm_calls WHERE tick <= ? AND agent = ?", at, ISABELLA)[0][0]
    events = query(recorded, "SELECT count(*) FROM events WHERE tick <= ? AND kind != 'perceived' AND agent = ?",
                   at, ISABELLA)[0][0]
    assert 0 < calls < query(recorded, "SELECT count(*) FROM llm_calls WHERE agent = ?", ISABELLA)[0][0]
    app = ReplayApp(recorded)
    async with app.run_test(size=SIZE) as pilot:
        app.seek(at)
        await pilot.press("c")
        screen = app.screen
        assert isinstance(screen, CallsScreen)
        assert "up to Mon 07:06:40" in str(screen.query_one("#title", Static).content)
        assert len(screen.table.items) == calls == screen._totals[0]
        assert all(c.tick <= at for c in screen.table.items)
        assert [c.id for c in screen.table.items] == sorted((c.id for c in screen.table.items), reverse=True)
        await pilot.press("comma")  # the replay's keys wait while a screen is on top
        assert app.tick == at and app.screen is screen
        await pilot.press("escape")

        await pilot.press("t")
        screen = app.screen
        assert isinstance(screen, TimelineScreen)
        assert "up to Mon 07:06:40" in str(screen.query_one("#title", Static).content)
        assert len(screen.table.items) == min(events, screen.LIMIT)
        assert max(e.tick for e in screen.table.items) <= at
        assert {e.agent for e in screen.table.items} == {ISABELLA}
        await pilot.press("a")  # its own filters still work: the next agent's events up to then
        assert screen.agent != ISABELLA and screen.table.items
        assert {e.agent for e in screen.table.items} == {screen.agent} and max(e.tick for e in screen.table.items) <= at
        await pilot.press("escape")


@pytest.mark.asyncio
async def test_a_breakpoint_stops_moving_forward_on_its_tick(recorded: Path) -> None:
    first_call = query(recorded, "SELECT tick, task FROM llm_calls WHERE agent = ? AND tick > 0 ORDER BY id LIMIT 1",
                       KLAUS)[0]
    app = ReplayApp(recorded, at=0)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("b")
        screen = app.screen
        assert isinstance(screen, BreakpointsScreen)
        screen.query_one("#agent", Select).value = KLAUS
        screen.query_one("#kind", Select).value = "call"
        screen.query_one("#text", Input).focus()
        await pilot.press(*"no_such_task", "enter")
        assert "no task 'no_such_task'" in str(screen.query_one("#error", Static).content)
        screen.query_one("#text", Input).value = ""
        await pilot.press("enter")
        assert list(app.breakpoints) == [1]
        assert "makes a model call" in str(screen.query_one("#list").get_row_at(0)[1])
        await pilot.press("escape")

        await pilot.press("end")  # seeking forward stops on the breakpoint's tick
        assert app.tick == first_call[0]
        assert f"Breakpoint #1: {KLAUS} asked the model a {first_call[1]!r} question" in log_text(app)
        assert app.selected == KLAUS

        # playing stops there too: the next call of Klaus's
        second = query(recorded, "SELECT tick FROM llm_calls WHERE agent = ? AND tick > ? ORDER BY id LIMIT 1",
                       KLAUS, first_call[0])[0][0]
        await pilot.press("plus", "plus", "plus", "space")
        await wait_until(pilot, lambda: not app.playing, seconds=20)
        assert app.tick == second and app.frame.tick == second and not app.frame.running


@pytest.mark.asyncio
async def test_s_goes_to_the_selected_agents_next_event(recorded: Path) -> None:
    start = 10  # Klaus asleep: his next event is waking, at seven
    tick, text = query(recorded, "SELECT tick, text FROM events WHERE agent = ? AND kind != 'perceived' AND tick > ? "
                                 "ORDER BY id LIMIT 1", KLAUS, start)[0]
    passed = (tick - start) * 10
    assert 60 <= passed < 3600
    app = ReplayApp(recorded, at=start)
    async with app.run_test(size=SIZE) as pilot:
        app._select(KLAUS)
        await pilot.press("s")
        assert app.tick == tick
        assert (f"{KLAUS}'s next event: {text} at {stamp_of(tick)[11:]}, "
                f"after {passed // 60}m of game time.") in log_text(app)
        assert "Breakpoint #0" not in log_text(app)


@pytest.mark.asyncio
async def test_replay_help_lists_replays_keys_and_m_is_gone(recorded: Path) -> None:
    app = ReplayApp(recorded)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("question_mark")
        screen = app.screen
        assert isinstance(screen, HelpScreen) and screen._keys is REPLAY_KEYS
        table = screen.query(Static).first().content
        assert [str(c) for c in table.columns[0].cells] == [k for k, _ in REPLAY_KEYS]
        assert "smalltown replay" in screen.query_one("VerticalScroll").border_title
        await pilot.press("question_mark")
        assert not isinstance(app.screen, HelpScreen)
        assert "m" not in {b.key for b in ReplayApp.BINDINGS if b.action == "memories"}
        assert not hasattr(app, "action_memories")
    assert KEYS != REPLAY_KEYS


def test_every_key_of_replays_help_is_bound() -> None:
    """Each key REPLAY_KEYS names is a binding of the replay app (or the map's own keys)."""
    names = {".": "full_stop", ",": "comma", ">": "greater_than_sign", "<": "less_than_sign",
             "}": "right_curly_bracket", "{": "left_curly_bracket", "+": "plus", "-": "minus",
             "[": "left_square_bracket", "]": "right_square_bracket", "?": "question_mark"}
    bound = {k for b in ReplayApp.BINDINGS for k in b.key.split(",")}
    map_keys = {"click", "shift+arrows", "arrows", "PgUp/PgDn"}
    for keys, _ in REPLAY_KEYS:
        for key in re.split(r" / |, ", keys):
            assert key in map_keys or names.get(key, key) in bound, key


@pytest.mark.asyncio
async def test_replays_moving_keys_move_as_its_help_says(recorded: Path) -> None:
    app = ReplayApp(recorded, at=600)
    async with app.run_test(size=SIZE) as pilot:
        for key, ticks in (("full_stop", 1), ("comma", -1), ("greater_than_sign", 60), ("less_than_sign", -60),
                           ("right_curly_bracket", 360), ("left_curly_bracket", -360)):
            before = app.tick
            await pilot.press(key)
            assert app.tick == before + ticks, key
        await pilot.press("home")
        assert app.tick == 0
        await pilot.press("end")
        assert app.tick == app.history.last_tick
        await pilot.press("right_square_bracket")
        assert app.selected == app.history.names[1]
        await pilot.press("left_square_bracket")
        assert app.selected == app.history.names[0]


def test_a_memory_breakpoint_fires_at_the_tick_the_memory_was_made(recorded: Path) -> None:
    from smalltown.sim.breakpoints import Breakpoint
    from smalltown.sim.history import History

    created, text = query(recorded, "SELECT created, description FROM memories WHERE agent = ? AND created > ? "
                                    "ORDER BY id LIMIT 1", KLAUS, stamp_of(400))[0]
    words = text.split()[-2:]  # a part of it: the first made after 07:06:40 that has it is where it stops
    firsts = query(recorded, "SELECT min(created) FROM memories WHERE agent = ? AND created > ? AND instr(lower("
                             "description), lower(?)) > 0", KLAUS, stamp_of(400), " ".join(words))[0][0]
    with History(recorded) as h:
        found = h.first_hits([Breakpoint(1, "memory", KLAUS, " ".join(words))], 400, h.last_tick)
        assert found is not None and found[0] == tick_of(firsts) and created >= firsts
        assert found[1][0].describe().startswith(f"Breakpoint #1: {KLAUS} remembers: ")
        assert h.first_hits([Breakpoint(1, "memory", KLAUS, "no such words anywhere")], 0, h.last_tick) is None
