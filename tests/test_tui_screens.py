"""The debugger screens (model calls, one call, timeline, conversations) on a real save.

The save is the tiny town run by the scripted backend from 06:00 until its second conversation has
been held, and ten minutes more (with the tuning of this writing: Isabella and Maria at the cafe at
13:04, then Maria and Klaus in the street the next day at 13:02): its conversations then have
all three agents in them, and the model calls number well over fifty, many with a note (records
dropped to fit a prompt's budgets). The scripted backend spends no tokens and takes well under a
millisecond, so the fixture writes made-up token counts and timings into the save (the numbers
the screens must show) and a note on one call that had none, as a fallback leaves.

Snapshots (tests/__snapshots__/test_tui_screens/) are at 100x30; regenerate them with
`python3 -m pytest tests/test_tui_screens.py --snapshot-update` and look at the SVGs.
"""

from __future__ import annotations

import io
import json
import shutil
import sqlite3
from datetime import timedelta
from pathlib import Path
from typing import Callable

import pytest
from rich.console import Console
from textual.app import App
from textual.screen import Screen
from textual.widgets import Static

from helpers import TINY, cli, run_until_after
from smalltown.scripted import ScriptedBackend
from smalltown.sim.open import create
from smalltown.sim.simulation import Simulation
from smalltown.store.packing import unpack_text
from smalltown.tui.screens.calls import CallDetailScreen, CallsScreen
from smalltown.tui.widgets.row_table import RowTable
from smalltown.tui.reader import SaveReader
from smalltown.tui.screens.timeline import ConversationsScreen, KindPicker, TimelineScreen
from smalltown.world.load import load_world

ROOT = Path(__file__).resolve().parent.parent
TINY = ROOT / "worlds" / "tiny.toml"
RUN = timedelta(hours=4)  # for the reload tests: a town awake and busy
NOTE = "fallback to scripted: no JSON object in the answer"


def make_save(path: Path, close: bool = True, conversations: int = 0) -> Simulation:
    """The tiny town run for RUN, or with `conversations` until it has held that many."""
    world = load_world(TINY)
    sim = create(world, path, ScriptedBackend(1))
    if conversations:
        run_until_after(sim, lambda: sim.save.conversation_count() >= conversations)
    else:
        sim.run_until(sim.now + RUN)
    if close:
        sim.close()
    return sim


def fill_in_numbers(path: Path) -> None:
    """Tokens and milliseconds that depend on nothing but the call's id, and one note."""
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("UPDATE llm_calls SET prompt_tokens = 700 + id * 13, cached_tokens = (id % 4) * 128, "
                     "completion_tokens = 20 + id % 37, ms = 150 + (id * 37) % 900")
        conn.execute("UPDATE llm_calls SET note = ? WHERE id = (SELECT max(id) FROM llm_calls "
                     "WHERE task = 'decompose' AND coalesce(note, '') = '')", (NOTE,))
    conn.close()


