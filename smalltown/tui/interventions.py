"""The live app's interventions and file commands: whisper, interview, edit an object, save, fork,
save as, rewind and open. Each is a command to the simulation's worker, run between ticks; its
result comes back as a `Replied` message and is confirmed in the log. Opening another file (or
going on in a copy) ends the app with that file as its result."""

from __future__ import annotations

import re
import time
from pathlib import Path
from dataclasses import dataclass
from typing import Any, Callable

from rich.console import RenderableType
from textual.message import Message

from smalltown.shown import shown
from smalltown.sim.breakpoints import Breakpoint
from smalltown.sim.clock import clock_near
from smalltown.sim.commands import CopySave, EditObject, Interview, Rewind, SaveNow, Whisper
from smalltown.sim.files import SavePathError, require_folder, unopenable
from smalltown.tui.runner import SimRunner
from smalltown.tui.snapshot import DEFAULT_SPEED
from smalltown.tui.screens.forms import AskScreen, EditObjectScreen
from smalltown.tui.screens.interview import InterviewScreen
from smalltown.tui.town import TownView
from smalltown.tui.widgets.map_view import MapView
from smalltown.tui.widgets.panels import EventLog
from smalltown.world.bundled import default_world
from smalltown.world.model import World


@dataclass(frozen=True)
class Kept:
    """What a run going on in another file of the same town (a rewind, a save as) keeps of the
    app it leaves: the breakpoints, the display speed, the event log and the agent selected."""

    breakpoints: tuple[Breakpoint, ...] = ()
    next_breakpoint: int = 1
    speed: int = DEFAULT_SPEED  # an index in snapshot.SPEEDS
    log: tuple[RenderableType, ...] = ()
    show_perceived: bool = False
    selected: str | None = None


class Replied(Message):
    """Posted from the worker thread: an intervention's result, for the callback that asked."""

    def __init__(self, callback: Callable[[Any], None], result: Any) -> None:
        super().__init__()
        self.callback = callback
        self.result = result


