"""Text from a file or a model is shown as text (issue 12): Rich or Textual markup in it is not
obeyed, and its control characters reach the terminal made visible, never raw. A fuzz of hostile
strings (markup, links, escape sequences that set the title, clear the screen or move the cursor,
bell, NUL, C1 controls, bidirectional overrides) sent through a whisper, an object's state, an
agent's name in a world file and model answers, checked in the command line's output and in what
the TUI draws and would write to the terminal."""

from __future__ import annotations

import json
import random
import shutil
import sqlite3
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fakes import QueueBackend, RandomBackend
from helpers import (AGENT, FRAGMENTS, LINK, OBJECT, RAW, TINY, assert_safe, hostile_world, screen_text,
                     store_state, stored_state, terminal_bytes, wait_until)
from smalltown.cli.main import main


def hostile(rng: random.Random, n: int = 8) -> str:
    """A string of fragments at random, never blank."""
    return "x" + "".join(rng.choice(FRAGMENTS) for _ in range(n))


def payload(tag: str) -> str:
    """A tagged hostile text, short enough to fit a table cell on screen: markup that would crash
    a print ([/bold]) or make a live link, a title set, a screen clear, a C1 CSI, a bidi override
    and a NUL."""
    return f"{tag}[/bold]\x1b]0;T\x07{LINK}\x1b[2J\x9b1A\u202eR\x00"


def seen(tag: str) -> str:
    """How the start of `payload(tag)` must show: every bracket literal, ESC as ␛, BEL as ␇."""
    return f"{tag}[/bold]␛]0;T␇{LINK}␛[2J"


def cli(capsys, *argv) -> tuple[int, str]:
    rc = main([str(a) for a in argv])
    out = capsys.readouterr()
    return rc, out.out + out.err


@pytest.fixture(autouse=True)
def wide(monkeypatch) -> None:
    """Rich lays out to 80 columns when not on a terminal; wide enough that nothing is folded."""
    monkeypatch.setenv("COLUMNS", "1000")
    for var in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE"):
        monkeypatch.delenv(var, raising=False)


# --- the one function ------------------------------------------------------------------------


def test_shown_makes_each_kind_of_control_visible_and_keeps_lines_only_when_asked() -> None:
    from smalltown.shown import drop_unshown, shown

    assert shown("\x1b]0;T\x07\x1b[2J") == "␛]0;T␇␛[2J"
    assert shown("a\x00b\x7fc\x9b1A\u202ed\ud800") == "a␀b␡c\\x9b1A\\u202ed\\ud800"
    assert shown("one\r\ntwo\tthree") == "one␍␊two three"
    assert shown("one\r\ntwo\n\tthree\rx", lines=True) == "one\ntwo\n    three␍x"
    assert shown("[/bold] [link=file:///etc/passwd]x[/link] :smile:") == "[/bold] [link=file:///etc/passwd]x[/link] :smile:"
    assert shown(42) == "42"
    assert drop_unshown("a\x1b[2Jb\u202ec\ud800\n") == "a[2Jbc\ufffd"


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=12).map("".join) | st.text())
def test_shown_leaves_no_control_character_raw(text: str) -> None:
    from smalltown.shown import drop_unshown, shown

    assert RAW.search(shown(text)) is None and "\n" not in shown(text)
    assert RAW.search(shown(text, lines=True)) is None
    assert RAW.search(drop_unshown(text)) is None and "\n" not in drop_unshown(text)
    if RAW.search(text) is None and "\n" not in text:
        assert shown(text) == text  # ordinary text is left as it is


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=12).map("".join))
def test_shown_text_is_printed_as_it_reads_never_as_markup(text: str) -> None:
    import io

    from rich.console import Console

    from smalltown.shown import shown, shown_text

    out = io.StringIO()
    Console(file=out, width=10_000, force_terminal=False, color_system=None).print(shown_text(text), end="")
    assert out.getvalue() == shown(text)


@settings(max_examples=200, deadline=None)
@given(st.recursive(st.text() | st.integers() | st.none(),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
                    max_leaves=12))
def test_json_shown_is_the_same_json_with_nothing_raw(data: object) -> None:
    from smalltown.shown import json_shown

    text = json_shown(json.dumps(data, ensure_ascii=False, indent=1))
    assert json.loads(text) == data
    assert RAW.search(text) is None


