"""A TUI session: one app after another on the same terminal, as the user opens another save or
world or goes on in a copy (each app ends with the file to open next as its result)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Callable

from smalltown.sim.files import reason
from smalltown.sim.simulation import Simulation
from smalltown.tui.app import SmalltownApp
from smalltown.tui.interventions import Kept


def run_tui(sim: Simulation, until: datetime | None = None, notice: str | None = None,
            reopen: Callable[[Path], Simulation] | None = None, running: bool = False) -> int:
    """Open the TUI on a simulation, paused (`running`: running; `until`: running there at full
    speed); returns when the user quits (the sim is closed), with the exit code: 0, 130 when Ctrl-C
    ended it, or 143 when SIGTERM did. When the user opens another file (or goes on in a copy), `reopen` opens it
    and the TUI starts again on it, paused; a file that will not open sends the user back to the
    save they were in, paused, with the error as the first note of its log."""
    error: str | None = None
    kept: Kept | None = None
    while True:
        app = SmalltownApp(sim, until=until, start_paused=not running, notice=notice,
                           can_open=reopen is not None, saving_to=sim.save.path, error=error, kept=kept)
        target = app.run()
        if app.terminated:
            return 143
        if app.interrupted:
            return 130
        if target is None or reopen is None:
            return 0
        until, notice, running, error = None, None, False, None
        kept = app.kept() if app._same_town else None  # (another save or world: a fresh start)
        try:
            sim = reopen(target)
        except Exception as e:  # noqa: BLE001 - any refusal: said in the TUI, back in the run the user had
            error = (f"Could not open {target}: {reason(e)}. Back in {sim.save.path}, paused, as it was "
                     "(nothing was changed).")
            sim = reopen(sim.save.path)  # (if that fails too, the session ends with its error)