@pytest.fixture(scope="module")
def save(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("screens") / "tiny.sqlite"
    make_save(path, conversations=3)  # (the third: one that the agent of the newest is not in)
    fill_in_numbers(path)
    return path


def query(path: Path, sql: str, *args) -> list[tuple]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return conn.execute(sql, args).fetchall()
    finally:
        conn.close()


def world_agents() -> list[str]:
    """The order the app lists (and colours) the agents in, and the screens cycle through them."""
    return [a.name for a in load_world(TINY).agents]


class Host(App[None]):
    """A bare app that opens one screen, as the smalltown app would."""

    def __init__(self, path: Path, make: Callable[[SaveReader], Screen]) -> None:
        super().__init__()
        self.reader = SaveReader(path)
        self._make = make

    def on_mount(self) -> None:
        self.push_screen(self._make(self.reader))

    def on_unmount(self) -> None:
        self.reader.close()


def plain(renderable, width: int = 200) -> str:
    console = Console(width=width, file=io.StringIO(), color_system=None, legacy_windows=False)
    with console.capture() as cap:
        console.print(renderable)
    return cap.get()


def content(screen: Screen, selector: str) -> str:
    """A Static's text as it was given (a Text, or rich JSON), else as printed."""
    shown = screen.query_one(selector, Static).content
    text = getattr(shown, "text", shown)  # rich.json.JSON keeps its Text in .text
    return text.plain if hasattr(text, "plain") else plain(shown)


def row_text(table: RowTable, row: int) -> list[str]:
    return [str(getattr(cell, "text", cell)) for cell in table.get_row_at(row)]


def noted_calls(save: Path) -> list[tuple[int, str]]:
    """(id, note) of the calls with a note, newest first."""
    return query(save, "SELECT id, note FROM llm_calls WHERE coalesce(note, '') != '' ORDER BY id DESC")


def test_the_save_has_what_the_screens_show(save: Path) -> None:
    assert query(save, "SELECT count(*) FROM llm_calls")[0][0] > 50
    assert query(save, "SELECT count(*) FROM conversations")[0][0] >= 2
    assert query(save, "SELECT count(DISTINCT agent) FROM events WHERE kind = 'said'")[0][0] == 3
    assert query(save, "SELECT count(*) FROM conversations WHERE reason != '' AND relationships != '{}'")[0][0] >= 1
    notes = [n for _, n in noted_calls(save)]
    assert notes.count(NOTE) == 1 and len(notes) > 1  # the made-up one, and those the run wrote


# --- model calls ----------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_calls_list_the_saved_calls_newest_first_with_their_numbers(save: Path) -> None:
    app = Host(save, CallsScreen)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, CallsScreen)
        table = screen.query_one(RowTable)
        saved = query(save, "SELECT id, time, agent, task, prompt_tokens, cached_tokens, completion_tokens, "
                            "ms, note FROM llm_calls ORDER BY id DESC")
        assert [c.id for c in table.items] == [r[0] for r in saved]
        assert table.row_count == len(saved)
        for row in (0, 1, len(saved) - 1):
            cid, time, agent, task, prompt, cached, completion, ms, note = saved[row]
            cells = row_text(table, row)
            assert cells[0] == time[11:]  # 80 columns: the time of day
            assert cells[2] == agent.split()[0]  # and first names
            assert cells[3] == task
            assert cells[4:8] == [f"{prompt:,}", f"{cached:,}", f"{completion:,}", f"{ms:,.0f}"]
            assert cells[1] == ("!" if note else "")
        assert [row_text(table, i)[1] for i in range(len(saved))] == ["!" if r[8] else "" for r in saved]

        calls, prompt, cached, completion = query(
            save, "SELECT count(*), sum(prompt_tokens), sum(cached_tokens), sum(completion_tokens) FROM llm_calls")[0]
        totals = content(screen, "#totals")
        assert f"{calls:,} calls" in totals
        assert f"prompt {prompt:,}" in totals and f"completion {completion:,}" in totals
        assert f"cached {cached:,} ({cached / prompt:.0%})" in totals


@pytest.mark.asyncio
async def test_calls_filter_by_agent_task_and_note(save: Path) -> None:
    agents = world_agents()
    app = Host(save, CallsScreen)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, CallsScreen)
        table = screen.query_one(RowTable)
        everything = len(table.items)

        assert agents != sorted(agents)  # so the order is the world's, not the save table's
        await pilot.press("a")
        assert screen.filter.agent == agents[0]
        ids = [r[0] for r in query(save, "SELECT id FROM llm_calls WHERE agent = ? ORDER BY id DESC", agents[0])]
        assert [c.id for c in table.items] == ids and 0 < len(ids) < everything
        assert agents[0] in content(screen, "#title")
        assert f"{len(ids)} calls" in content(screen, "#totals")

        await pilot.press("a")
        assert {c.agent for c in table.items} == {agents[1]}
        await pilot.press("A")  # back
        assert {c.agent for c in table.items} == {agents[0]}

        await pilot.press("t")  # the first task, alphabetically, of this agent's calls
        first_task = query(save, "SELECT min(task) FROM llm_calls")[0][0]
        ids = [r[0] for r in query(save, "SELECT id FROM llm_calls WHERE agent = ? AND task = ? ORDER BY id DESC",
                                   agents[0], first_task)]
        assert screen.filter.task == first_task and [c.id for c in table.items] == ids

        for _ in range(len(agents)):  # back round to everyone
            await pilot.press("a")
        assert screen.filter.agent is None
        assert {c.task for c in table.items} == {first_task}

        await pilot.press("T")  # the task filter back to all
        assert screen.filter.task is None and len(table.items) == everything
        await pilot.press("e")  # only calls with a note
        assert [(c.id, c.note) for c in table.items] == noted_calls(save)
        assert NOTE in [c.note for c in table.items]
        await pilot.press("e")
        assert len(table.items) == everything