# --- saves ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def town(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny town at 07:30 on its first day (Isabella is at the cafe), scripted."""
    from smalltown.scripted import ScriptedBackend
    from smalltown.sim.open import create
    from smalltown.world.load import load_world

    world = load_world(TINY)
    path = tmp_path_factory.mktemp("shown") / "town.sqlite"
    sim = create(world, path, ScriptedBackend(world.seed))
    sim.run_until(world.start + timedelta(minutes=90))
    sim.close()
    return path


OBJECT_STATE = f"OBJ[/bold]{LINK}\u202eR"  # what a world file allows in a state: markup, a bidi override


def stranger_save(town: Path, to: Path) -> Path:
    """A copy of the town whose rows a stranger (or a model) wrote: hostile text in a memory, an
    activity, a plan, the summary, an object's state, an event, a conversation, a retrieval and
    a model call (prompt, raw and parsed answer, note)."""
    path = to / "stranger.sqlite"
    shutil.copy(town, path)
    conn = sqlite3.connect(path)
    with conn:
        (mid,) = conn.execute("SELECT max(id) FROM memories WHERE agent = ?", (AGENT,)).fetchone()
        conn.execute("UPDATE memories SET description = ? WHERE id = ?", (payload("MEM"), mid))
        state = stored_state(conn, AGENT)
        state["action"]["activity"] = payload("ACT")
        state["summary"] = payload("SUM") + "\nsecond line"
        plan = state["plan"]
        plan["items"][1][1] = payload("ITEM")
        for b in plan["blocks"]:
            b["activity"] = payload("BLK")
            for a in b.get("actions") or []:
                a["activity"] = payload("STEP")
        store_state(conn, AGENT, state)
        conn.execute("UPDATE agents SET action = ? WHERE name = ?",
                     (payload("ACT") + " @ Hobbs Cafe: cafe: coffee machine", AGENT))
        conn.execute("UPDATE objects SET state = ? WHERE address = ?", (OBJECT_STATE, OBJECT))
        (eid,) = conn.execute("SELECT max(id) FROM events WHERE agent = ?", (AGENT,)).fetchone()
        conn.execute("UPDATE events SET kind = 'reacted', text = ? WHERE id = ?", (f"{AGENT} {payload('EVT')}", eid))
        (rid,) = conn.execute("SELECT max(id) FROM retrievals WHERE agent = ?", (AGENT,)).fetchone()
        conn.execute("UPDATE retrievals SET query = ? WHERE id = ?", (payload("QRY"), rid))
        (cid,) = conn.execute("SELECT max(id) FROM llm_calls WHERE agent = ?", (AGENT,)).fetchone()
        conn.execute("UPDATE llm_calls SET prompt = ?, raw_answer = ?, parsed_answer = ?, note = ? WHERE id = ?",
                     (payload("PRM") + "\nmore of the prompt", payload("RAW"),
                      json.dumps({"answer": payload("PAR")}), payload("NOTE"), cid))
        tick, time = conn.execute("SELECT tick, time FROM events WHERE id = ?", (eid,)).fetchone()
        lines = [{"speaker": AGENT, "text": payload("SAID"), "tells": [], "facts": []},
                 {"speaker": "Maria Lopez", "text": payload("REPLY"), "tells": [], "facts": []}]
        conn.execute("INSERT INTO conversations (tick, time, end_time, place, initiator, other, reason, lines, "
                     "chats, relationships) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                     (tick, time, time, payload("PLACE"), AGENT, "Maria Lopez", payload("WHY"), json.dumps(lines),
                      "{}", json.dumps({AGENT: payload("VIEW"), "Maria Lopez": "a friend"})))
    conn.close()
    return path


@pytest.fixture
def stranger(town: Path, tmp_path: Path) -> Path:
    return stranger_save(town, tmp_path)


# --- the command line ------------------------------------------------------------------------------


def test_whispers_of_hostile_text_are_shown_as_text_by_whisper_and_inspect(town, tmp_path, capsys):
    save = tmp_path / "w.sqlite"
    shutil.copy(town, save)
    rng = random.Random(12)
    texts = [payload("WH"), *(hostile(rng) for _ in range(4))]
    for text in texts:
        rc, out = cli(capsys, "whisper", save, "Isabella", text)
        assert_safe(out)
        if rc == 0:  # (a whisper may be refused; then its message is safe too)
            assert "now thinks:" in out
    rc, out = cli(capsys, "inspect", save, "Isabella", "--memories", "40")
    assert rc == 0
    assert_safe(out, seen("WH"))  # [/bold] crashed it; the title set and the screen clear went through
    rc, out = cli(capsys, "interview", save, "Isabella", "What are you thinking about?")
    assert rc == 0
    assert_safe(out, "WH[/bold]")  # the stand-in quotes her latest thoughts back


