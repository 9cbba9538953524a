"""Driving a session of `smalltown run` in the TUI through the command line's own path (`main` ->
`start_tui` -> `run_tui`): each app `run_tui` starts is run headless by Textual, driven by the
next of a list of scripts (tests/test_tui_session*.py)."""

from __future__ import annotations

from typing import Awaitable, Callable

from textual.pilot import Pilot
from textual.widgets import Input

from helpers import wait_until
from smalltown.cli.main import main
from smalltown.tui.app import SmalltownApp

Script = Callable[[Pilot], Awaitable[None]]


def session(monkeypatch, argv: list, scripts: list[Script]) -> tuple[int, list[SmalltownApp]]:
    """`smalltown run ARGV` with each TUI it opens driven by the next script; the apps in order.
    A script that fails ends its app and the session, and its error is raised here."""
    apps: list[SmalltownApp] = []
    failures: list[BaseException] = []
    run = SmalltownApp.run

    def headless(self: SmalltownApp, **_):
        apps.append(self)
        script = scripts[len(apps) - 1] if len(apps) <= len(scripts) else None

        async def pilot(p: Pilot) -> None:
            try:
                assert script is not None, "run_tui started more apps than the test expected"
                await script(p)
            except BaseException as e:  # noqa: BLE001 - raised again by the test, not lost in the app
                failures.append(e)
                self._reopen = None
                await self.action_quit()

        return run(self, headless=True, size=(120, 40), auto_pilot=pilot)

    monkeypatch.setattr(SmalltownApp, "run", headless)
    code = main([str(a) for a in argv])
    if failures:
        raise failures[0]
    return code, apps


def answer(pilot: Pilot, text: str) -> None:
    """Type `text` as the open dialog's answer (replacing what it suggests)."""
    pilot.app.screen.query_one("#answer", Input).value = text


def log_of(app: SmalltownApp) -> str:
    """The app's event log, line by line."""
    from smalltown.tui.widgets.panels import EventLog

    return "\n".join(str(line) for line in app.query_one(EventLog)._kept)


async def started(pilot: Pilot) -> None:
    """Run the town (it opens paused) until it has ticked."""
    assert not pilot.app.frame.running
    await pilot.press("space")
    await wait_until(pilot, lambda: pilot.app.frame.tick >= 1)