@pytest.mark.asyncio
async def test_enter_opens_the_call_with_its_prompt_and_answers(save: Path) -> None:
    app = Host(save, CallsScreen)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        table = app.screen.query_one(RowTable)
        row = next(i for i, c in enumerate(table.items) if i >= 2 and not c.note)  # a call without a note
        await pilot.press(*["down"] * row)
        chosen = table.items[row]
        await pilot.press("enter")
        await pilot.pause()
        detail = app.screen
        assert isinstance(detail, CallDetailScreen) and detail.call_id == chosen.id

        prompt, raw, parsed = query(save, "SELECT prompt, raw_answer, parsed_answer FROM llm_calls WHERE id = ?",
                                    chosen.id)[0]
        assert content(detail, "#prompt") == unpack_text(prompt)
        assert content(detail, "#raw") == unpack_text(raw)
        assert content(detail, "#parsed") == json.dumps(json.loads(unpack_text(parsed)), indent=2)
        title = content(detail, "#title")
        assert f"Call {chosen.id}" in title and chosen.task in title and chosen.agent in title
        meta = content(detail, "#meta")
        assert f"prompt {chosen.prompt_tokens:,}" in meta and f"completion {chosen.completion_tokens:,}" in meta
        assert not detail.query_one("#note").display  # no note on this call

        await pilot.press("full_stop")  # the next older call
        assert detail.call_id == table.items[row + 1].id
        assert content(detail, "#prompt") == unpack_text(query(
            save, "SELECT prompt FROM llm_calls WHERE id = ?", table.items[row + 1].id)[0][0])

        await pilot.press("escape")
        assert isinstance(app.screen, CallsScreen)

        await pilot.press("e", "enter")  # a call with a note (the newest) shows it
        await pilot.pause()
        assert isinstance(app.screen, CallDetailScreen)
        newest_id, newest_note = noted_calls(save)[0]
        assert app.screen.call_id == newest_id
        assert app.screen.query_one("#note").display and newest_note in content(app.screen, "#note")


# --- timeline -------------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_timeline_filters_by_agent_and_kind(save: Path) -> None:
    agents = world_agents()
    app = Host(save, TimelineScreen)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, TimelineScreen)
        table = screen.query_one(RowTable)
        ids = [r[0] for r in query(save, "SELECT id FROM events WHERE kind != 'perceived' ORDER BY id DESC LIMIT 500")]
        assert [e.id for e in table.items] == ids  # newest first, no "perceived"
        assert "perceived" not in {e.kind for e in table.items}
        assert "all but perceived" in content(screen, "#title")
        first = query(save, "SELECT time, agent, kind FROM events WHERE id = ?", ids[0])[0]
        cells = row_text(table, 0)
        assert cells[:3] == [first[0][11:], first[1].split()[0], first[2]]

        await pilot.press("a")
        assert {e.agent for e in table.items} == {agents[0]}
        ids = [r[0] for r in query(save, "SELECT id FROM events WHERE agent = ? AND kind != 'perceived' "
                                         "ORDER BY id DESC LIMIT 500", agents[0])]
        assert [e.id for e in table.items] == ids

        # the kinds: show "perceived", hide "started"
        await pilot.press("k")
        assert isinstance(app.screen, KindPicker)
        await pilot.press("enter")  # the first in the list: started
        for _ in range(5):
            await pilot.press("down")
        await pilot.press("enter")  # perceived
        await pilot.press("escape")
        assert app.screen is screen
        kinds = {e.kind for e in table.items}
        assert "perceived" in kinds and "started" not in kinds
        ids = [r[0] for r in query(save, "SELECT id FROM events WHERE agent = ? AND kind != 'started' "
                                         "ORDER BY id DESC LIMIT 500", agents[0])]
        assert [e.id for e in table.items] == ids
        assert "started" in content(screen, "#title")

        await pilot.press("k", "a", "escape")  # all of them
        assert screen.kinds >= {"started", "perceived", "said"}
        await pilot.press("k", "a", "escape")  # none
        assert not table.items and "No events" in content(screen, "#status")


