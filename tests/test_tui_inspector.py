"""The inspector screen, on a real save: the tiny town run from 06:00 to 18:00 with the scripted
backend (deterministic), reflecting at a lower threshold than the default (40 instead of 150), so
that by then Maria has made plans, chatted, and reflected several times, the later times on her own
reflections (an evidence tree of more than one level).

The snapshot (tests/__snapshots__/test_tui_inspector/) is of that save; regenerate it with
`python3 -m pytest tests/test_tui_inspector.py --snapshot-update` and look at the SVG.
"""

from __future__ import annotations

import io
import re
import shutil
import sqlite3
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from rich.console import Console
from textual.app import App
from textual.pilot import Pilot
from textual.widgets import TabbedContent, Tree

from helpers import wait_until
from smalltown.config import Settings
from smalltown.scripted import ScriptedBackend
from smalltown.sim.open import create
from smalltown.sim.simulation import Simulation
from smalltown.tui.screens.inspector import InspectorScreen
from smalltown.tui.widgets.fit_table import FitTable
from smalltown.tui.reader import SaveReader
from smalltown.world.load import load_world

ROOT = Path(__file__).resolve().parent.parent
TINY = ROOT / "worlds" / "tiny.toml"
AGENT = "Maria Lopez"
SIZES = pytest.mark.parametrize("size", [(80, 24), (160, 50)], ids=["80x24", "160x50"])


def make_save(path: Path, hours: float, settings: Settings | None = None) -> Simulation:
    sim = create(load_world(TINY), path, ScriptedBackend(1), settings=settings, overwrite=True)
    if hours:
        sim.run_until(sim.now + timedelta(hours=hours))
    return sim


