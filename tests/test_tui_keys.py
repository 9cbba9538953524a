"""Every key the help screens and the README promise does what they say, in the live TUI (on a
world and on a save) and in replay; a key bound without a row in help, or a row in help without a
key, fails here. Each key is pressed on a fresh app and its effect checked."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Callable

import pytest
from textual.command import CommandPalette
from textual.widgets import Input

from helpers import query, tiny_sim, wait_until
from smalltown.scripted import ScriptedBackend
from smalltown.cli.backends import choose
from smalltown.sim.open import RunOptions, open_run
from smalltown.tui.app import SmalltownApp
from smalltown.tui.keys import BINDINGS
from smalltown.tui.replay import ReplayApp
from smalltown.tui.screens.calls import CallsScreen
from smalltown.tui.screens.day import DayScreen
from smalltown.tui.screens.forms import AskScreen, BreakpointsScreen, EditObjectScreen
from smalltown.tui.screens.help import KEYS, REPLAY_KEYS, HelpScreen
from smalltown.tui.screens.inspector import InspectorScreen
from smalltown.tui.screens.interview import InterviewScreen
from smalltown.tui.screens.models import ModelsScreen
from smalltown.tui.screens.timeline import ConversationsScreen, TimelineScreen
from smalltown.tui.widgets.map_view import MapView
from smalltown.tui.widgets.panels import EventLog

ROOT = Path(__file__).resolve().parent.parent
SIZE = (100, 32)

# how help and the README write a key -> Textual's name for it
NAMES = {"+": "plus", "-": "minus", "[": "left_square_bracket", "]": "right_square_bracket",
         "?": "question_mark", "esc": "escape", ".": "full_stop", ",": "comma", "<": "less_than_sign",
         ">": "greater_than_sign", "{": "left_curly_bracket", "}": "right_curly_bracket"}
# what Textual and the widgets handle, not an app binding (each still checked below)
WIDGET_KEYS = {"click", "shift+arrows", "arrows", "PgUp", "PgDn", "tab", "ctrl+p"}


def help_keys(rows: tuple[tuple[str, str], ...]) -> set[str]:
    """The keys a help list names, in Textual's names: "S / F" -> {"S", "F"}."""
    keys = set()
    for key, _ in rows:
        for part in re.split(r" / |, |/(?=\w)", key):
            keys.add(NAMES.get(part.strip(), part.strip()))
    return keys


def bound(bindings) -> set[str]:
    return {k for b in bindings for k in b.key.split(",")} - {"equals_sign"}  # (= is + unshifted)


def readme_keys(doc: str = "README.md") -> set[str]:
    """The keys in a document's key table (its first column's `code` spans): the README's, or
    docs/tui.md's, where each key is told in full."""
    text = (ROOT / doc).read_text()
    table = text[text.index("| key | does |"):]
    table = table[:table.index("\n\n")]
    keys = set()
    for row in table.splitlines()[2:]:
        for key in re.findall(r"`([^`]+)`", row.split("|")[1]):
            keys.add(NAMES.get(key, key))
    return keys


def test_help_lists_every_key_the_live_tui_binds_and_no_other() -> None:
    assert help_keys(KEYS) - WIDGET_KEYS == bound(BINDINGS)


def test_replays_help_lists_every_key_replay_binds_and_no_other() -> None:
    assert help_keys(REPLAY_KEYS) - WIDGET_KEYS == bound(ReplayApp.BINDINGS)


def test_the_readmes_key_table_agrees_with_help() -> None:
    assert readme_keys() - WIDGET_KEYS == bound(BINDINGS), "README's key table vs the live TUI's keys"


def test_the_tui_guides_key_table_agrees_with_help() -> None:
    assert readme_keys("docs/tui.md") - WIDGET_KEYS == bound(BINDINGS), "docs/tui.md's key table vs the live TUI's keys"


# --- the live TUI ----------------------------------------------------------------------------