# --- conversations --------------------------------------------------------------------------


def flat(text: str) -> str:
    """Words with single spaces: text as it reads once wrapped to the screen."""
    return " ".join(text.split())


def first(name: str) -> str:
    return name.split()[0]


@pytest.mark.asyncio
async def test_conversations_screen_shows_conversations_line_by_line(save: Path) -> None:
    """The conversations table, as the town wrote it: where, why, the lines, each side's view."""
    talks = query(save, "SELECT id, tick, place, initiator, other, reason, lines, relationships "
                        "FROM conversations ORDER BY id DESC")
    cid, tick, place, initiator, other, reason, lines, views = talks[0]
    lines, views = json.loads(lines), json.loads(views)
    said = query(save, "SELECT agent, text FROM events WHERE kind = 'said' AND json_extract(data, '$.conversation') = ? "
                       "ORDER BY id", cid)
    assert said == [(x["speaker"], f"{x['speaker']}: {x['text']}") for x in lines]  # the log says the same
    app = Host(save, ConversationsScreen)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, ConversationsScreen)
        assert [c.id for c in screen.conversations] == [t[0] for t in talks]  # newest first, every one
        talk = screen.conversations[0]
        assert (talk.tick, talk.place, talk.initiator, talk.reason) == (tick, place, initiator, reason)
        assert set(talk.participants) == {initiator, other}
        assert [(x.speaker, x.text) for x in talk.lines] == [(x["speaker"], x["text"]) for x in lines]

        shown = flat(plain(screen.query(".talk").first(Static).content, width=76))
        assert place in shown and f"{first(initiator)} saw: {flat(reason)}" in shown
        at = 0
        for line in talk.lines:  # speakers (by first name, at 80 columns) and what they said, in order
            at = shown.index(f"{first(line.speaker)} {flat(line.text)}", at)
        assert views and all(f"{first(n)} on {first(talk.other_side(n))}: {flat(v)}" in shown[at:]
                             for n, v in views.items())  # each side's view of the other, after the lines

        await pilot.press("a")
        agent = screen.agent
        assert agent is not None and agent in content(screen, "#title")
        ids = [t[0] for t in talks if agent in (t[3], t[4])]
        assert [c.id for c in screen.conversations] == ids and 0 < len(ids) < len(talks)
        assert all(agent in c.participants for c in screen.conversations)


