"""The panels around the map: the clock bar, the agents list and the event log."""

from __future__ import annotations

from collections import deque
from typing import Iterable

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widgets import RichLog, Static

from smalltown.shown import shown
from smalltown.store.records import Event
from smalltown.tui.palette import STATE_STYLES, agent_glyph, on_colour, state_symbol
from smalltown.tui.snapshot import AgentView, Frame, speed_label

DIM = Style(dim=True)


def _segments(console: Console, line: Text) -> Iterable[Segment]:
    """A one-line Text as segments. Text.render leaves out the Text's own (base) style: the
    console adds it when it renders a Text, and these lines are rendered by hand."""
    segments = line.render(console)
    return Segment.apply_style(segments, console.get_style(line.style)) if line.style else segments


class ClockBar(Horizontal):
    """Game date and time and tick on the left; run state, speed, backend and save on the right.
    Each part has a long and a short form; the bar takes the longest forms that fit its width
    (80 columns get the short ones), so what it says is never cut, only said more briefly."""

    DEFAULT_CSS = """
    ClockBar { dock: top; height: 1; background: $panel; }
    ClockBar #clock { width: auto; padding: 0 1; text-style: bold; text-wrap: nowrap; }
    ClockBar #busy { width: auto; padding: 0 1; color: #000000; background: #74c0fc; text-wrap: nowrap;
                     display: none; }
    ClockBar #busy.-on { display: block; }
    ClockBar #status { width: 1fr; padding: 0 1; text-align: right; text-wrap: nowrap;
                       text-overflow: ellipsis; }
    ClockBar #backend { width: auto; padding: 0 1; text-wrap: nowrap; text-overflow: ellipsis; }
    """
    PADDING = 6  # the three parts' padding, one cell each side

    def __init__(self, backend: str, save_name: str) -> None:
        super().__init__()
        self._backend = backend
        self._save_name = save_name
        self._backend_text = Text(shown(backend), "italic")  # the long form; the short is the name alone
        self._frame: Frame | None = None
        self._shown: tuple[Text, Text, Text] | None = None
        self.stopping = False  # set by the app while the tick in flight finishes before quitting

    def compose(self) -> ComposeResult:
        yield Static(id="clock")
        yield Static(id="busy")
        yield Static(id="status")
        yield Static(self._backend_text, id="backend")

    def backend_state(self, text: Text) -> None:
        """Who answers and how it goes: e.g. "llama qwen2.5-3b… · ctx 4,096 · 812 calls · 3 fallbacks"."""
        self._backend_text = text
        self._fit()

    def busy(self, text: str) -> None:
        """The model-at-work indicator: shown while a tick runs long, hidden when it is done."""
        busy = self.query_one("#busy", Static)
        busy.update(Text(shown(text)))  # an agent's name and a task, read from the save
        busy.set_class(bool(text), "-on")

    def show(self, frame: Frame) -> None:
        self._frame = frame
        self._fit()

    def on_resize(self) -> None:
        self._fit()

    def _fit(self) -> None:
        """Draw the longest forms of the parts that fit the bar's width together."""
        if self._frame is None:
            return
        width = self.size.width or 10_000  # (not laid out yet: the long forms, fitted on resize)
        backend = Text(shown(self._backend), "italic")
        forms = [(self._clock(2), self._status(long=True), self._backend_text),
                 (self._clock(1), self._status(long=True), self._backend_text),
                 (self._clock(1), self._status(long=False), self._backend_text),
                 (self._clock(1), self._status(long=False), backend),
                 (self._clock(0), self._status(long=False), backend)]
        chosen = next((f for f in forms if sum(t.cell_len for t in f) + self.PADDING <= width), forms[-1])
        if chosen == self._shown:
            return  # most frames change nothing here but the time: compared as drawn
        layout = self._shown is None or any(a.cell_len != b.cell_len for a, b in zip(chosen, self._shown))
        self._shown = chosen
        for name, text in zip(("#clock", "#status", "#backend"), chosen):
            self.query_one(name, Static).update(text, layout=layout)

    def _clock(self, size: int) -> Text:
        """2: "Mon 2023-02-13 10:00:00  tick 1440", 1: "Mon 02-13 10:00:00  tick 1440", 0: "… t1440"."""
        frame = self._frame
        assert frame is not None
        day = f"{frame.now:%a %Y-%m-%d}" if size == 2 else f"{frame.now:%a %m-%d}"
        return Text.assemble(f"{day} {frame.now:%H:%M:%S}", ("  tick " if size else " t", "dim"), str(frame.tick))

    def _status(self, long: bool) -> Text:
        frame = self._frame
        assert frame is not None
        if self.stopping:
            state = (" saving… ", "bold black on #ffa94d")
        elif frame.running:
            state = (" running ", "bold black on #69db7c")
        else:
            state = (" paused — space to run " if long else " paused ", "bold black on #ffe066")
        parts: list[str | tuple[str, str]] = [state, " ", speed_label(frame.speed)]
        if frame.chase is not None:  # a run until a time, or a step to an agent's event: how far
            parts += [("  " if long else " ", ""), (shown(frame.chase.progress(frame.now, short=not long)), "bold #74c0fc")]
        if frame.breakpoints:
            n = len(frame.breakpoints)
            parts += [("  ", ""), (f"● {n} break{'s' if n > 1 else ''}" if long else f"● {n}", "bold #ff6b6b")]
        name = frame.save_path.rsplit("/", 1)[-1] if frame.save_path else self._save_name
        parts += [("  " if long else " ", ""), shown(name)]  # (the backend is beside it: backend_state)
        return Text.assemble(*parts)


