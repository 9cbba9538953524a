"""Issue 16: a model's answer never freezes the TUI. The engine ticks on the app's worker thread
(tui/app.py, tui/runner.py), so while a tick waits on a backend that takes a second per answer,
the interface still takes a key press at once."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from helpers import TINY, wait_until
from smalltown.scripted import ScriptedBackend
from smalltown.sim.open import create
from smalltown.tui.app import SmalltownApp
from smalltown.tui.screens.help import HelpScreen
from smalltown.world.load import load_world

ANSWER_SECONDS = 1.0


class Unhurried(ScriptedBackend):
    """The stand-in as a model that takes a second over every answer."""

    def __init__(self, seed: int):
        super().__init__(seed)
        self.answering = threading.Event()
        self.answered = 0

    def answer(self, task, prompt=""):
        self.answering.set()
        try:
            time.sleep(ANSWER_SECONDS)
            return super().answer(task, prompt)
        finally:
            self.answered += 1
            self.answering.clear()


@pytest.mark.asyncio
async def test_a_key_is_handled_at_once_while_a_tick_waits_on_a_slow_backend(tmp_path: Path) -> None:
    world = load_world(TINY)
    backend = Unhurried(world.seed)
    sim = create(world, tmp_path / "tiny.sqlite", backend, overwrite=True)
    app = SmalltownApp(sim, start_paused=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("n")  # one tick: the first agent wakes and asks the model
        await wait_until(pilot, backend.answering.is_set)
        asked_at, answered = time.monotonic(), backend.answered
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen), seconds=ANSWER_SECONDS / 2)
        took = time.monotonic() - asked_at
        # the key was handled while the answer was still being written: the tick has not ended
        assert took < ANSWER_SECONDS / 2 and backend.answered == answered
        assert app.frame.tick == 0 and sim.finished == 0
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)
