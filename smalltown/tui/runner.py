"""The loop that ticks the simulation on a worker thread, driven by commands from the interface.

The interface never touches the `Simulation`: it `send`s commands (pause/step/speed/quit) through a
queue, and gets `Frame`s back through `publish`. Frames are coalesced: a new one goes out only after
the interface says it has drawn the previous one (`frame_shown`) and at most ~30 times a second, so
a fast simulation can never flood a slow screen; the events of the ticks in between are batched.
"""

from __future__ import annotations

import queue
import threading
import time
from collections import deque
from datetime import datetime
from typing import Callable, Literal

from smalltown.sim.events import Event
from smalltown.sim.simulation import Simulation
from smalltown.tui.snapshot import DEFAULT_SPEED, SPEEDS, Frame, agent_views

Command = Literal["toggle", "step", "faster", "slower", "quit"]

FRAME_SECONDS = 1 / 30  # the fastest the screen is refreshed
# At "max" nobody reads the screen tick by tick: fewer frames leave the simulation more of the CPU
# (drawing runs on the same interpreter, under the same GIL).
MAX_SPEED_FRAME_SECONDS = 1 / 10
EVENT_CAP = 1000  # events per frame; beyond this the oldest are dropped (they stay in the save)


class SimRunner:
    def __init__(self, sim: Simulation, publish: Callable[[Frame], None], *,
                 until: datetime | None = None, paused: bool = False,
                 speed_index: int = DEFAULT_SPEED) -> None:
        self.sim = sim
        self._publish = publish
        self._commands: queue.Queue[Command] = queue.Queue()
        self._ui_ready = threading.Event()
        self._ui_ready.set()
        self.done = threading.Event()  # set when `run` has returned: the sim may then be closed
        # Worker-owned state below: only `run` (the worker thread) touches it once started.
        self._paused = paused
        self._speed = speed_index
        self._until = until
        self._note: str | None = None
        if until is not None and sim.now >= until:
            self._paused, self._until = True, None
            self._note = f"Already at {until:%Y-%m-%d %H:%M}: paused."
        self._steps = 0  # single steps asked for and not yet done
        self._quit = False
        self._pending: deque[Event] = deque(maxlen=EVENT_CAP)
        self._dropped = 0
        self._dirty = False  # something to show that the last frame did not
        self._last_frame = 0.0
        self._next_tick = 0.0

    # --- called from the interface thread ---------------------------------------------------

    def send(self, command: Command) -> None:
        self._commands.put(command)

    def frame_shown(self) -> None:
        """The interface drew the last frame: the next one may be sent."""
        self._ui_ready.set()

    def frame(self) -> Frame:
        """A frame of the current state. Safe only while no tick can be in flight: on the worker
        thread, or before the worker starts (the interface's first picture)."""
        events = tuple(self._pending)
        dropped, self._dropped = self._dropped, 0
        self._pending.clear()
        note, self._note = self._note, None
        return Frame(self.sim.tick, self.sim.now, agent_views(self.sim), events, dropped,
                     running=not self._paused, speed=SPEEDS[self._speed], until=self._until,
                     note=note)

    # --- the worker thread ------------------------------------------------------------------

    def run(self) -> None:
        try:
            while True:
                self._take_commands(self._wait_seconds())
                if self._quit:
                    break
                if self._steps or self._tick_due():
                    self._steps = max(0, self._steps - 1)
                    self._tick()
                self._maybe_publish()
        finally:
            self.done.set()

    def _wait_seconds(self) -> float | None:
        """How long to block for commands before there is work to do (None: until one comes)."""
        waits: list[float] = []
        if self._steps:
            return 0.0
        if not self._paused:
            waits.append(max(0.0, self._next_tick - time.monotonic()))
        if self._dirty:
            waits.append(FRAME_SECONDS)
        return min(waits) if waits else None

    def _take_commands(self, timeout: float | None) -> None:
        try:
            command = self._commands.get(timeout=timeout) if timeout != 0 else self._commands.get_nowait()
        except queue.Empty:
            return
        while True:
            self._apply(command)
            try:
                command = self._commands.get_nowait()
            except queue.Empty:
                return

    def _apply(self, command: Command) -> None:
        self._dirty = True  # every command changes something the header shows
        if command == "toggle":
            self._paused = not self._paused
            self._steps = 0
            self._next_tick = time.monotonic()
        elif command == "step":
            self._paused = True  # stepping is a paused-mode thing: it stops a running town
            self._steps += 1
        elif command == "faster":
            self._speed = min(self._speed + 1, len(SPEEDS) - 1)
        elif command == "slower":
            self._speed = max(self._speed - 1, 0)
            self._next_tick = min(self._next_tick, time.monotonic() + self._interval())
        elif command == "quit":
            self._quit = True

    def _interval(self) -> float:
        speed = SPEEDS[self._speed]
        return 0.0 if speed is None else 1.0 / speed

    def _frame_seconds(self) -> float:
        return MAX_SPEED_FRAME_SECONDS if SPEEDS[self._speed] is None else FRAME_SECONDS

    def _tick_due(self) -> bool:
        return not self._paused and time.monotonic() >= self._next_tick

    def _tick(self) -> None:
        started = time.monotonic()
        events = self.sim.step()
        # No catching up: a slow tick (a model call) delays the next one instead of bunching them.
        self._next_tick = started + self._interval()
        overflow = len(self._pending) + len(events) - EVENT_CAP
        if overflow > 0:
            self._dropped += overflow
        self._pending.extend(events)
        self._dirty = True
        if self._until is not None and self.sim.now >= self._until:
            self._paused = True
            self._note = f"Reached {self._until:%Y-%m-%d %H:%M}: paused."
            self._until = None  # one-shot: resuming runs on

    def _maybe_publish(self) -> None:
        if not self._dirty or not self._ui_ready.is_set():
            return
        now = time.monotonic()
        if not self._paused and not self._steps and now - self._last_frame < self._frame_seconds():
            return
        self._ui_ready.clear()
        self._dirty = False
        self._last_frame = now
        self._publish(self.frame())