class AgentsPanel(ScrollView, can_focus=True):
    """Who is doing what: each agent's map marker, a symbol for its activity, its name and what it
    is in the middle of (asleep, talking, reflecting, walking), and its current action wrapped
    under the name. A click picks the agent. Line API like the map: an agent's lines are
    re-wrapped only when its entry changes (or the width does), so a frame in which one agent
    changes costs one entry."""

    class Picked(Message):
        def __init__(self, name: str) -> None:
            super().__init__()
            self.name = name

    DEFAULT_CSS = """
    AgentsPanel { scrollbar-size-vertical: 1; overflow-x: hidden; scrollbar-gutter: stable; }
    """
    INDENT = 3  # the marker columns: the agent's letter, its activity's symbol and a space

    def __init__(self, colours: dict[str, str], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._colours = colours
        self._entries: list[tuple] = []  # per agent: (name, action, state, selected)
        self._strips: list[list[Strip]] = []  # per agent, its wrapped lines at _width
        self._lines: list[Strip] = []  # all the lines, in order
        self._width = 0
        self.border_title = f"Agents ({len(colours)})"

    selected: str | None = None

    def select(self, name: str | None) -> None:
        self.selected = name
        self._entries = []  # redraw every entry: the mark moves
        if getattr(self, "_last", None):
            self.show(self._last)
        for i, strips in enumerate(self._strips):  # keep the selected agent in view
            if self._entries[i][0] == name:
                self.scroll_to(y=sum(len(s) for s in self._strips[:i]), animate=False)

    def show(self, agents: tuple[AgentView, ...]) -> None:
        self._last = agents
        entries = [(a.name, a.action, a.state, a.name == self.selected) for a in agents]
        if entries == self._entries:
            return  # most frames change nobody's action
        old = self._entries
        self._entries = entries
        if len(old) != len(entries):
            self._strips = []
        self._rebuild(changed={i for i, e in enumerate(entries) if i >= len(old) or old[i] != e})

    def _rebuild(self, changed: set[int] | None = None) -> None:
        """Re-wrap the entries in `changed` (all when None) and lay the lines out again."""
        width = self.scrollable_content_region.width
        if width <= 0:
            return  # not laid out yet: on_resize does it
        if changed is None or width != self._width or len(self._strips) != len(self._entries):
            self._width = width
            changed = set(range(len(self._entries)))
            self._strips = [[] for _ in self._entries]
        console = self.app.console
        for i in changed:
            self._strips[i] = self._wrap(console, self._entries[i], width)
        self._lines = [line for strips in self._strips for line in strips]
        self.virtual_size = Size(width, len(self._lines))
        self.refresh()

    def _wrap(self, console: Console, entry: tuple, width: int) -> list[Strip]:
        name, action, state, selected = entry
        colour = self._colours.get(name, "white")
        head = Text(shown(name), f"bold {colour}{' reverse' if selected else ''}")
        if state:
            head.append(" → walking" if state == "walking" else f" {state}", STATE_STYLES[state])
        body = Text(shown(action or "—"), "dim" if state == "asleep" else "")
        text_width = max(4, width - self.INDENT)
        strips: list[Strip] = []
        symbol = state_symbol(state, action)
        for k, line in enumerate([*head.wrap(console, text_width), *body.wrap(console, text_width)]):
            lead = [Segment(agent_glyph(name), on_colour(colour)), Segment(symbol + " ", Style(bold=True))] if k == 0 \
                else [Segment(" " * self.INDENT)]
            strips.append(Strip([*lead, *_segments(console, line)]).extend_cell_length(width))
        return strips

    def name_at(self, y: int) -> str | None:
        """The agent whose entry is on a line of the widget (None: below the last)."""
        row = y + self.scroll_offset.y
        for (name, *_), strips in zip(self._entries, self._strips):
            if row < len(strips):
                return name
            row -= len(strips)
        return None

    def on_click(self, event: events.Click) -> None:
        name = self.name_at(event.y)
        if name is not None:
            self.post_message(self.Picked(name))

    def render_line(self, y: int) -> Strip:
        row = y + self.scroll_offset.y
        width = self.scrollable_content_region.width
        if row >= len(self._lines):
            return Strip.blank(width, self.rich_style)
        return self._lines[row].crop_extend(0, width, None).apply_style(self.rich_style)

    def on_resize(self) -> None:
        self._rebuild()


QUIET = frozenset({"perceived", "decided"})  # the log's kinds shown only when asked for (p)


class EventLog(RichLog):
    """Recent events, newest at the bottom. "perceived" and "decided" events are hidden unless
    asked for: every agent perceives every tick, and (with the controller's broadcast on) decides
    before nearly every action it starts; they drown out the rest."""

    DEFAULT_CSS = """
    EventLog { scrollbar-size-vertical: 1; }
    """
    KEEP = 1000  # lines kept, and re-wrapped when the width changes

    def __init__(self, colours: dict[str, str], *, id: str | None = None) -> None:
        # min_width: the default 78 would crop lines in a narrow column.
        super().__init__(id=id, max_lines=self.KEEP, wrap=True, markup=False, auto_scroll=True,
                         min_width=20)
        self._colours = colours
        self._kept: deque[RenderableType] = deque(maxlen=self.KEEP)
        self._width = 0
        self.show_perceived = False
        self.border_title = "Events"

    def add_frame(self, frame: Frame) -> None:
        if frame.dropped:
            self._add(Text(f"… {frame.dropped} events not shown (all are in the save)", "dim italic"))
        for e in frame.events:
            if e.kind in QUIET and not self.show_perceived:
                continue
            self._add(self._line(e))
        if frame.note:
            self.note(frame.note)

    @property
    def kept(self) -> tuple[RenderableType, ...]:
        """The lines kept: what a run going on in another file of the same town shows first."""
        return tuple(self._kept)

    def carry(self, lines: Iterable[RenderableType]) -> None:
        for line in lines:
            self._add(line)

    def note(self, message: str) -> None:
        """A line of the interface's own: it may quote names, states and errors from the save."""
        self._add(Text(shown(message), "italic #ffe066"))

    def _add(self, line: RenderableType) -> None:
        self._kept.append(line)
        self.write(line)

    def on_resize(self) -> None:
        # RichLog wraps a line once, when written: re-wrap what is kept at the new width.
        width = self.scrollable_content_region.width
        if width != self._width and self._kept:
            self.clear()
            for line in self._kept:
                self.write(line)
        self._width = width

    def _line(self, e: Event) -> RenderableType:
        text = Text(shown(e.text), "dim" if e.kind in QUIET else "")
        if e.agent and e.agent in self._colours and e.text.startswith(e.agent):
            # only the leading name: agents' names also occur inside place names
            text.stylize(self._colours[e.agent], 0, len(shown(e.agent)))
        return LogLine(shown(e.time[11:]), text)


class LogLine:
    """A time column and the event's text, wrapped lines indented under the text. Hand-rolled:
    a rich Table per line costs ~3x more, and at full speed the log writes hundreds a second."""

    def __init__(self, stamp: str, text: Text) -> None:
        self.stamp = stamp
        self.text = text

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        indent = len(self.stamp) + 1
        lines = self.text.wrap(console, max(8, options.max_width - indent))
        for i, line in enumerate(lines):
            yield Segment(self.stamp + " " if i == 0 else " " * indent, DIM)
            yield from _segments(console, line)
            yield Segment.line()
