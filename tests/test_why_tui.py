"""In the TUI, the chain behind an action, walked with the keys: the inspector's action opens the
calls that decided it (y), a call shows the retrieval logged with it -- the records it was given,
each with its recency, importance and relevance -- (v) and the actions it decided (o). On a
scripted save of the tiny town; what the screens show is checked against the save's rows."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console
from textual.app import App
from textual.widgets import Static

from helpers import query, tiny_sim, wait_until
from smalltown.tui.reader import SaveReader
from smalltown.tui.screens.calls import CallDetailScreen
from smalltown.tui.screens.inspector import InspectorScreen

AGENT = "Isabella Rodriguez"


@pytest.fixture(scope="module")
def save(tmp_path_factory) -> Path:
    """The tiny town at 9:00 on its first day: Isabella at work, her action decided by her day's
    plan, its schedule and the decomposition of its block."""
    sim = tiny_sim(tmp_path_factory.mktemp("why_tui"), "9:00")
    path = sim.save.path
    sim.close()
    return path


class Host(App[None]):
    def __init__(self, path: Path) -> None:
        super().__init__()
        self.reader = SaveReader(path)

    def on_mount(self) -> None:
        self.push_screen(InspectorScreen(self.reader, AGENT))

    def on_unmount(self) -> None:
        self.reader.close()


def text_of(screen, selector: str) -> str:
    console = Console(width=200, file=io.StringIO(), record=True)
    console.print(screen.query_one(selector, Static).content)
    return console.export_text()


def linked(save: Path) -> tuple[dict, list[int]]:
    """The agent's last "started" event's data, and the calls its refs name (found in the save)."""
    (data,), = query(save, "SELECT data FROM events WHERE agent = ? AND kind = 'started' ORDER BY id DESC LIMIT 1", AGENT)
    data = json.loads(data)
    ids = [query(save, "SELECT id FROM llm_calls WHERE agent = ? AND key = ? AND tick >= ? ORDER BY tick, id LIMIT 1",
                 r.get("agent") or AGENT, r["key"], r["tick"])[0][0] for r in data["calls"]]
    return data, ids


async def test_action_opens_its_call_which_opens_its_retrieval_and_the_action(save):
    data, ids = linked(save)
    assert len(ids) >= 2
    async with Host(save).run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, InspectorScreen))
        await pilot.press("y")  # the action -> the calls that decided it
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, CallDetailScreen))
        screen = pilot.app.screen
        assert screen.call_id == ids[0] and screen._ids == ids
        # step to the call that retrieved for it (the day's plan's), and open its retrieval
        with_retrieval = [i for i in ids if query(save, "SELECT count(*) FROM retrievals r JOIN llm_calls c "
                                                        "ON r.agent = c.agent AND r.tick = c.tick WHERE c.id = ?", i)[0][0]]
        assert with_retrieval
        while screen.call_id != with_retrieval[0]:
            await pilot.press("full_stop")
        await pilot.press("v")
        await pilot.pause()
        shown = text_of(screen, "#retrieval")
        (tick,), = query(save, "SELECT tick FROM llm_calls WHERE id = ?", screen.call_id)
        rows = query(save, "SELECT id, purpose, query FROM retrievals WHERE agent = ? AND tick = ? ORDER BY id", AGENT, tick)
        assert rows
        reader = SaveReader(save)
        try:
            for rid, purpose, q in rows:
                assert f"#{rid} {purpose}  query: {q}" in shown
            for r in reader.call_retrievals(screen.call_id):
                for x in r["results"]:  # each record with its three scores and their total
                    assert (f"{x['id']:>6} " in shown and f"{x['recency']:8.3f} {x['importance']:10.3f} "
                            f"{x['relevance']:9.3f} {x['total']:7.3f}  {x['description']}" in shown)
        finally:
            reader.close()
        # the call -> the actions it decided: the one the inspector started from among them
        await pilot.press("o")
        await pilot.pause()
        assert f"{AGENT}: {data['activity']}" in text_of(screen, "#decided")


async def test_an_action_no_call_decided_says_so(save, tmp_path):
    import shutil
    import sqlite3

    old = tmp_path / "old.sqlite"
    shutil.copy(save, old)
    with sqlite3.connect(old) as conn:  # a save from before the link: actions name no calls
        for name, state in conn.execute("SELECT name, state FROM agents").fetchall():
            s = json.loads(state)
            s.get("action", {}).pop("calls", None)
            conn.execute("UPDATE agents SET state = ? WHERE name = ?", (json.dumps(s), name))
    async with Host(old).run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, InspectorScreen))
        await pilot.press("y")
        await pilot.pause()
        assert isinstance(pilot.app.screen, InspectorScreen)  # nothing to open: a message says why
        assert any("No model call decided this action" in str(n.message) for n in pilot.app._notifications)
