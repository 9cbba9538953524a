"""The day at a glance: a row per agent across one game day, a cell per few minutes, coloured by
what it was doing (the store's day spans, store/day.py). The cursor's cell is described below;
enter (or a click) picks that agent and moment: the replay goes there, the live TUI selects the
agent and says how to replay it."""

from __future__ import annotations

import shlex
import time
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Callable

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import ScrollableContainer
from textual.geometry import Region
from textual.screen import Screen
from textual.widgets import Static

from smalltown.lang import gerund
from smalltown.shown import shown
from smalltown.store.day import CATEGORIES, Day, Span
from smalltown.tui.palette import ACTIVITY_SYMBOLS

SLOTS = (10, 15, 20, 30)  # minutes a cell, the finest that fits the width (else 30, scrolled)
RELOAD_SECONDS = 2.0  # a live view re-reads the save at most this often
NAME_WIDTH = 16  # the names column, a space after it
# (symbol, background) of each category: a symbol too, so the view reads without colour
LOOKS: dict[str, tuple[str, str]] = {
    "sleeping": (ACTIVITY_SYMBOLS["sleeping"], "#1c3d7a"), "talking": (ACTIVITY_SYMBOLS["talking"], "#2b8a3e"),
    "eating": (ACTIVITY_SYMBOLS["eating"], "#d9480f"), "working": (ACTIVITY_SYMBOLS["working"], "#a61e4d"),
    "studying": (ACTIVITY_SYMBOLS["studying"], "#0b7285"), "exercising": (ACTIVITY_SYMBOLS["exercising"], "#5c940d"),
    "leisure": (ACTIVITY_SYMBOLS["leisure"], "#862e9c"), "walking": ("·", "#495057"),
    "gathering": ("!", "#f08c00"), "other": (" ", "#343a40"),
}
WORDS = {"leisure": "at leisure", "other": "busy"}  # how a category reads in a sentence, when not its name
LABELS = {"sleeping": "sleep", "talking": "talk", "eating": "eat", "working": "work", "studying": "study",
          "exercising": "exercise", "walking": "walk"}  # the legend's words: it fits 100 columns


