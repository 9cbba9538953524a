"""Issue 16: a model's answer never freezes the TUI. The engine ticks on the app's worker thread
(tui/app.py, tui/runner.py), so while a tick waits on a backend's answer the interface still takes
key presses. The backend here holds its answer until the test lets it go: if a waiting tick
blocked the interface, the key would never be handled before the answer (no clock is read)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from helpers import TINY, wait_until
from smalltown.scripted import ScriptedBackend
from smalltown.sim.open import create
from smalltown.tui.app import SmalltownApp
from smalltown.tui.screens.help import HelpScreen
from smalltown.world.load import load_world

class Held(ScriptedBackend):
    """The stand-in as a model whose answers wait until `release` is set (a bound keeps a broken
    test from hanging)."""

    def __init__(self, seed: int):
        super().__init__(seed)
        self.answering = threading.Event()
        self.release = threading.Event()
        self.answered = 0

    def answer(self, task, prompt=""):
        self.answering.set()
        try:
            self.release.wait(timeout=60)
            return super().answer(task, prompt)
        finally:
            self.answered += 1


@pytest.mark.asyncio
async def test_a_key_is_handled_at_once_while_a_tick_waits_on_a_slow_backend(tmp_path: Path) -> None:
    world = load_world(TINY)
    backend = Held(world.seed)
    backend.release.set()  # (creating the run asks its first questions: answered at once)
    sim = create(world, tmp_path / "tiny.sqlite", backend, overwrite=True)
    backend.release.clear()
    backend.answering.clear()
    before = backend.answered
    app = SmalltownApp(sim, start_paused=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("n")  # one tick: the first agent wakes and asks the model
        await wait_until(pilot, backend.answering.is_set)
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen), seconds=30)
        # the key was handled while the answer was still held: the tick has not ended
        assert backend.answered == before and app.frame.tick == 0 and sim.finished == 0
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)
        backend.release.set()  # the answer comes; the tick ends
        await wait_until(pilot, lambda: sim.finished == 1, seconds=30)
        assert backend.answered > before