def test_a_stranger_save_is_shown_as_text_by_every_command_that_reads_it(stranger, capsys):
    rc, out = cli(capsys, "inspect", stranger, "Isabella")
    assert rc == 0
    assert_safe(out, seen("MEM"), seen("ACT"), seen("SUM"), seen("BLK"), seen("ITEM"), "second line")
    rc, out = cli(capsys, "inspect", stranger, "Isabella", "--retrieve", payload("ASK"))
    assert rc == 0
    assert_safe(out, "ASK[/bold]", LINK, seen("MEM"))  # (the query is quoted as Python does: ESC as \x1b)
    for argv in (("save", "info", stranger), ("save", "check", stranger), ("inspect", stranger, "Isabella", "--json"),
                 ("save", "info", stranger, "--json")):
        rc, out = cli(capsys, *argv)
        assert rc == 0, out
        assert_safe(out)


def test_a_model_answer_is_shown_as_text_by_interview(stranger, capsys, monkeypatch):
    # asked of a model that answers with markup and escapes, over two lines
    answer = payload("ANS") + "\nand a second line"
    monkeypatch.setattr("smalltown.cli.backends.make_backend", lambda *a, **k: QueueBackend(
        {"interview": [{"answer": answer}]}, default=RandomBackend(3)))
    rc, out = cli(capsys, "interview", stranger, "Isabella", payload("Q"), "--as", payload("AS"))
    assert rc == 0
    assert_safe(out, seen("ANS"), seen("Q"), seen("AS"), "\nand a second line")


def test_an_object_state_with_escapes_is_refused_or_shown_as_text(stranger, capsys):
    for state in (payload("ST"), "burning[/bold]\x1b]0;T\x07", OBJECT_STATE):
        rc, out = cli(capsys, "edit-object", stranger, OBJECT, state)
        assert_safe(out)
    rc, out = cli(capsys, "edit-object", stranger, OBJECT, OBJECT_STATE)
    assert rc == 0
    assert_safe(out, OBJECT_STATE.replace("\u202e", "\\u202e"))


# What a world file allows in a name: markup and a live link's markup (no control characters, no
# bidi override nor any invisible character: tests/test_world_names_hostile.py).
NAME = f"Isa[/bold] {LINK}R"
NAME_SEEN = NAME


@pytest.mark.parametrize("bad", ["\x1b]0;T\x07", "\x1b[2J", "\x00", "\x9b1A", "\u2028"])
def test_a_world_whose_names_hold_escapes_is_refused_with_a_safe_message(tmp_path, capsys, bad):
    world = hostile_world(tmp_path, f"Isa {bad}[/bold] Rod")
    for argv in (("world", "check", world), ("run", "--headless", world, "--until", "+1m",
                                              "--save", tmp_path / "s.sqlite")):
        rc, out = cli(capsys, *argv)
        assert rc != 0
        assert_safe(out)
        assert not (tmp_path / "s.sqlite").exists()


def test_names_and_news_from_a_world_are_shown_as_text(tmp_path, capsys):
    # (a fact's and a gathering's names are made of the news: no bidi override, names refuse it)
    world = hostile_world(tmp_path, NAME, news=f"the[/bold] {LINK} <script>alert(1)</script>")
    rc, out = cli(capsys, "world", "check", world)
    assert rc == 0
    assert_safe(out)
    save = tmp_path / "h.sqlite"
    rc, out = cli(capsys, "run", "--headless", world, "--until", "+2m", "--save", save, "--backend", "scripted")
    assert rc == 0
    assert_safe(out, f"{NAME_SEEN} town")  # the run's summary names the world
    rc, out = cli(capsys, "inspect", save, NAME)
    assert rc == 0
    assert_safe(out, NAME_SEEN)
    rc, out = cli(capsys, "eval", "town", save, "--out", tmp_path / "report")
    assert rc == 0
    assert_safe(out, NAME_SEEN, f"the[/bold] {LINK} <script>alert(1)</script> fact",
                f"the[/bold] {LINK} <script>alert(1)</script> gathering")
    written = [p.relative_to(tmp_path / "report") for p in (tmp_path / "report").rglob("*") if p.is_file()]
    assert all(len(p.parts) == 1 or (p.parts[0] == "plots" and len(p.parts) == 2) for p in written), written
    page = (tmp_path / "report" / "report.html").read_text(encoding="utf-8")
    assert "<script>" not in page and "&lt;script&gt;" in page
    for report in ("report.html", "report.md", "report.json"):
        assert RAW.search((tmp_path / "report" / report).read_text(encoding="utf-8")) is None, report
    rc, out = cli(capsys, "eval", "town", save, "--json")
    assert rc == 0
    assert_safe(out)
    assert NAME in json.dumps(json.loads(out), ensure_ascii=False)  # the JSON still says it exactly