@pytest.fixture(scope="module")
def save(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # A fixed file name: the screen's header shows it, and the snapshot must not depend on tmp_path.
    path = tmp_path_factory.mktemp("inspector") / "t.sqlite"
    make_save(path, 12, Settings(reflection_threshold=40)).close()
    return path


@pytest.fixture(scope="module")
def data(save: Path) -> SaveReader:
    """The expected values, read straight from the save."""
    reader = SaveReader(save)
    yield reader
    reader.close()


class Host(App[None]):
    """The smallest app that shows the screen."""

    def __init__(self, path: Path, agent: str = AGENT) -> None:
        super().__init__()
        self.reader = SaveReader(path)
        self.agent = agent

    def on_mount(self) -> None:
        self.push_screen(InspectorScreen(self.reader, self.agent))

    def on_unmount(self) -> None:
        self.reader.close()

    @property
    def inspector(self) -> InspectorScreen:
        assert isinstance(self.screen, InspectorScreen)
        return self.screen


def screen_text(app: App) -> str:
    """What the terminal shows, as plain text (as `App.export_screenshot` renders it)."""
    width, height = app.size
    console = Console(width=width, height=height, file=io.StringIO(), force_terminal=True, record=True,
                      legacy_windows=False, safe_box=False)
    console.print(app.screen._compositor.render_update(full=True, screen_stack=app._background_screens))
    return console.export_text()


def flat(text: str) -> str:
    """Words with single spaces: a line of text as it reads once the screen has wrapped it."""
    return " ".join(text.split())


async def drawn(pilot: Pilot, *texts: str) -> str:
    """The screen's text, once every one of `texts` is on it (wrapped or not)."""
    await wait_until(pilot, lambda: all(flat(t) in flat(screen_text(pilot.app)) for t in texts))
    return screen_text(pilot.app)


def cells(table: FitTable, key: str) -> list[str]:
    return [c.plain for c in table.get_row(key)]


def minute(t: str) -> int:
    d = datetime.fromisoformat(t)
    return d.hour * 60 + d.minute


def hhmm(m: int) -> str:
    return f"{m // 60:02d}:{m % 60:02d}"


# --- the sections ------------------------------------------------------------------------------


@SIZES
async def test_summary_shows_the_description_and_the_current_action(save: Path, data: SaveReader, size) -> None:
    state = data.store.agent_state(AGENT)
    action = state["action"]
    summary = state["summary"].splitlines()
    assert summary[0] == "Name: Maria Lopez (age: 21)" and len(summary) > 3
    async with Host(save).run_test(size=size) as pilot:
        text = await drawn(pilot, summary[0])
        for line in summary:  # every line the agent's summary has, wrapped to the screen
            assert flat(line) in flat(text)
        assert f"(as of {state['summary_date']})" in text
        assert action["activity"] in text
        assert f"until {datetime.fromisoformat(action['end']):%H:%M}" in text
        assert "tick 4320" in text and "Mon 2023-02-13 18:00:00" in text and "t.sqlite" in text


@SIZES
async def test_plan_marks_the_current_block_and_action(save: Path, data: SaveReader, size) -> None:
    plan, action = data.store.agent_state(AGENT)["plan"], data.store.agent_state(AGENT)["action"]
    start = minute(action["start"])
    current = next(i for i, b in enumerate(plan["blocks"]) if b["start"] <= start < b["start"] + b["minutes"])
    block = plan["blocks"][current]
    async with Host(save).run_test(size=size) as pilot:
        await pilot.press("2")
        screen = pilot.app.inspector
        await wait_until(pilot, lambda: screen.query_one("#plan-actions", FitTable).row_count > 0)
        blocks = screen.query_one("#plan-blocks", FitTable)
        assert blocks.row_count == len(plan["blocks"])
        marks = [cells(blocks, str(i))[0] for i in range(len(plan["blocks"]))]
        assert marks == ["▶" if i == current else "" for i in range(len(plan["blocks"]))]
        assert cells(blocks, str(current))[1:4] == [hhmm(block["start"]), str(block["minutes"]), block["activity"]]
        assert blocks.cursor_key == str(current)

        actions = screen.query_one("#plan-actions", FitTable)
        assert actions.row_count == len(block["actions"])
        marked = [cells(actions, str(j))[3] for j in range(len(block["actions"])) if cells(actions, str(j))[0]]
        # each action with its own object: "activity @ arena: object"
        arena, obj = action["address"].split(":")[1:]
        assert marked == [f"{action['activity']} @ {arena}: {obj}"]

        text = screen_text(pilot.app)
        assert re.search(rf"▶\s+{hhmm(block['start'])}\s+{block['minutes']}\s+{re.escape(block['activity'])}", text)
        assert re.search(rf"▶\s+{hhmm(start)}\s+\d+\s+{re.escape(action['activity'])} @ {arena}", text)
        when, what = plan["items"][0]  # the day in broad strokes: [time, activity] items
        assert f"1. {when} {what}" in text

        # Another block's actions, with the cursor; nothing marked there.
        await pilot.press("up")
        await pilot.pause()
        assert "(current block)" not in actions.border_title
        assert all(not cells(actions, k)[0] for k in actions.row_keys)


@SIZES
async def test_memory_list_filters_by_kind_with_keys(save: Path, data: SaveReader, size) -> None:
    def ids(*kinds: str) -> list[str]:
        return [str(m.id) for m in data.memories(AGENT, kinds or None, 200)]

    assert all(ids(k) for k in ("observation", "reflection", "plan", "chat"))  # the save has each kind
    async with Host(save).run_test(size=size) as pilot:
        await pilot.press("3")
        await pilot.pause()
        table = pilot.app.inspector.query_one("#mem-table", FitTable)
        assert table.row_keys == ids()
        for key, kind, short in [("e", "reflection", "refl"), ("c", "chat", "chat"), ("l", "plan", "plan"),
                                 ("o", "observation", "obs")]:
            await pilot.press(key)
            await pilot.pause()
            assert table.row_keys == ids(kind)
            assert {cells(table, k)[1] for k in table.row_keys} == {short}
            assert pilot.app.inspector.kind == kind
        await pilot.press("a")
        await pilot.pause()
        assert table.row_keys == ids()

        # The newest record first, with its columns: time, kind, importance, description, evidence.
        await pilot.press("e")
        await pilot.pause()
        newest = data.memories(AGENT, ("reflection",), 1)[0]
        assert cells(table, str(newest.id)) == [f"{newest.created:%H:%M:%S}", "refl", str(newest.importance),
                                                newest.description, " ".join(map(str, newest.evidence))]
        assert table.cursor_key == str(newest.id)
        text = screen_text(pilot.app)
        assert f"{len(ids('reflection'))} records" in text
        assert f"#{newest.id} reflection" in text  # the detail line of the highlighted record


async def test_memory_filter_is_clickable(save: Path, data: SaveReader) -> None:
    async with Host(save).run_test(size=(80, 24)) as pilot:
        await pilot.press("3")
        text = await drawn(pilot, "kind ")
        line = next(l for l in text.splitlines() if l.lstrip().startswith("kind "))
        await pilot.click("#mem-filter", offset=(line.index("chat"), 0))
        await pilot.pause()
        table = pilot.app.inspector.query_one("#mem-table", FitTable)
        assert table.row_keys == [str(m.id) for m in data.memories(AGENT, ("chat",))]


@SIZES
async def test_a_reflection_opens_its_evidence_tree(save: Path, data: SaveReader, size) -> None:
    # A reflection citing another reflection: the tree has two levels of reflections.
    reflections = data.memories(AGENT, ("reflection",))
    top = next(m for m in reflections if any(data.memory(e).kind == "reflection" for e in m.evidence))
    inner = next(data.memory(e) for e in top.evidence if data.memory(e).kind == "reflection")
    async with Host(save).run_test(size=size) as pilot:
        await pilot.press("e")
        await pilot.pause()
        screen = pilot.app.inspector
        table = screen.query_one("#mem-table", FitTable)
        for _ in range(table.row_keys.index(str(top.id))):
            await pilot.press("down")
        await pilot.press("enter")
        await pilot.pause()
        tree = screen.query_one("#evidence", Tree)
        assert screen.evidence_open and tree.has_focus
        assert tree.root.data == top and top.description in tree.root.label.plain
        children = tree.root.children
        assert [c.data.id for c in children] == list(top.evidence)
        for child, eid in zip(children, top.evidence):
            assert data.memory(eid).description[:100] in child.label.plain
        text = screen_text(pilot.app)
        assert f"Evidence of #{top.id}" in text
        assert f"#{top.evidence[0]} {data.memory(top.evidence[0]).kind}" in text

        # The cited reflection opens in turn (lazily: its children are added when it expands).
        node = next(c for c in children if c.data.id == inner.id)
        assert node.allow_expand and not node.children
        for _ in range(children.index(node) + 1):
            await pilot.press("down")
        await pilot.press("enter")
        await pilot.pause()
        assert node.is_expanded
        assert [c.data.id for c in node.children] == list(inner.evidence)
        for child, eid in zip(node.children, inner.evidence):
            assert data.memory(eid).description[:100] in child.label.plain
        assert f"#{inner.evidence[0]} {data.memory(inner.evidence[0]).kind}" in screen_text(pilot.app)

        # escape closes the tree first, then the screen
        await pilot.press("escape")
        assert not screen.evidence_open and pilot.app.screen is screen
        await pilot.press("escape")
        assert not isinstance(pilot.app.screen, InspectorScreen)


async def test_evidence_citing_a_record_above_it_is_marked_not_looped(save: Path, data: SaveReader,
                                                                      tmp_path: Path) -> None:
    # A loop the simulation never makes (evidence is always older), made by hand in a copy:
    # the reflection's first cited record cites the reflection back.
    path = tmp_path / "loop.sqlite"
    shutil.copy(save, path)
    top = data.memories(AGENT, ("reflection",))[0]
    first = top.evidence[0]
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("UPDATE memories SET evidence=? WHERE id=?", (f"[{top.id}]", first))
    conn.close()
    async with Host(path).run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        screen = pilot.app.inspector
        assert screen.open_evidence(top.id)
        await pilot.pause()
        tree = screen.query_one("#evidence", Tree)
        node = tree.root.children[0]
        assert node.data.id == first and node.allow_expand
        node.expand()
        await pilot.pause()
        (back,) = node.children
        assert back.data.id == top.id and not back.allow_expand
        assert "already above" in back.label.plain


async def test_a_record_without_evidence_opens_nothing(save: Path, data: SaveReader) -> None:
    async with Host(save).run_test(size=(80, 24)) as pilot:
        await pilot.press("o", "enter")
        await pilot.pause()
        assert not pilot.app.inspector.evidence_open


@SIZES
async def test_retrievals_show_their_query_and_scores(save: Path, data: SaveReader, size) -> None:
    retrievals = data.retrievals(AGENT, 30)
    newest = retrievals[0]
    async with Host(save).run_test(size=size) as pilot:
        await pilot.press("4")
        await pilot.pause()
        screen = pilot.app.inspector
        listing = screen.query_one("#ret-list", FitTable)
        assert listing.row_keys == [str(r["id"]) for r in retrievals]
        assert listing.cursor_key == str(newest["id"])
        results = screen.query_one("#ret-results", FitTable)
        assert [c.label.plain for c in results.columns.values()] == [
            "id", "kind", "recency", "importance", "relevance", "total", "description"]
        assert results.row_count == len(newest["results"])
        for key, r in zip(results.row_keys, newest["results"]):
            row = cells(results, key)
            assert row[0] == str(r["id"])
            assert row[2:6] == [f"{r[k]:.3f}" for k in ("recency", "importance", "relevance", "total")]
        text = screen_text(pilot.app)
        assert newest["purpose"] in text and newest["query"][:30] in text and newest["time"] in text
        first = newest["results"][0]
        assert re.search(r"\s+".join(f"{first[k]:.3f}" for k in ("recency", "importance", "relevance", "total")),
                         text)

        # Another retrieval: its records.
        await pilot.press("down")
        await pilot.pause()
        second = retrievals[1]
        assert results.row_count == len(second["results"])
        assert cells(results, results.row_keys[0])[5] == f"{second['results'][0]['total']:.3f}"

        # A returned record with evidence opens its tree (in the Memory tab).
        n, cited = next((n, x) for n, x in enumerate(second["results"]) if data.memory(x["id"]).evidence)
        results.focus()
        for _ in range(n):
            await pilot.press("down")
        await pilot.press("enter")
        await pilot.pause()
        assert screen.evidence_open and screen.query_one(TabbedContent).active == "memory"
        assert screen.query_one("#evidence", Tree).root.data.id == cited["id"]


async def test_before_the_first_morning(tmp_path: Path) -> None:
    make_save(tmp_path / "t.sqlite", 0).close()
    async with Host(tmp_path / "t.sqlite").run_test(size=(80, 24)) as pilot:
        text = await drawn(pilot, "no action yet")
        assert "Summary  —" in text  # no summary before the agent's first morning
        await pilot.press("2")
        await drawn(pilot, "no plan yet")
        await pilot.press("4")
        await drawn(pilot, "No retrievals yet.")


# --- reloading -----------------------------------------------------------------------------------


async def test_reload_follows_a_live_save_and_r_refreshes(tmp_path: Path) -> None:
    """The app's contract: the simulation commits ticks while the screen is open, and calls
    reload() after each; the screen reads its own connection and keeps up."""
    sim = make_save(tmp_path / "t.sqlite", 2)
    try:
        async with Host(tmp_path / "t.sqlite").run_test(size=(80, 24)) as pilot:
            await pilot.press("2")
            await pilot.pause()
            screen = pilot.app.inspector
            table = screen.query_one("#mem-table", FitTable)
            blocks = screen.query_one("#plan-blocks", FitTable)
            before_block = screen._current_block
            assert before_block is not None
            await pilot.press("3")
            await pilot.pause()

            sim.run_until(sim.now + timedelta(hours=2))
            screen.reload()
            screen.reload()  # more calls than re-reads: at most one every RELOAD_SECONDS
            await wait_until(pilot, lambda: f"tick {sim.tick}" in screen_text(pilot.app))
            newest = str(SaveReader(tmp_path / "t.sqlite").memories(AGENT, limit=1)[0].id)
            assert table.row_keys[0] == newest and table.cursor_key == newest  # follows the newest
            await pilot.press("2")
            await pilot.pause()
            assert screen._current_block != before_block
            assert blocks.cursor_key == str(screen._current_block)  # the cursor follows the current block

            # r re-reads at once
            sim.run_until(sim.now + timedelta(minutes=30))
            await pilot.press("r")
            await pilot.pause()
            assert f"tick {sim.tick}" in screen_text(pilot.app)
            assert screen.kind is None and pilot.app.screen is screen
    finally:
        sim.close()


async def test_reload_keeps_the_filter_and_the_open_tree(save: Path, data: SaveReader) -> None:
    async with Host(save).run_test(size=(80, 24)) as pilot:
        await pilot.press("e", "down", "enter")
        await pilot.pause()
        screen = pilot.app.inspector
        root = screen.query_one("#evidence", Tree).root.data
        await pilot.press("r")
        await pilot.pause()
        assert screen.kind == "reflection" and screen.evidence_open
        assert screen.query_one("#evidence", Tree).root.data == root
        assert screen.query_one("#mem-table", FitTable).cursor_key == str(data.memories(AGENT, ("reflection",))[1].id)


# --- the snapshot --------------------------------------------------------------------------------


def test_snapshot_memory_with_a_reflection_tree(snap_compare, save: Path, data: SaveReader) -> None:
    # The reflections; the evidence of the newest one that cites a reflection open, and the first
    # reflection it cites opened in turn.
    reflections = data.memories(AGENT, ("reflection",))
    n, top = next((n, m) for n, m in enumerate(reflections)
                  if any(data.memory(e).kind == "reflection" for e in m.evidence))
    k = next(k for k, e in enumerate(top.evidence) if data.memory(e).kind == "reflection")
    assert snap_compare(Host(save), terminal_size=(100, 30),
                        press=["e", *["down"] * n, "enter", *["down"] * (k + 1), "enter"])