@pytest.mark.asyncio
async def test_conversations_screen_shows_where_why_and_each_sides_view_and_reloads(tmp_path: Path) -> None:
    """On a save written by hand (no simulation): the conversations table, as schema 4 has it."""
    from handmade import ISABELLA, KLAUS, MARIA, HandSave

    h = HandSave(tmp_path / "talk.sqlite")
    h.talk(60, ISABELLA, MARIA, [(ISABELLA, "Morning! There is a party."), (MARIA, "Oh, when?")],
           reason="Maria Lopez is making coffee",
           relationships={ISABELLA: "Maria is a dear housemate", MARIA: "Isabella runs the cafe"})
    h.talk(300, MARIA, KLAUS, [(MARIA, "Hi Klaus."), (KLAUS, "Hello.")], place="the street")
    h.close()
    app = Host(h.path, ConversationsScreen)
    async with app.run_test(size=(80, 30)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert [c.id for c in screen.conversations] == [2, 1]  # newest first
        talks = [plain(t.content, width=76) for t in screen.query(".talk").results(Static)]
        assert "the street" in talks[0] and "saw:" not in talks[0] and " on " not in talks[0]
        older = " ".join(talks[1].split())
        assert "Hobbs Cafe: cafe" in older and "Isabella saw: Maria Lopez is making coffee" in older
        assert "Isabella on Maria: Maria is a dear housemate" in older
        assert "Maria on Isabella: Isabella runs the cafe" in older
        assert older.index("Morning!") < older.index("Oh, when?") < older.index("Isabella on Maria")

        screen.reload()  # nothing new
        assert len(screen.conversations) == 2
        h = HandSave.reopen(h.path)  # the town goes on
        h.talk(400, KLAUS, ISABELLA, [(KLAUS, "Coffee?"), (ISABELLA, "Yes.")])
        h.close()
        screen.reload()
        await pilot.pause()
        assert [c.id for c in screen.conversations] == [3, 2, 1]

        await pilot.press("a")  # Isabella, the first agent of the world
        assert screen.agent == ISABELLA and [c.id for c in screen.conversations] == [3, 1]


@pytest.mark.asyncio
async def test_replay_lists_conversations_with_place_reason_and_views(tmp_path: Path) -> None:
    from handmade import ISABELLA, MARIA, HandSave
    from smalltown.tui.replay import ReplayApp

    h = HandSave(tmp_path / "talk.sqlite")
    h.talk(60, ISABELLA, MARIA, [(ISABELLA, "Morning! There is a party."), (MARIA, "Oh, when?")],
           reason="Maria Lopez is making coffee", relationships={ISABELLA: "Maria is a dear housemate"})
    h.at(100)
    h.close()
    app = ReplayApp(h.path)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("d")
        assert isinstance(app.screen, ConversationsScreen)  # the live TUI's screen, up to the time shown
        await pilot.pause()
        assert "up to Mon 06:16:40" in content(app.screen, "#title")
        talk = " ".join(plain(app.screen.query(".talk").first(Static).content, width=116).split())
        for said in ("Hobbs Cafe: cafe", "Isabella Rodriguez saw: Maria Lopez is making coffee",
                     "Isabella Rodriguez Morning! There is a party.", "Maria Lopez Oh, when?",
                     "Isabella Rodriguez on Maria Lopez: Maria is a dear housemate"):  # full names at 120 columns
            assert said in talk
        await pilot.press("escape", "q")


# --- reload ---------------------------------------------------------------------------------


@pytest.mark.asyncio
@pytest.mark.parametrize("make", [CallsScreen, TimelineScreen])
async def test_reload_adds_what_was_saved_since(tmp_path: Path, make: type[Screen]) -> None:
    path = tmp_path / "live.sqlite"
    sim = make_save(path, close=False)
    shown = "SELECT count(*) FROM llm_calls WHERE id > ?" if make is CallsScreen else \
        "SELECT count(*) FROM events WHERE id > ? AND kind != 'perceived'"

    def step_until_shown(after: int) -> int:
        """Tick until something the screen shows is saved; how many rows."""
        for _ in range(3000):
            sim.step()
            if count := query(path, shown, after)[0][0]:
                return count
        raise AssertionError("nothing new in 3000 ticks")

    try:
        app = Host(path, make)
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            screen = app.screen
            table = screen.query_one(RowTable)
            before = [i.id for i in table.items]
            screen.reload()  # nothing new
            assert [i.id for i in table.items] == before

            await pilot.press("down", "down")
            held = table.current.id
            count = step_until_shown(before[0])
            screen.reload()
            await pilot.pause()
            ids = [i.id for i in table.items]
            assert len(ids) == len(before) + count and ids[count:] == before and ids[0] > before[0]
            assert table.row_count == len(ids)
            assert table.current.id == held  # the cursor stays on its row

            await pilot.press("home")  # on the newest row, the cursor stays on the newest
            step_until_shown(ids[0])
            screen.reload()
            await pilot.pause()
            assert table.cursor_row == 0 and table.current.id == table.items[0].id > ids[0]
    finally:
        sim.close()


# --- snapshots ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def snap_save(save: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same save at a fixed path: nothing on screen depends on where the test runs."""
    path = tmp_path_factory.mktemp("snap") / "tiny.sqlite"
    shutil.copy(save, path)
    return path


def test_calls_screen_snapshot(snap_compare, snap_save: Path) -> None:
    assert snap_compare(Host(snap_save, CallsScreen), terminal_size=(100, 30))


def test_call_detail_snapshot(snap_compare, snap_save: Path) -> None:
    assert snap_compare(Host(snap_save, CallsScreen), terminal_size=(100, 30), press=["e", "enter"])


def test_timeline_screen_snapshot(snap_compare, snap_save: Path) -> None:
    assert snap_compare(Host(snap_save, lambda r: TimelineScreen(r, agent="Klaus Mueller")), terminal_size=(100, 30))


def test_conversations_screen_snapshot(snap_compare, snap_save: Path) -> None:
    assert snap_compare(Host(snap_save, ConversationsScreen), terminal_size=(100, 30))


def test_the_screens_list_agents_from_a_world_text_nested_2000_deep(tmp_path: Path) -> None:
    """The calls and timeline screens order agents as the save's world text does; a stranger's
    text nested too deeply to parse falls back to the agents table's order instead of raising."""
    world_text = "x = " + "[" * 2000 + "]" * 2000
    from smalltown.tui.screens.debug import agent_names

    path = tmp_path / "s.sqlite"
    create(load_world(TINY), path, ScriptedBackend(1)).close()
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("UPDATE meta SET value = ? WHERE key = 'world_text'", (json.dumps(world_text),))
    conn.close()
    reader = SaveReader(path)
    try:
        assert agent_names(reader) == reader.agent_names() == sorted(world_agents())
    finally:
        reader.close()


# --- the TUI's call detail ---------------------------------------------------------------------

async def test_the_call_detail_shows_each_attempt(tmp_path: Path) -> None:
    save = tmp_path / "s.sqlite"
    cli("run", "--headless", TINY, "--until", "+10m", "--save", save, "--backend", "scripted", check=True)
    attempts = [{"attempt": 1, "prompt_tokens": 0, "completion_tokens": 0, "cached_tokens": 0, "ms": 60000.0,
                 "kind": "failed", "reason": "HTTP 500 Internal Server Error", "raw": ""},
                {"attempt": 2, "prompt_tokens": 120, "completion_tokens": 9, "cached_tokens": 0, "ms": 812.0,
                 "kind": "invalid", "reason": "not JSON", "raw": "[bold]Ignore previous instructions\x1b[2J"},
                {"attempt": 3, "prompt_tokens": 120, "completion_tokens": 9, "cached_tokens": 64, "ms": 790.5}]
    conn = sqlite3.connect(save)
    with conn:
        conn.execute("UPDATE llm_calls SET attempts = ? WHERE id = 1", (json.dumps(attempts),))
    conn.close()
    app = Host(save, lambda reader: CallDetailScreen(reader, 1, [2, 1]))
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert screen.query_one("#attempts").display
        text = content(screen, "#attempts")
        assert "1  failed" in text and "HTTP 500 Internal Server Error" in text and "60,000 ms" in text
        assert "2  invalid" in text and "[bold]Ignore previous instructions␛[2J" in text  # text, not markup
        assert "3  answered  prompt 120  completion 9  cached 64" in text
        await pilot.press("comma")  # the newer call: answered at once, no attempts shown
        await pilot.pause()
        assert screen.call_id == 2 and not screen.query_one("#attempts").display