# --- the TUI -------------------------------------------------------------------------------------------


def assert_screen(app, *expected: str) -> str:
    text = screen_text(app)
    assert_safe(terminal_bytes(app).replace("\n", ""))
    assert_safe(text, *expected)
    return text


async def test_the_tui_shows_a_stranger_save_as_text(stranger):
    from smalltown.scripted import ScriptedBackend
    from smalltown.sim.open import peek_seed, resume
    from smalltown.tui.app import SmalltownApp
    from smalltown.tui.screens.calls import CallDetailScreen, CallsScreen
    from smalltown.tui.screens.inspector import InspectorScreen
    from smalltown.tui.widgets.map_view import MapView
    from smalltown.tui.screens.timeline import ConversationsScreen, TimelineScreen

    sim = resume(stranger, ScriptedBackend(peek_seed(stranger)))
    app = SmalltownApp(sim, start_paused=True, can_open=False)
    async with app.run_test(size=(220, 60)) as pilot:
        await pilot.pause()
        assert_screen(app, seen("ACT"))  # the agents list
        view = app.query_one(MapView)
        view.set_cursor(app.sim.world.objects[OBJECT].tiles[0])  # what is under the cursor
        await pilot.pause()
        assert_screen(app, OBJECT_STATE.replace("\u202e", "\\u202e"))

        await pilot.press("i")
        await wait_until(pilot, lambda: isinstance(app.screen, InspectorScreen))
        await pilot.pause()
        assert_screen(app, seen("ACT"), seen("SUM"), "second line", "BLK[/bold]")
        await pilot.press("2")  # the plan: its items, blocks and the block's actions (border titles too)
        await pilot.pause()
        assert_screen(app, seen("ITEM"), "BLK[/bold]␛]0;T␇", "STEP[/bold]␛]0;T␇")
        await pilot.press("3")  # the memory stream
        await pilot.pause()
        assert_screen(app, seen("MEM"))
        await pilot.press("4")  # the retrievals
        await pilot.pause()
        assert_screen(app, seen("QRY"))
        await pilot.press("escape")

        await pilot.press("c")
        await wait_until(pilot, lambda: isinstance(app.screen, CallsScreen))
        await pilot.pause()
        assert_screen(app)
        await pilot.press("enter")  # the newest of Isabella's calls: the one a stranger wrote
        await wait_until(pilot, lambda: isinstance(app.screen, CallDetailScreen))
        await pilot.pause()
        assert_screen(app, seen("PRM"), "more of the prompt", seen("RAW"), "PAR[/bold]", seen("NOTE"))
        await pilot.press("escape", "escape")

        await pilot.press("t")
        await wait_until(pilot, lambda: isinstance(app.screen, TimelineScreen))
        await pilot.pause()
        assert_screen(app, "EVT[/bold]␛]0;T␇")
        await pilot.press("escape")

        await pilot.press("d")
        await wait_until(pilot, lambda: isinstance(app.screen, ConversationsScreen))
        await pilot.pause()
        assert_screen(app, seen("PLACE"), seen("WHY"), seen("SAID"), seen("REPLY"), seen("VIEW"))
        await pilot.press("escape")

        await pilot.press("n")  # a tick: the event log gets the town's new events, the agents move
        await wait_until(pilot, lambda: app.frame.tick > 540)
        await pilot.pause()
        assert_screen(app)