class Interventions(TownView[Path | None]):  # its result: a file to open next, or None
    """The live app's commands that change the town or its file, as a base of `SmalltownApp`,
    which sets these attributes."""

    _runner: SimRunner
    _world: World
    _colours: dict[str, str]
    _save_name: str
    _can_open: bool
    _reopen: Path | None
    _next_breakpoint: int
    _same_town = False  # it goes on in another file of this town: run_tui hands the next app `kept()`
    _log_kept: tuple[RenderableType, ...] = ()  # the log and its filter, as the app ended
    _perceived_kept = False

    def kept(self) -> Kept:
        """What the next app keeps of this one, once it has ended (the worker is done)."""
        speed, breakpoints = self._runner.kept()
        return Kept(breakpoints, self._next_breakpoint, speed, self._log_kept, self._perceived_kept, self.selected)

    def _note(self, message: str, notify: bool = True) -> None:
        """A confirmation: in the log, and for a moment in the corner (on whatever screen). It
        may quote the save (names, states, errors): shown as text, never as markup."""
        self.query_one(EventLog).note(message)
        if notify:
            self.notify(shown(message), timeout=4, markup=False)

    def _replier(self, callback: Callable[[Any], None]) -> Callable[[Any], None]:
        """A reply the worker calls on its own thread; the callback runs on the interface's."""
        def reply(result: Any) -> None:
            try:
                self.post_message(Replied(callback, result))
            except RuntimeError:
                pass  # the app is gone
        return reply

    def on_replied(self, message: Replied) -> None:
        message.callback(message.result)

    def _failed(self, what: str, result: Any) -> bool:
        if isinstance(result, Exception):
            self._note(f"{what} failed: {result}")
            self.bell()
            return True
        return False

    def action_whisper(self) -> None:
        name = self.selected
        if not name:
            return

        def done(memory: Any) -> None:
            if not self._failed("Whisper", memory):
                self._note(f"Whispered to {name}: memory #{memory.id} “{memory.description}”; "
                           f"{name.split()[0]} re-plans around it.")

        def chosen(text: str | None) -> None:
            if text:
                self._runner.send(Whisper(name, text), self._replier(done))

        self.push_screen(AskScreen(f"Whisper to {name}", "The thought (it becomes the agent's own)",
                                   placeholder="You should throw a party tonight.",
                                   hint="Stored as a reflection; the rest of the day is planned again."), chosen)

    def action_interview(self) -> None:
        name = self.selected
        if not name:
            return

        def ask(question: str, persona: str, callback: Callable[[Any], None]) -> None:
            self._runner.send(Interview(name, question, persona), self._replier(callback))

        self.push_screen(InterviewScreen(name, ask, self._colours.get(name, "white")))

    def action_edit_object(self) -> None:
        view = self.query_one(MapView)
        address = (view.object_at(view.cursor) if view.cursor is not None else None) or ""
        if not address and self.selected:  # what the selected agent is using or heading for
            address = next((a.action_address for a in self.frame.agents if a.name == self.selected), "") or ""

        def done(result: Any) -> None:
            if not self._failed("Edit", result):
                obj, state = result
                self._note(f"{obj.replace(':', ': ')} is now {state!r} (was {before.get(obj, '?')!r}); "
                           "agents who see it will notice.")

        before: dict[str, str] = {}

        def chosen(result: tuple[str, str] | None) -> None:
            if result:
                before.update(self.frame.objects)
                self._runner.send(EditObject(*result), self._replier(done))

        self.push_screen(EditObjectScreen(self.frame.objects, address), chosen)

    def action_save(self) -> None:
        def done(result: Any) -> None:
            if not self._failed("Save", result):
                tick, path = result
                self._note(f"Saved {path} at tick {tick}, with a snapshot to fork or rewind to "
                           "(every tick that changes something is committed as it runs).")

        self._runner.send(SaveNow(), self._replier(done))

    def _ask_path(self, title: str, label: str, suggestion: Path, then: Callable[[Path], None],
                  must_exist: bool = False) -> None:
        def check(text: str) -> str | None:  # what can be known here is refused here, not after the app ends
            path = Path(text).expanduser()
            if must_exist:
                return unopenable(path)
            if path.exists():
                return f"{path} already exists: choose a new name"
            try:
                require_folder(path)
            except SavePathError as e:
                return str(e)
            return None

        def chosen(text: str | None) -> None:
            if text:
                then(Path(text).expanduser())

        self.push_screen(AskScreen(title, label, value=str(suggestion), check=check), chosen)

    def _copy_name(self, word: str) -> Path:
        """A free name beside the save you are on: `town-copy2` after `town-copy`, `town-at-0900`
        for a rewind of `town-at-1200`, but `town-at-0900-copy` for a copy of a rewound save."""
        path = Path(self.frame.save_path or self._save_name)
        same = r"at-\d{4}" if word.startswith("at-") else re.escape(word)  # only a suffix of the same kind
        stem = re.sub(rf"-{same}\d*$", "", path.stem)
        for i in range(1, 1000):
            candidate = path.with_name(f"{stem}-{word}{i if i > 1 else ''}{path.suffix}")
            if not candidate.exists():
                return candidate
        return path.with_name(f"{stem}-{word}-{int(time.time())}{path.suffix}")

    def action_fork(self) -> None:
        def done(result: Any) -> None:
            if not self._failed("Fork", result):
                self._note(f"Forked at tick {self.frame.tick} to {result}; this run goes on in "
                           f"{Path(self.frame.save_path).name}. Open the fork with O.")

        self._ask_path("Fork to a new file", "The copy's file (the run goes on here)", self._copy_name("fork"),
                       lambda path: self._runner.send(CopySave(str(path)), self._replier(done)))

    def action_save_as(self) -> None:
        if not self._can_open:
            self._note("Save as is not available here: use fork (F).")
            return

        def done(result: Any) -> None:
            if not self._failed("Save as", result):
                self._note(f"Saved as {result}; going on there.")
                self._open_after(Path(result), same_town=True)

        self._ask_path("Save as", "The new file (the run goes on there)", self._copy_name("copy"),
                       lambda path: self._runner.send(CopySave(str(path)), self._replier(done)))

    def action_rewind(self) -> None:
        if not self._can_open:
            self._note("Rewinding is not available here: use smalltown fork.")
            return
        now = self.frame.now
        start = self._world.start

        def check(text: str) -> str | None:
            try:
                when = clock_near(text, now, start, last=True)
            except ValueError as e:
                return str(e)
            if not start <= when <= now:
                return f"the run goes from {start:%a %H:%M} to {now:%a %H:%M}"
            return None

        def done(result: Any) -> None:
            if not self._failed("Rewind", result):
                self._note(f"Rewound to {result.time:%a %H:%M} (tick {result.tick}, the latest snapshot "
                           f"by then) in {result.path.name}; the run until now stays in {result.source.name}.")
                self._open_after(Path(result.path), same_town=True)

        def chosen(text: str | None) -> None:
            if text:
                when = clock_near(text, now, start, last=True)
                to = self._copy_name(f"at-{when:%H%M}")
                self._runner.send(Rewind(when, str(to)), self._replier(done))

        self.push_screen(AskScreen("Rewind", "Back to game time", placeholder="9:00, -2h, 2023-02-13 09:00",
                                   hint="Opens a new save as the town was then (from the hourly snapshot at "
                                        "or before it); this run stays as it is.", check=check), chosen)

    def action_open(self) -> None:
        if not self._can_open:
            self._note("Opening another file is not available here.")
            return
        self._ask_path("Open a save or a world", "File (a save, or a world's .toml)",
                       default_world(), self._open_after, must_exist=True)

    def _open_after(self, path: Path, same_town: bool = False) -> None:
        """End this app (saving as it does); run_tui opens `path`, and with `same_town` (a copy of
        this run, or a rewind of it) keeps the breakpoints, the speed and the log."""
        self._reopen = path
        self._same_town = same_town
        self.run_worker(self.action_quit(), exclusive=False)
