"""Nothing is cut at 80x24: the main screens (the town, the inspector's tabs, model calls, the day,
help and the forms) as snapshots at that size, and a check of every line of text each shows: a
text widget whose whole text is known (a Static's, a Label's, a footer key's) must be drawn
whole, not ended in an ellipsis or clipped at its edge; an input's placeholder must fit its box.
Text a widget scrolls (more than it shows, with a scroll bar) is not cut: it is a scroll away."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.text import Text
from textual.app import App
from textual.content import Content
from textual.geometry import Region
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widgets import Input, Label, Static
from textual.widgets._footer import FooterKey

from helpers import tiny_sim, wait_until
from smalltown.tui.app import SmalltownApp

SIZE = (80, 24)
# the screens, by the keys that open them from the town (the tiny town at 10:00, its first agent selected)
SCREENS = {
    "town": [],
    "inspector": ["i"],
    "inspector-plan": ["i", "2"],
    "inspector-memory": ["i", "3"],
    "inspector-retrievals": ["i", "4"],
    "inspector-social": ["i", "5"],
    "calls": ["c"],
    "day": ["D"],
    "help": ["question_mark"],
    "form-until": ["g"],
    "form-breakpoints": ["b"],
    "form-edit-object": ["e"],
    "form-whisper": ["w"],
    "interview": ["a"],
    "timeline": ["t"],
}


def _plain(widget) -> str | None:
    """The whole text a widget holds, when it is text (not a table or a group drawn by rich)."""
    if isinstance(widget, FooterKey):
        return f"{widget.key_display} {widget.description}"
    content = widget.render()
    if isinstance(content, (Text, Content)):
        return content.plain
    return None


def cut_text(screen: Screen) -> list[str]:
    """Each text widget on `screen` whose whole text is not drawn in full at its size."""
    found = []
    for widget in screen.query("*"):
        if not isinstance(widget, (Static, Label, FooterKey)) or not widget.display or widget.region.area == 0:
            continue
        if widget.max_scroll_y > 0 or widget.max_scroll_x > 0:
            continue  # it scrolls: the rest is a scroll away
        whole = _plain(widget)
        if not whole or not whole.strip():
            continue
        lines = widget.render_lines(Region(0, 0, widget.outer_size.width, widget.outer_size.height))
        drawn = " ".join(line.text for line in lines)
        if " ".join(whole.split()) not in " ".join(drawn.split()):
            found.append(f"{widget!r}: {' '.join(whole.split())!r} drawn as {' '.join(drawn.split())!r}")
    for field in screen.query(Input):
        room = field.content_region.width
        if field.display and not field.value and len(field.placeholder) > room:
            found.append(f"{field!r}: placeholder {field.placeholder!r} is {len(field.placeholder)} wide, in {room}")
    return found


async def open_screen(pilot: Pilot, keys: list[str]) -> None:
    app = pilot.app
    for key in keys:
        await pilot.press(key)
    if keys:
        await wait_until(pilot, lambda: len(app.screen_stack) > 1)
    await pilot.pause(0.3)


@pytest.fixture(scope="module")
def town(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny town at 10:00 (a fixed file name: the top bar shows it)."""
    sim = tiny_sim(tmp_path_factory.mktemp("at80"), "10:00")
    path = sim.save.path
    sim.close()
    return path


def app_on(town: Path, tmp_path: Path) -> App:
    from smalltown.scripted import ScriptedBackend
    from smalltown.sim.open import resume

    copy = tmp_path / town.name
    copy.write_bytes(town.read_bytes())
    return SmalltownApp(resume(copy, ScriptedBackend(1)))


@pytest.mark.asyncio
@pytest.mark.parametrize("name", SCREENS)
async def test_nothing_is_cut_at_80x24(town: Path, tmp_path: Path, name: str) -> None:
    app = app_on(town, tmp_path)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        await open_screen(pilot, SCREENS[name])
        assert cut_text(app.screen) == []


# (not model calls: its rows show each call's milliseconds, which differ from run to run)
@pytest.mark.parametrize("name", ["town", "inspector", "inspector-plan", "day", "help", "form-breakpoints",
                                  "form-edit-object"])
def test_snapshot_at_80x24(town: Path, tmp_path: Path, name: str, snap_compare) -> None:
    async def run_before(pilot: Pilot) -> None:
        await open_screen(pilot, SCREENS[name])
        for field in pilot.app.screen.query(Input):  # a blinking cursor is drawn or not by the clock
            field.cursor_blink = False
        await pilot.pause()

    assert snap_compare(app_on(town, tmp_path), terminal_size=SIZE, run_before=run_before)


@pytest.mark.asyncio
async def test_the_check_finds_a_cut_label(town: Path, tmp_path: Path) -> None:
    """The check itself: a label longer than its box is reported, and so is a placeholder."""
    app = app_on(town, tmp_path)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        await open_screen(pilot, ["g"])
        label = app.screen.query_one(Label)
        label.styles.width, label.styles.height = 10, 1
        app.screen.query_one(Input).placeholder = "x" * 200
        await pilot.pause()
        found = cut_text(app.screen)
        assert any("Game time to pause at" in f for f in found) and any("placeholder" in f for f in found)


@pytest.mark.asyncio
@pytest.mark.parametrize("chase", ["until", "agent"])
async def test_the_top_bar_at_its_fullest_is_not_cut(town: Path, tmp_path: Path, chase: str) -> None:
    """Running toward a time (or an agent's next event) with breakpoints set: every part of the
    bar is said, in its short form, at 80 columns."""
    from dataclasses import replace
    from datetime import timedelta

    from smalltown.sim.breakpoints import Breakpoint
    from smalltown.tui.snapshot import Chase
    from smalltown.tui.widgets.panels import ClockBar

    app = app_on(town, tmp_path)
    async with app.run_test(size=SIZE, notifications=False) as pilot:
        now = app.frame.now
        goal = Chase(now, until=now + timedelta(hours=7, minutes=30)) if chase == "until" \
            else Chase(now, agent=app._names[0])
        frame = replace(app.frame, running=True, speed=None, chase=goal,
                        breakpoints=(Breakpoint(1, "talk", None, ""), Breakpoint(2, "reflect", None, "")))
        app.query_one(ClockBar).show(frame)
        await pilot.pause()
        assert cut_text(app.screen) == []
        status = str(app.query_one(ClockBar).query_one("#status", Static).render())
        assert "running" in status and "● 2" in status and "tiny.sqlite" in status
        assert ("→ 17:30" in status) if chase == "until" else ("→ Isabella's event" in status)