Check = Callable[[SmalltownApp, dict], bool]


def screen(kind: type) -> Check:
    return lambda app, before: isinstance(app.screen, kind)


def log_says(text: str) -> Check:
    return lambda app, before: text in " ".join(line.text for line in app.query_one(EventLog).lines)


LIVE: dict[str, Check] = {
    "space": lambda app, b: app.frame.running,
    "n": lambda app, b: app.frame.tick == b["tick"] + 1,
    "s": lambda app, b: app.frame.stopped is not None and app.frame.tick > b["tick"],
    "g": screen(AskScreen),
    "plus": lambda app, b: app.frame.speed != b["speed"],
    "minus": lambda app, b: app.frame.speed != b["speed"],
    "b": screen(BreakpointsScreen),
    "p": lambda app, b: app.query_one(EventLog).show_perceived != b["perceived"],
    "right_square_bracket": lambda app, b: app.selected != b["selected"],
    "left_square_bracket": lambda app, b: app.selected != b["selected"],
    "f": lambda app, b: app.following,
    "L": lambda app, b: app.query_one(MapView).belief_layer,
    "i": screen(InspectorScreen),
    # the tiny town has no economy: the town screen's key is off (tests/test_tui_economy.py: on)
    "T": lambda app, b: app.check_action("town", ()) is False and len(app.screen_stack) == 1,
    "c": screen(CallsScreen),
    "m": screen(ModelsScreen),
    "t": screen(TimelineScreen),
    "d": screen(ConversationsScreen),
    "D": screen(DayScreen),
    "w": screen(AskScreen),
    "a": screen(InterviewScreen),
    "e": screen(EditObjectScreen),
    "ctrl+s": lambda app, b: query(app.sim.save.path, "SELECT COUNT(*) FROM snapshots")[0][0] > b["snapshots"],
    "S": screen(AskScreen),
    "F": screen(AskScreen),
    "O": screen(AskScreen),
    "r": screen(AskScreen),
    "question_mark": screen(HelpScreen),
    "q": lambda app, b: app.return_code == 0,
    "ctrl+c": lambda app, b: app.return_code == 0,
    "ctrl+p": screen(CommandPalette),
    "tab": lambda app, b: app.focused is not b["focused"],
    "shift+right": lambda app, b: app.query_one(MapView).cursor is not None,
}
# esc gives up a run until (g) or a step (s): pressed after g, in its own test below


def test_every_live_key_has_a_check() -> None:
    assert bound(BINDINGS) - {"escape"} <= LIVE.keys()


def live_sim(tmp_path: Path, source: str):
    """The tiny town opened as `smalltown run` opens it: a new world, or a save it continues."""
    sim = tiny_sim(tmp_path, "06:05")
    if source == "world":
        return sim
    path = sim.save.path
    sim.close()
    sim, _ = open_run(path, RunOptions(backend=choose("scripted")))
    return sim


def observe(app: SmalltownApp) -> dict:
    return {"tick": app.frame.tick, "speed": app.frame.speed, "selected": app.selected,
            "perceived": app.query_one(EventLog).show_perceived, "focused": app.focused,
            "snapshots": query(app.sim.save.path, "SELECT COUNT(*) FROM snapshots")[0][0]}


@pytest.mark.asyncio
@pytest.mark.parametrize("source", ["world", "save"])
@pytest.mark.parametrize("key", sorted(LIVE))
async def test_each_live_key_does_what_help_says(tmp_path: Path, source: str, key: str) -> None:
    sim = live_sim(tmp_path, source)
    app = SmalltownApp(sim)  # paused, as the TUI opens
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert not app.frame.running
        before = observe(app)
        await pilot.press(key)
        await wait_until(pilot, lambda: LIVE[key](app, before), seconds=20)


