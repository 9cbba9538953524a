"""The loop that ticks the simulation on a worker thread, driven by commands from the interface.

The interface never touches the `Simulation`: it `send`s commands (pause/step/speed/quit, run-until,
step to an agent's next event, breakpoints, and the user's interventions: whisper, interview, edit
an object, copy the save; the typed commands of sim/commands.py) through a queue, and gets `Frame`s back through `publish`; an intervention's result comes back
through the `reply` callback it was sent with, called on this thread. Frames are coalesced: a new one goes out only after
the interface says it has drawn the previous one (`frame_shown`) and at most ~30 times a second, so
a fast simulation can never flood a slow screen; the events of the ticks in between are batched.

A run until a time and a step to an agent's next event are a `Chase`: it goes at full speed whatever
the display speed (which is kept, for after), and ends at its goal, saying what it stopped on. A
breakpoint pauses it without ending it (space goes on toward the goal); pausing a running chase,
or esc (`Cancel`), gives it up.
"""

from __future__ import annotations

import queue
import threading
import time
from collections import deque
from datetime import datetime, timedelta
from typing import Any, Callable

from smalltown.sim import commands as cmd
from smalltown.sim.breakpoints import Breakpoint, Hit, check, next_event
from smalltown.llm.backend import Stopped
from smalltown.sim.commands import Command
from smalltown.store.records import Event
from smalltown.sim.simulation import Simulation
from smalltown.store.schema import TIME_FMT
from smalltown.tui.snapshot import DEFAULT_SPEED, SPEEDS, Chase, Frame, agent_views, span

# What goes through the queue: a command (sim/commands.py) and, for an intervention, the reply
# that gets its result, or the exception that stopped it.
Reply = Callable[[Any], None]
Queued = tuple[Command, Reply | None]

FRAME_SECONDS = 1 / 30  # the fastest the screen is refreshed
# At "max" nobody reads the screen tick by tick: fewer frames leave the simulation more of the CPU
# (drawing runs on the same interpreter, under the same GIL).
MAX_SPEED_FRAME_SECONDS = 1 / 10
EVENT_CAP = 1000  # events per frame; beyond this the oldest are dropped (they stay in the save)
RECENT = timedelta(minutes=30)  # game time an object change stays marked, a reflection shown


