"""The day at a glance: a row per agent across one game day, a cell per few minutes, coloured by
what it was doing (the store's day spans, store/day.py). The cursor's cell is described below;
enter (or a click) picks that agent and moment: the replay goes there, the live TUI selects the
agent and says how to replay it.

The grid draws only the window of cells around the cursor that fits, beside the names column and
under the hour ruler: on a narrow or short terminal the cells move under them, the names and the
hours stay in view. On a day in progress a mark on the ruler shows where the run is, and the view
follows it while the cursor stays there. The PIANO modules' events put their signs on the cells
they happened in (day_marks.py)."""

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
from textual.screen import Screen
from textual.widgets import Static

from smalltown.lang import gerund
from smalltown.shown import shown
from smalltown.store.day import CATEGORIES, Day, Span
from smalltown.store.records import EventRow
from smalltown.tui.screens.day_marks import MARK_KINDS, Marks, by_cell, described, sign
from smalltown.tui.palette import ACTIVITY_SYMBOLS

SLOTS = (10, 15, 20, 30)  # minutes a cell, the finest that fits the width (else 30, scrolled)
CHROME = 4  # the screen's lines that are not the grid: title, legend, the cell's two lines (three with marks)
NOW_MARK = "▼"  # on the ruler, over the column the run has reached
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
    room = width - NAME_WIDTH
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
    """The ruler and a row per agent, as much as fits; a click picks the cell under it, the wheel
    moves the cursor."""

    def on_click(self, event: events.Click) -> None:
        at = event.get_content_offset(self)
        if at is not None:
            self.screen.clicked(at.x - NAME_WIDTH, at.y - 1)  # type: ignore[attr-defined]

    def on_mouse_scroll_down(self, event: events.MouseScrollDown) -> None:
        self.screen.action_move(0, 1)  # type: ignore[attr-defined]

    def on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        self.screen.action_move(0, -1)  # type: ignore[attr-defined]


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
                 now: datetime, selected: str | None, picking: str,
                 events: Callable[[tuple[str, ...]], list[EventRow]] | None = None) -> None:
        super().__init__()
        self._read, self._names, self._colours = read, names, colours
        self._events = events  # the save's events of some kinds, for the marks
        self._marks: Marks = {}
        self._picking = picking  # what enter does, for the title
        self.day = read(now.date())
        self.row = names.index(selected) if selected in names else 0
        self.minutes = SLOTS[-1]
        self._moment: datetime | None = min(now, self._last_moment())  # the cursor's exact time, until moved
        self.col = self._col_of(self._moment)
        self.left = self.top = 0  # the first cell column and agent row drawn
        self._cells: dict[str, list[Cell]] = {}
        self._read_at = 0.0

    def compose(self) -> ComposeResult:
        yield Static(id="day-title")
        yield Static(legend(), id="day-legend")
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
        when = self._moment or self._cursor_time()
        self.minutes = slot_minutes(self.size.width)
        self.col = self._col_of(when)
        self._draw(rebuild=True)

    def reload(self) -> None:
        """The live app calls it as the town runs: today's rows grow (a read of a busy day takes
        some 0.1 s, so at most every RELOAD_SECONDS while it runs, and once more where it stopped).
        A cursor on the run's column follows it, past midnight too."""
        settled = not self.app.frame.running  # type: ignore[attr-defined]  (the live app's: the town paused)
        if self.day.day == self.day.last and (settled or time.monotonic() - self._read_at >= RELOAD_SECONDS):
            self._read_at = time.monotonic()
            following = self._now_col() == self.col
            self.day = self._read(None if following else self.day.day)
            if following:
                self._moment = self._last_moment()
                self.col = self._col_of(self._moment)
            self._draw(rebuild=True)

    def _now_col(self) -> int | None:
        """The column the run has reached, on a day in progress."""
        return self._col_of(self._last_moment()) if self.day.end < self.day.start + timedelta(days=1) else None

    def _last_moment(self) -> datetime:
        """The last moment the save holds of the day (its cell, not the empty one after it)."""
        return max(self.day.start, self.day.end - timedelta(seconds=1))

    def _window(self) -> tuple[int, int]:
        """(cell columns, agent rows) that fit beside the names and under the ruler."""
        # (a legend or title wider than the screen wraps: a line more each)
        chrome = CHROME + self.has_class("-marks") + (legend().cell_len > self.size.width) \
            + (self._title().cell_len > self.size.width)
        return max(1, self.size.width - NAME_WIDTH), max(1, self.size.height - chrome - 1)

    def _follow(self) -> None:
        """Move the window just enough to hold the cursor."""
        width, height = self._window()
        self.left = max(0, min(self.left, self.col, 24 * 60 // self.minutes - width))
        self.left = max(self.left, self.col - width + 1)
        self.top = max(0, min(self.top, self.row, len(self._names) - height))
        self.top = max(self.top, self.row - height + 1)

    # --- drawing ------------------------------------------------------------------------------

    def _draw(self, rebuild: bool = False) -> None:
        if rebuild or not self._cells:
            self._cells = {a: cells(self.day, a, self.minutes) for a in self._names}
            self._marks = by_cell(self._events(MARK_KINDS), self.day, self.minutes) if self._events else {}
            self.set_class(bool(self._marks), "-marks")  # a line under the cell's for its marks
        self._follow()
        self.query_one("#day-title", Static).update(self._title())
        self.query_one("#day-grid", DayGrid).update(self._grid())
        self.query_one("#day-cell", Static).update(self._described())

    def _title(self) -> Text:
        """The day, how far it is recorded, the cell's minutes and the keys: in 80 columns too."""
        d = self.day
        span = (d.last - d.first).days + 1
        running = f", recorded until {d.end:%H:%M}" if self._now_col() is not None else ""
        title = Text.assemble((f"{d.day:%a %d %b %Y}", "bold"), f", day {(d.day - d.first).days + 1} of {span}{running}"
                              f" · {self.minutes} min a cell · < > days, enter {self._picking}, esc")
        if title.cell_len <= self.size.width:
            return title
        running = f", until {d.end:%H:%M}" if running else ""
        return Text.assemble((f"{d.day:%a %d %b}", "bold"), f", day {(d.day - d.first).days + 1}/{span}{running}"
                             f" · {self.minutes} min · < > days, ⏎ {self._picking}, esc")

    def _ruler(self, width: int, height: int) -> Text:
        """The hours over the window's cells; over the names, which rows are shown when not all fit."""
        per_hour = 60 // self.minutes
        step = 1 if per_hour >= 3 else 2
        line = [" "] * (24 * per_hour + 1)
        for h in range(0, 24, step):
            line[h * per_hour:h * per_hour + 2] = f"{h:02d}"
        if self.left and line[self.left - 1] != " ":
            line[self.left] = " "  # no half of an hour's label at the window's edge
        rows = len(self._names)
        which = f"{self.top + 1}–{min(rows, self.top + height)} of {rows}" if rows > height else ""
        hours = "".join(line[self.left:self.left + width])
        now = self._now_col()
        at = now - self.left if now is not None and self.left <= now < self.left + width else len(hours)
        return Text.assemble((f"{which:<{NAME_WIDTH}}" + hours[:at], "dim"),
                             (NOW_MARK if at < len(hours) else "", "bold #ffd43b"), (hours[at + 1:], "dim"))

    def _grid(self) -> Text:
        width, height = self._window()
        text = self._ruler(width, height)
        for r, name in enumerate(self._names[self.top:self.top + height], start=self.top):
            text.append("\n")
            text.append(f"{shown(name)[:NAME_WIDTH - 1]:<{NAME_WIDTH}}", style=f"bold {self._colours.get(name, '')}")
            for c, cell in enumerate(self._cells[name][self.left:self.left + width], start=self.left):
                symbol, bg = LOOKS[cell.category] if cell.category else (" ", "")
                style = f"#ffffff on {bg}" if bg else ""
                if (name, c) in self._marks:
                    symbol, colour = sign(self._marks[name, c])
                    style = f"bold {colour} on {bg}" if bg else f"bold {colour}"
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
        marks = self._marks.get((name, self.col))
        if cell.span is None:
            text = Text(f"{shown(name)} {self._cursor_time():%H:%M}: {self._nothing()}", "dim")
        else:
            text = Text.assemble((shown(name), f"bold {self._colours.get(name, '')}"),
                                 shown(describe(cell.span)[len(name):]))
        return Text("\n").join([text, described(marks)]) if marks else text

    def _nothing(self) -> str:
        """Why the cursor's cell is empty."""
        when = self._cursor_time()
        if when + timedelta(minutes=self.minutes) <= self.day.began:
            return f"before the run began (at {self.day.began:%a %H:%M})"
        if when >= self.day.end:
            return f"not reached yet: the run is recorded until {self.day.end:%a %H:%M}"
        return "nothing recorded"

    # --- moving and picking -------------------------------------------------------------------

    def action_move(self, dx: int, dy: int) -> None:
        self._moment = None if dx else self._moment
        self.col = max(0, min(self.col + dx, 24 * 60 // self.minutes - 1))
        self.row = max(0, min(self.row + dy, len(self._names) - 1))
        self._draw()

    def action_day(self, step: int) -> None:
        target = self.day.day + timedelta(days=step)
        if self.day.first <= target <= self.day.last:
            self.day, self._moment = self._read(target), None
            self._draw(rebuild=True)
        else:
            self.notify("No such day in this save.", timeout=2)

    def clicked(self, col: int, row: int) -> None:
        """A click at (col, row) of the window drawn."""
        width, height = self._window()
        col, row = col + self.left, row + self.top
        if 0 <= row - self.top < height and 0 <= col - self.left < width and row < len(self._names) \
                and col < 24 * 60 // self.minutes:
            self.row, self.col, self._moment = row, col, None
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
            why = self._nothing()
            self.notify(why[0].upper() + why[1:] + ".", timeout=2)
            return
        self.dismiss((name, when))

    def action_close(self) -> None:
        self.dismiss(None)