@pytest.mark.asyncio
async def test_esc_gives_up_a_run_until(tmp_path: Path) -> None:
    app = SmalltownApp(tiny_sim(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("g")
        app.screen.query_one("#answer", Input).value = "+365d"  # (the tiny town runs a day in seconds)
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.frame.running)
        await pilot.press("escape")
        await wait_until(pilot, lambda: not app.frame.running)
        assert app.frame.now.year == 2023  # stopped short of a year on
        assert "Stopped short" in " ".join(line.text for line in app.query_one(EventLog).lines)


@pytest.mark.asyncio
async def test_the_arrows_scroll_a_map_larger_than_its_view(tmp_path: Path) -> None:
    app = SmalltownApp(tiny_sim(tmp_path))
    async with app.run_test(size=(60, 20)) as pilot:
        view = app.query_one(MapView)
        view.focus()
        await pilot.pause()
        start = view.scroll_offset
        await pilot.press("right", "down", "pagedown")
        await wait_until(pilot, lambda: view.scroll_offset != start)
        await pilot.press("pageup")


# --- replay ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    sim = tiny_sim(tmp_path_factory.mktemp("keys"), "09:10")
    path = sim.save.path
    sim.close()
    return path


MIDDLE = 600  # tick 600 = 07:40 (the run ends at 09:10, tick 1,140)
REPLAY: dict[str, Callable[[ReplayApp, dict], bool]] = {
    "full_stop": lambda app, b: app.tick == MIDDLE + 1,
    "comma": lambda app, b: app.tick == MIDDLE - 1,
    "greater_than_sign": lambda app, b: app.tick == MIDDLE + 60,
    "less_than_sign": lambda app, b: app.tick == MIDDLE - 60,
    "right_curly_bracket": lambda app, b: app.tick == MIDDLE + 360,
    "left_curly_bracket": lambda app, b: app.tick == MIDDLE - 360,
    "home": lambda app, b: app.tick == 0,
    "end": lambda app, b: app.tick == app.history.last_tick,
    "space": lambda app, b: app.playing,
    "plus": lambda app, b: app.frame.speed != b["speed"],
    "minus": lambda app, b: app.frame.speed != b["speed"],
    "g": lambda app, b: isinstance(app.screen, AskScreen),
    "s": lambda app, b: app.tick > MIDDLE,
    "b": lambda app, b: isinstance(app.screen, BreakpointsScreen),
    "right_square_bracket": lambda app, b: app.selected != b["selected"],
    "left_square_bracket": lambda app, b: app.selected != b["selected"],
    "L": lambda app, b: app.query_one(MapView).belief_layer,
    "i": lambda app, b: isinstance(app.screen, InspectorScreen),
    "T": lambda app, b: app.check_action("town", ()) is False and len(app.screen_stack) == 1,  # (no economy)
    "c": lambda app, b: isinstance(app.screen, CallsScreen),
    "t": lambda app, b: isinstance(app.screen, TimelineScreen),
    "d": lambda app, b: isinstance(app.screen, ConversationsScreen),
    "D": lambda app, b: isinstance(app.screen, DayScreen),
    "m": lambda app, b: isinstance(app.screen, ModelsScreen),
    "question_mark": lambda app, b: isinstance(app.screen, HelpScreen),
    "q": lambda app, b: app.return_code is not None,
    "ctrl+p": lambda app, b: isinstance(app.screen, CommandPalette),
}


def test_every_replay_key_has_a_check() -> None:
    assert bound(ReplayApp.BINDINGS) <= REPLAY.keys()


@pytest.mark.asyncio
@pytest.mark.parametrize("key", sorted(REPLAY))
async def test_each_replay_key_does_what_its_help_says(recorded: Path, key: str) -> None:
    app = ReplayApp(recorded, at=MIDDLE)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        if key == "minus":  # replay starts at its slowest: faster first, so that slower shows
            await pilot.press("plus")
        before = {"speed": app.frame.speed, "selected": app.selected}
        await pilot.press(key)
        await wait_until(pilot, lambda: REPLAY[key](app, before), seconds=20)