async def test_the_tui_shows_names_from_a_world_and_its_own_notes_as_text(tmp_path):
    from smalltown.scripted import ScriptedBackend
    from smalltown.sim.open import create
    from smalltown.tui.app import SmalltownApp
    from smalltown.tui.screens.forms import AskScreen, BreakpointsScreen, EditObjectScreen
    from smalltown.tui.screens.inspector import InspectorScreen
    from smalltown.tui.screens.interview import InterviewScreen
    from smalltown.world.load import load_world

    world = load_world(hostile_world(tmp_path, NAME))
    sim = create(world, tmp_path / "n.sqlite", ScriptedBackend(world.seed))
    app = SmalltownApp(sim, start_paused=True, can_open=False)
    async with app.run_test(size=(220, 60), notifications=True) as pilot:
        await pilot.pause()
        app._select(NAME)
        await pilot.pause()
        assert_screen(app, NAME_SEEN)  # the agents list, the log's "Selected …"
        await pilot.press("i")
        await wait_until(pilot, lambda: isinstance(app.screen, InspectorScreen))
        await pilot.pause()
        assert_screen(app, NAME_SEEN)
        await pilot.press("escape")
        await pilot.press("w")  # the whisper dialog's title names the agent
        await wait_until(pilot, lambda: isinstance(app.screen, AskScreen))
        await pilot.pause()
        assert_screen(app, f"Whisper to {NAME_SEEN}")
        await pilot.press("escape")
        await pilot.press("a")
        await wait_until(pilot, lambda: isinstance(app.screen, InterviewScreen))
        await pilot.pause()
        assert_screen(app, f"Interview {NAME_SEEN}")
        await pilot.press("escape")
        await pilot.press("b")  # breakpoints: the agents to choose from, what is set (or what is wrong)
        await wait_until(pilot, lambda: isinstance(app.screen, BreakpointsScreen))
        app.screen.query_one("#agent").value = NAME
        app.screen.query_one("#kind").value = "memory"
        app.screen.query_one("#text").value = f"MARK[/bold]{LINK}"
        await pilot.click("#add")
        await wait_until(pilot, lambda: "MARK[/bold]" in screen_text(app))
        assert_screen(app, NAME_SEEN, f"MARK[/bold]{LINK}")
        await pilot.press("escape")
        await pilot.press("e")  # an object's state, typed with markup: the form, the log and the notice
        await wait_until(pilot, lambda: isinstance(app.screen, EditObjectScreen))
        await pilot.click("#address")
        app.screen.query_one("#address").value = OBJECT
        app.screen.query_one("#state").value = f"ST[/bold]{LINK}"
        app.screen.query_one("#state").focus()
        await pilot.press("enter")
        await wait_until(pilot, lambda: not isinstance(app.screen, EditObjectScreen))
        await wait_until(pilot, lambda: "ST[/bold]" in screen_text(app))
        assert_screen(app, f"ST[/bold]{LINK}")
        # and the notice in the corner
        await wait_until(pilot, lambda: any(f"ST[/bold]{LINK}" in str(toast.render())
                                            for toast in app.screen.query("Toast")))


async def test_the_replay_shows_a_stranger_save_as_text(stranger):
    from smalltown.tui.replay import ReplayApp
    from smalltown.tui.screens.inspector import InspectorScreen
    from smalltown.tui.screens.timeline import ConversationsScreen

    app = ReplayApp(stranger)
    async with app.run_test(size=(220, 60)) as pilot:
        await pilot.pause()
        app._select(AGENT)
        await pilot.pause()
        assert_screen(app, "EVT[/bold]␛]0;T␇")  # the event log
        await pilot.press("i", "3")  # the inspector's memories, as they were then
        await wait_until(pilot, lambda: isinstance(app.screen, InspectorScreen))
        await pilot.pause()
        assert_screen(app, seen("MEM"))
        await pilot.press("escape")
        await pilot.press("d")
        await wait_until(pilot, lambda: isinstance(app.screen, ConversationsScreen))
        await pilot.pause()
        assert_screen(app, seen("PLACE"), seen("WHY"), seen("SAID"), seen("REPLY"), seen("VIEW"))


async def test_the_tui_interview_shows_a_model_answer_as_text(tmp_path):
    from textual.widgets import Input

    from smalltown.scripted import ScriptedBackend
    from smalltown.sim.open import create
    from smalltown.tui.app import SmalltownApp
    from smalltown.tui.screens.interview import InterviewScreen
    from smalltown.world.load import load_world

    world = load_world(TINY)
    model = QueueBackend({"interview": [{"answer": payload("ANS") + "\nline two"}]}, default=ScriptedBackend(world.seed))
    sim = create(world, tmp_path / "i.sqlite", model)
    app = SmalltownApp(sim, start_paused=True, can_open=False)
    async with app.run_test(size=(220, 60)) as pilot:
        await pilot.pause()
        await pilot.press("a")
        await wait_until(pilot, lambda: isinstance(app.screen, InterviewScreen))
        app.screen.query_one("#persona", Input).value = payload("AS")
        app.screen.query_one("#question", Input).value = payload("Q")
        app.screen.query_one("#question", Input).focus()
        await pilot.press("enter")
        await wait_until(pilot, lambda: "ANS[/bold]" in screen_text(app))
        assert_screen(app, seen("ANS"), "line two", seen("AS"), seen("Q"))