class SimRunner:
    def __init__(self, sim: Simulation, publish: Callable[[Frame], None], *,
                 until: datetime | None = None, paused: bool = False,
                 speed_index: int = DEFAULT_SPEED, breakpoints: tuple[Breakpoint, ...] = ()) -> None:
        self.sim = sim
        self._publish = publish
        self._commands: queue.Queue[Queued] = queue.Queue()
        self._ui_ready = threading.Event()
        self._ui_ready.set()
        self.done = threading.Event()  # set when `run` has returned: the sim may then be closed
        # Worker-owned state below: only `run` (the worker thread) touches it once started.
        self._paused = paused
        self._speed = speed_index
        self._chase: Chase | None = None  # paused with one: it waits for space to go on
        self._note: str | None = None
        self._stopped: str | None = None  # what the last chase stopped on, for the next frame
        if until is not None and sim.now >= until:
            self._paused = True
            self._note = f"Already at {until:%Y-%m-%d %H:%M}: paused."
        elif until is not None:
            self._chase = Chase(sim.now, until=until)
        self._steps = 0  # single steps asked for and not yet done
        self._quit = False
        self._breakpoints: dict[int, Breakpoint] = {bp.id: bp for bp in breakpoints}
        self._hits: tuple[Hit, ...] = ()
        self._changed_objects: dict[str, datetime] = {}  # address -> game time of its last change
        self._reflected: dict[str, datetime] = {}  # agent -> game time it last reflected
        self._remember_recent()
        self.tick_started: float | None = None  # monotonic start of the tick in flight (any thread reads)
        self._pending: deque[Event] = deque(maxlen=EVENT_CAP)
        self._dropped = 0
        self._dirty = False  # something to show that the last frame did not
        self._last_frame = 0.0
        self._next_tick = 0.0

    # --- called from the interface thread ---------------------------------------------------

    def send(self, command: Command, reply: Reply | None = None) -> None:
        """Queue a command for the worker: `send(Step())`, or an intervention with the callback
        its result (or the exception that stopped it) is given to: `send(Whisper(name, text), reply)`."""
        self._commands.put((command, reply))

    def stop(self) -> None:
        """Quit now: the tick in flight, and the model's answer it waits on, are cut off (the save
        stays at the last whole tick), so the worker returns within moments."""
        self.send(cmd.Quit())
        self.sim.stop()  # (thread-safe: flags, and cut connections)

    def kept(self) -> tuple[int, tuple[Breakpoint, ...]]:
        """The display speed (an index in SPEEDS) and the breakpoints, for a run that goes on in
        another file of the same town (rewind, save as). Read once the worker is done."""
        assert self.done.is_set(), "the worker owns them while it runs"
        return self._speed, tuple(self._breakpoints.values())

    def in_flight(self) -> tuple[float | None, list[tuple[str, str, float]]]:
        """When the tick in flight started (None: between ticks) and the model questions being
        answered right now: what the interface shows while it waits, read from any thread."""
        return self.tick_started, self.sim.asker.in_flight()

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
        hits, self._hits = self._hits, ()
        stopped, self._stopped = self._stopped, None
        now = self.sim.now
        reflecting = frozenset(n for n, t in self._reflected.items() if now - t < RECENT)
        changed = {a: t for a, t in self._changed_objects.items() if now - t < RECENT}
        self._changed_objects = changed
        return Frame(self.sim.tick, now, agent_views(self.sim, reflecting), events, dropped,
                     running=not self._paused, speed=self._speed_now(),
                     until=self._chase.until if self._chase else None,
                     note=note, objects=dict(self.sim.objects), changed_objects=frozenset(changed),
                     breakpoints=tuple(self._breakpoints.values()), hits=hits,
                     save_path=str(self.sim.save.path), chase=self._chase, stopped=stopped)

    # --- the worker thread ------------------------------------------------------------------

    def run(self) -> None:
        try:
            while True:
                wait = self._wait_seconds()
                if wait != 0:  # about to idle: the save's clock shows this tick (see Simulation.write_clock)
                    self.sim.write_clock()
                self._take_commands(wait)
                if self._quit:
                    break
                if self._steps or self._tick_due():
                    self._steps = max(0, self._steps - 1)
                    self._tick()
                self._maybe_publish()
        except Stopped:
            pass  # stopped mid-tick (see `stop`): that tick is dropped, the save is whole
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

    def _apply(self, queued: Queued) -> None:
        self._dirty = True  # every command changes something the header shows
        command, reply = queued
        if isinstance(command, cmd.INTERVENTIONS):
            self._intervene(command, reply)
        elif isinstance(command, cmd.RunUntil):
            self._run_until(command.when)
        elif isinstance(command, cmd.Break):
            self._breakpoints[command.breakpoint.id] = command.breakpoint
        elif isinstance(command, cmd.Unbreak):
            if command.id is None:
                self._breakpoints.clear()
            else:
                self._breakpoints.pop(command.id, None)
        elif isinstance(command, cmd.StepAgent):
            # one chase at a time: asking again moves it to another agent (or from a time)
            asleep = any(a.asleep for a in self.sim.agents if a.name == command.agent)
            self._chase_to(Chase(self.sim.now, agent=command.agent, asleep=asleep))
        else:
            self._control(command)

    def _control(self, command: Command) -> None:
        if isinstance(command, cmd.Toggle):
            if not self._paused and self._chase is not None:
                self._give_up()  # space while running toward a goal: stop there
            self._paused = not self._paused
            self._steps = 0
            self._next_tick = time.monotonic()
        elif isinstance(command, cmd.Cancel):
            if self._chase is not None:
                self._give_up()
                self._paused, self._steps = True, 0
        elif isinstance(command, cmd.Step):
            self._paused = True  # stepping is a paused-mode thing: it stops a running town
            self._steps += 1
        elif isinstance(command, cmd.Faster):
            self._speed = min(self._speed + 1, len(SPEEDS) - 1)
        elif isinstance(command, cmd.Slower):
            self._speed = max(self._speed - 1, 0)
            self._next_tick = min(self._next_tick, time.monotonic() + self._interval())
        elif isinstance(command, cmd.Quit):
            self._quit = True
        else:
            raise ValueError(f"unknown command {command!r}")

    def _run_until(self, when: datetime) -> None:
        if self.sim.now >= when:
            self._note = f"It is already {self.sim.now:%a %H:%M}, past {when:%a %H:%M}: nothing to run."
            return
        self._chase_to(Chase(self.sim.now, until=when))

    def _chase_to(self, chase: Chase) -> None:
        self._chase = chase
        self._paused = False
        self._steps = 0
        self._next_tick = time.monotonic()

    def _give_up(self) -> None:
        chase, self._chase = self._chase, None
        assert chase is not None
        self._note = (f"Stopped short of {chase.goal()} at {self.sim.now:%H:%M}, after "
                      f"{span(self.sim.now - chase.since)} of game time.")

    def _check_chase(self, events: list[Event]) -> None:
        """End the chase at its goal, saying what it stopped on."""
        chase, now = self._chase, self.sim.now
        if chase is None:
            return
        after = f"after {span(now - chase.since)} of game time"
        if chase.agent is not None:
            event = next_event(chase.agent, events)
            if event is None:
                return
            woke = chase.asleep and not any(a.asleep for a in self.sim.agents if a.name == chase.agent)
            lead = f"{chase.agent} woke up" if woke else f"{chase.agent}'s next event"
            self._stopped = f"{lead}: {event.text} at {now:%H:%M}, {after}."
        elif chase.until is not None and now >= chase.until:
            self._stopped = f"Reached {chase.until:%H:%M} ({chase.until:%a %Y-%m-%d}), {after}: paused."
        else:
            return
        self._chase, self._paused, self._steps = None, True, 0

    def _intervene(self, command: cmd.Intervention, reply: Reply | None) -> None:
        """The user's hand in the town, between ticks; each is committed at once, and its reply
        says what changed (or why nothing did)."""
        try:
            result: Any = self.sim.apply(command)
            if isinstance(command, cmd.EditObject):
                self._changed_objects[command.address] = self.sim.now
        except Exception as e:  # the reply reports it; the town runs on untouched
            result = e
        if reply is not None:
            reply(result)

    def _speed_now(self) -> int | None:
        """Ticks a second: a running chase goes as fast as it can, and the chosen speed is kept."""
        return None if self._chase is not None and not self._paused else SPEEDS[self._speed]

    def _interval(self) -> float:
        speed = self._speed_now()
        return 0.0 if speed is None else 1.0 / speed

    def _frame_seconds(self) -> float:
        return MAX_SPEED_FRAME_SECONDS if self._speed_now() is None else FRAME_SECONDS

    def _tick_due(self) -> bool:
        return not self._paused and time.monotonic() >= self._next_tick

    def _tick(self) -> None:
        started = self.tick_started = time.monotonic()
        try:
            events = self.sim.step()
        finally:
            self.tick_started = None
        # No catching up: a slow tick (a model call) delays the next one instead of bunching them.
        self._next_tick = started + self._interval()
        self._remember(events)
        self._check_breakpoints(events)
        overflow = len(self._pending) + len(events) - EVENT_CAP
        if overflow > 0:
            self._dropped += overflow
        self._pending.extend(events)
        self._dirty = True
        self._check_chase(events)

    def _remember(self, events: list[Event]) -> None:
        for e in events:
            self._mark(e.kind, e.agent, e.data, self.sim.now)

    def _remember_recent(self) -> None:
        """A run opened part-way through: the changes and reflections of its last half hour, from
        the save's event log, so the first frames mark them as the ticks before would have."""
        since = self.sim.tick - int(RECENT.total_seconds() // self.sim.world.step_seconds)
        for stamp, agent, kind, data in self.sim.save.events_since(since, ("object", "reflected")):
            self._mark(kind, agent, data, datetime.strptime(stamp, TIME_FMT))

    def _mark(self, kind: str, agent: str | None, data: dict, when: datetime) -> None:
        if kind == "object" and data.get("address"):
            self._changed_objects[data["address"]] = when
        elif kind == "reflected" and agent:
            self._reflected[agent] = when

    def _check_breakpoints(self, events: list[Event]) -> None:
        if not self._breakpoints:
            return
        kinds = {b.kind for b in self._breakpoints.values()}
        saved = self.sim.save.reader()
        calls = saved.tick_calls(self.sim.tick) if "call" in kinds else []
        memories = saved.memories_made(self.sim.now.strftime(TIME_FMT)) if "memory" in kinds else []
        hits = check(self._breakpoints.values(), events, calls, memories)
        if not hits:
            return
        for h in hits:
            if h.breakpoint.once:
                self._breakpoints.pop(h.breakpoint.id, None)
        self._hits = tuple(hits)
        self._paused = True
        self._steps = 0

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

