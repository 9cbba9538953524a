"""The headless run's progress line: the game time, a bar, the share done and the time taken, as
before; then the rate (ticks and model calls a minute) and the question the model is answering
right now (agent, task, seconds so far). The line is redrawn from the simulation twice a second
on rich's own refresh thread, so it moves while a single call takes a minute: the run's thread is
the one waiting on the model."""

from __future__ import annotations

import threading
import time
from collections import deque
from typing import Iterable

from rich.console import Console, RenderableType
from rich.progress import BarColumn, Progress, ProgressColumn, Task, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Column
from rich.text import Text

from smalltown.shown import shown
from smalltown.sim.simulation import TIME_FMT, Simulation

REFRESH_PER_SECOND = 2
RATE_AFTER_SECONDS = 2.0  # a rate over the first moments of a run says nothing
RATE_WINDOW_SECONDS = 60.0  # the rate is of the last minute: quiet ticks early on do not hide a slow call now
# Where the output is not a terminal (a log file, a pipe) the line is drawn once, at the end: a call
# that has waited this long is said on a line of its own instead, again each time it waits as long more
# (a stand-in's answers take milliseconds: such a run's output is unchanged).
WAITING_SAID_AFTER = 30.0


def per_minute(count: float, seconds: float, unit: str) -> str:
    """'12 calls/min', or per second when there are many ('1,234 ticks/s'), so the figure stays short."""
    rate = count / seconds * 60
    if rate >= 6000:
        return f"{rate / 60:,.0f} {unit}/s"
    return f"{rate:,.1f} {unit}/min" if rate < 10 else f"{rate:,.0f} {unit}/min"


def waited(seconds: float) -> str:
    return f"{seconds:.0f}s" if seconds < 60 else f"{int(seconds // 60)}m{int(seconds % 60):02d}s"


def in_flight_text(asking: list[tuple[str, str, float]], now: float) -> str:
    """The question asked longest ago and still unanswered, 'Agent Name: task 12s', and how many
    others are in flight ('+2'); empty when the model is not being asked."""
    if not asking:
        return ""
    agent, task, started = min(asking, key=lambda a: a[2])
    more = f" +{len(asking) - 1}" if len(asking) > 1 else ""
    return f"{agent}: {task} {waited(now - started)}{more}"


class _Rate(ProgressColumn):
    def __init__(self, run: RunProgress) -> None:
        super().__init__(table_column=Column(no_wrap=True))  # one line: the bar gives way
        self._run = run

    def render(self, task: Task) -> RenderableType:
        return Text(self._run.rate(), style="progress.data.speed")


class _Asking(ProgressColumn):
    def __init__(self, run: RunProgress) -> None:
        super().__init__(table_column=Column(no_wrap=True))
        self._run = run

    def render(self, task: Task) -> RenderableType:
        text = in_flight_text(self._run.sim.asker.in_flight(), time.monotonic())
        return Text(shown(text), style="cyan")  # names from the world file: text, never markup


class _LiveProgress(Progress):
    """A Progress whose one bar is read from the simulation each time it is drawn."""

    def __init__(self, run: RunProgress, *columns: ProgressColumn, **kw: object) -> None:
        self.run = run
        super().__init__(*columns, **kw)  # type: ignore[arg-type]

    def get_renderables(self) -> Iterable[RenderableType]:
        self.run.read()
        yield from super().get_renderables()


class RunProgress:
    """`with RunProgress(console, sim, total) as progress:` around `sim.run_until`; the line is
    drawn from the simulation's tick, and its asker's questions in flight and answered."""

    def __init__(self, console: Console, sim: Simulation, total: int) -> None:
        self.sim = sim
        self._start_tick = sim.tick
        self._t0 = time.monotonic()
        self._samples: deque[tuple[float, int, int]] = deque([(self._t0, sim.tick, sim.asker.answered)])
        self._bar: TaskID | None = None  # (the Progress draws once as it is made: nothing to read yet)
        self._console = console
        self._done = threading.Event()
        self._said: tuple[str, str, float, int] | None = None  # the call last said waiting, and for how long
        self._progress = _LiveProgress(self, TextColumn("{task.description}"), BarColumn(),
                                       TextColumn("{task.percentage:>5.1f}%"),
                                       TimeElapsedColumn(table_column=Column(no_wrap=True)),
                                       _Rate(self), _Asking(self), console=console, transient=False,
                                       refresh_per_second=REFRESH_PER_SECOND)
        self._bar = self._progress.add_task(sim.now.strftime(TIME_FMT), total=total or 1)

    def __enter__(self) -> RunProgress:
        self._progress.__enter__()
        if not self._console.is_terminal:
            threading.Thread(target=self._say_waits, name="progress", daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self.read()
        self._progress.__exit__(*exc)

    def _say_waits(self) -> None:
        while not self._done.wait(min(1.0, WAITING_SAID_AFTER / 4)):
            if line := self.waiting_line(time.monotonic()):
                self._console.print(line, markup=False, highlight=False, soft_wrap=True)

    def waiting_line(self, now: float) -> str:
        """A line for a log: the call in flight that has waited WAITING_SAID_AFTER seconds (or as
        many more since it was last said), with the run's place and rate; "" when there is none."""
        asking = self.sim.asker.in_flight()
        if not asking:
            return ""
        agent, task, started = min(asking, key=lambda a: a[2])
        times = int((now - started) // WAITING_SAID_AFTER)
        said = self._said
        if times < 1 or (said is not None and said[:3] == (agent, task, started) and said[3] >= times):
            return ""
        self._said = (agent, task, started, times)
        rate = self.rate()
        return (f"{self.sim.now.strftime(TIME_FMT)} · tick {self.sim.tick - self._start_tick}"
                f"{f' · {rate}' if rate else ''} · waiting on {shown(in_flight_text(asking, now))}")

    def read(self) -> None:
        """The bar at the simulation's tick now (read from any thread: an int and a time)."""
        if self._bar is None:
            return
        self._progress.update(self._bar, completed=self.sim.tick - self._start_tick,
                              description=self.sim.now.strftime(TIME_FMT))

    def rate(self) -> str:
        """Ticks (and calls, once there are any) a minute over the last minute."""
        now, tick, calls = time.monotonic(), self.sim.tick, self.sim.asker.answered
        if now - self._samples[-1][0] >= 1.0:
            self._samples.append((now, tick, calls))
        while len(self._samples) > 2 and now - self._samples[1][0] >= RATE_WINDOW_SECONDS:
            self._samples.popleft()  # (the oldest kept is at least a window old, once there is one)
        then, tick0, calls0 = self._samples[0]
        if now - then < RATE_AFTER_SECONDS:
            return ""
        ticks = per_minute(tick - tick0, now - then, "ticks")
        return f"{ticks} · {per_minute(calls - calls0, now - then, 'calls')}" if calls > calls0 else ticks