def slot_minutes(width: int) -> int:
    """The finest cell that shows the whole day in `width` columns (30 minutes, scrolled, if none)."""
    room = width - NAME_WIDTH - 2  # the vertical scrollbar
    return next((m for m in SLOTS if 24 * 60 // m <= room), SLOTS[-1])


def place_name(place: str) -> str:
    return place.replace(":", ": ") if place else "an unknown place"


def describe(span: Span) -> str:
    """The cell below the grid: "who 14:10–15:00 working at sector: arena (its activities), with whom"."""
    where = place_name(span.place)
    if span.category == "walking":
        what = f"walking to {where}"
    elif span.category == "gathering":
        what = f"at {span.gathering}, {where}"
    else:
        what = f"{WORDS.get(span.category, span.category)} at {where}"
    acts = [gerund(a) for a in span.activities if a.lower() != span.category]
    if acts and span.category != "talking":
        what += " (" + ", ".join(acts[:3]) + (", …" if len(acts) > 3 else "") + ")"
    others = list(span.others[:4]) + ([f"{len(span.others) - 4} more"] if len(span.others) > 4 else [])
    with_ = (", with " + ", ".join(others[:-1]) + (" and " if len(others) > 1 else "") + others[-1]) if others else ""
    return f"{span.agent} {span.start:%H:%M}–{span.end:%H:%M} {what}{with_}"


def replay_hint(save: Path, agent: str, when: datetime) -> str:
    """How to see a moment of a live run: the exact replay command."""
    return (f"{agent} at {when:%a %H:%M}: to see that moment, run "
            f"smalltown replay {shlex.quote(str(save))} --at '{when:%Y-%m-%d %H:%M}'")


@dataclass(frozen=True)
class Cell:
    category: str | None  # the category of most of the cell's minutes (None: nothing recorded)
    span: Span | None  # the span of most of them


def cells(day: Day, agent: str, minutes: int) -> list[Cell]:
    """One cell per `minutes` of the day: what took most of it."""
    n = 24 * 60 // minutes
    share: list[dict[int, float]] = [{} for _ in range(n)]
    spans = day.spans.get(agent, [])
    for i, s in enumerate(spans):
        a = int((s.start - day.start).total_seconds() // 60 // minutes)
        b = int((s.end - day.start).total_seconds() // 60 // minutes)
        for k in range(max(a, 0), min(b, n - 1) + 1):
            lo = max(s.start, day.start + timedelta(minutes=k * minutes))
            hi = min(s.end, day.start + timedelta(minutes=(k + 1) * minutes))
            if hi > lo:
                share[k][i] = share[k].get(i, 0) + (hi - lo).total_seconds()
    out = []
    for k in range(n):
        if not share[k]:
            out.append(Cell(None, None))
            continue
        by_cat: dict[str, float] = {}
        for i, secs in share[k].items():
            by_cat[spans[i].category] = by_cat.get(spans[i].category, 0) + secs
        cat = max(by_cat, key=lambda c: (by_cat[c], -CATEGORIES.index(c)))
        i = max((i for i in share[k] if spans[i].category == cat), key=lambda i: share[k][i])
        out.append(Cell(cat, spans[i]))
    return out


def legend() -> Text:
    text = Text()
    for cat in CATEGORIES:
        symbol, bg = LOOKS[cat]
        text.append(symbol, style=f"bold #ffffff on {bg}")
        text.append(f" {LABELS.get(cat, cat)}  ")
    return text


class DayGrid(Static):
    """The ruler and a row per agent; a click picks the cell under it."""

    def on_click(self, event: events.Click) -> None:
        at = event.get_content_offset(self)
        if at is not None:
            self.screen.clicked(at.x - NAME_WIDTH, at.y - 1)  # type: ignore[attr-defined]


class DayScreen(Screen[tuple[str, datetime] | None]):
    """Its result: (agent, game time) picked, or None when closed."""

    CSS_PATH = "day.tcss"
    BINDINGS = [
        Binding("escape,D,q", "close", "Close"),
        Binding("left", "move(-1, 0)", "Earlier", show=False),
        Binding("right", "move(1, 0)", "Later", show=False),
        Binding("up", "move(0, -1)", "Up", show=False),
        Binding("down", "move(0, 1)", "Down", show=False),
        Binding("less_than_sign", "day(-1)", "Previous day", key_display="<"),
        Binding("greater_than_sign", "day(1)", "Next day", key_display=">"),
        Binding("enter", "pick", "Go there"),
    ]

    def __init__(self, read: Callable[[date | None], Day], names: list[str], colours: dict[str, str],
                 now: datetime, selected: str | None, picking: str) -> None:
        super().__init__()
        self._read, self._names, self._colours = read, names, colours
        self._picking = picking  # what enter does, for the title
        self.day = read(now.date())
        self.row = names.index(selected) if selected in names else 0
        self.minutes = SLOTS[-1]
        self.col = self._col_of(now)
        self._cells: dict[str, list[Cell]] = {}
        self._read_at = 0.0

    def compose(self) -> ComposeResult:
        yield Static(id="day-title")
        yield Static(legend(), id="day-legend")
        with ScrollableContainer(id="day-box"):
            yield DayGrid(id="day-grid")
        yield Static(id="day-cell")

    def on_mount(self) -> None:
        self._fit()

    def on_resize(self, event: events.Resize) -> None:
        self._fit()

    def _col_of(self, when: datetime) -> int:
        return max(0, min(int((when - self.day.start).total_seconds() // 60 // self.minutes), 24 * 60 // self.minutes - 1))

    def _fit(self) -> None:
        """Cells as fine as the width allows; the cursor stays on its time."""
        when = self.day.start + timedelta(minutes=self.col * self.minutes)
        self.minutes = slot_minutes(self.size.width)
        self.col = self._col_of(when)
        self._draw(rebuild=True)

    def reload(self) -> None:
        """The live app calls it as the town runs: today's rows grow (a read of a busy day takes
        some 0.1 s, so at most every RELOAD_SECONDS)."""
        if self.day.day == self.day.last and time.monotonic() - self._read_at >= RELOAD_SECONDS:
            self._read_at = time.monotonic()
            self.day = self._read(self.day.day)
            self._draw(rebuild=True)

    # --- drawing ------------------------------------------------------------------------------

    def _draw(self, rebuild: bool = False) -> None:
        if rebuild or not self._cells:
            self._cells = {a: cells(self.day, a, self.minutes) for a in self._names}
        d = self.day
        span = (d.last - d.first).days + 1
        title = Text.assemble((f"{d.day:%a %d %b %Y}", "bold"), f", day {(d.day - d.first).days + 1} of {span}"
                              f" · {self.minutes} min a cell · arrows, < > days, enter {self._picking}, esc")
        self.query_one("#day-title", Static).update(title)
        self.query_one("#day-grid", DayGrid).update(self._grid())
        self.query_one("#day-cell", Static).update(self._described())
        self.query_one("#day-box", ScrollableContainer).scroll_to_region(
            Region(NAME_WIDTH + self.col, self.row + 1, 1, 1), animate=False, immediate=True)

    def _ruler(self) -> Text:
        per_hour = 60 // self.minutes
        step = 1 if per_hour >= 3 else 2
        line = [" "] * (NAME_WIDTH + 24 * per_hour)
        for h in range(0, 24, step):
            line[NAME_WIDTH + h * per_hour:NAME_WIDTH + h * per_hour + 2] = f"{h:02d}"
        return Text("".join(line), "dim")

    def _grid(self) -> Text:
        text = self._ruler()
        for r, name in enumerate(self._names):
            text.append("\n")
            text.append(f"{shown(name)[:NAME_WIDTH - 1]:<{NAME_WIDTH}}", style=f"bold {self._colours.get(name, '')}")
            for c, cell in enumerate(self._cells[name]):
                symbol, bg = LOOKS[cell.category] if cell.category else (" ", "")
                style = f"#ffffff on {bg}" if bg else ""
                if (r, c) == (self.row, self.col):
                    style = "bold reverse underline #ffffff on #000000" if not bg else f"bold reverse underline {style}"
                    symbol = symbol if symbol.strip() else "+"
                text.append(symbol, style=style)
        return text

    def _cursor_time(self) -> datetime:
        return self.day.start + timedelta(minutes=self.col * self.minutes)

    def _described(self) -> Text:
        name = self._names[self.row] if self._names else ""
        cell = self._cells.get(name, [])[self.col] if self._names else Cell(None, None)
        if cell.span is None:
            return Text(f"{shown(name)} {self._cursor_time():%H:%M}: nothing recorded", "dim")
        return Text.assemble((shown(name), f"bold {self._colours.get(name, '')}"),
                             shown(describe(cell.span)[len(name):]))

    # --- moving and picking -------------------------------------------------------------------

    def action_move(self, dx: int, dy: int) -> None:
        self.col = max(0, min(self.col + dx, 24 * 60 // self.minutes - 1))
        self.row = max(0, min(self.row + dy, len(self._names) - 1))
        self._draw()

    def action_day(self, step: int) -> None:
        target = self.day.day + timedelta(days=step)
        if self.day.first <= target <= self.day.last:
            self.day = self._read(target)
            self._draw(rebuild=True)
        else:
            self.notify("No such day in this save.", timeout=2)

    def clicked(self, col: int, row: int) -> None:
        if 0 <= row < len(self._names) and 0 <= col < 24 * 60 // self.minutes:
            self.row, self.col = row, col
            self._draw()
            self.action_pick()

    def action_pick(self) -> None:
        """The agent under the cursor, at the cell's time (or when its span began, if later)."""
        if not self._names:
            return
        name = self._names[self.row]
        cell = self._cells[name][self.col]
        when = max(self._cursor_time(), cell.span.start) if cell.span else self._cursor_time()
        if when > self.day.end or cell.category is None:
            self.notify("Nothing recorded there.", timeout=2)
            return
        self.dismiss((name, when))

    def action_close(self) -> None:
        self.dismiss(None)
