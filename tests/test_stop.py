"""Ctrl-C and SIGTERM stop a run within seconds, whatever the backend is doing: a question to a
server that never finishes answering, or a llama.cpp generation. The tick in flight is dropped,
the save stays at its last whole tick, passes `save check` and goes on. So does quitting the TUI
while a question is in flight."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import cli, query
from dripserver import DripServer
from helpers import ROOT, TINY, wait_until

EXIT_WITHIN = 5.0  # seconds from the signal to the process's end (on a busy 2-core machine)
# llama.cpp checks the stop between batches: one batch of a prompt (up to 512 tokens on one thread) cannot be cut,
# and on a 2-core machine shared with other work it alone took ~4 s (CI measured 5.004 s to the end)
LLAMA_EXIT_WITHIN = 8.0


@pytest.fixture(scope="module")
def morning(tmp_path_factory) -> Path:
    """A save two hours into the tiny town's day (made without a model): its next ticks ask one."""
    path = tmp_path_factory.mktemp("stop") / "morning.sqlite"
    cli("run", "--headless", TINY, "--until", "+2h", "--save", path, "--backend", "scripted", check=True)
    return path


def tick(save: Path) -> int:
    return int(query(save, "SELECT value FROM meta WHERE key = 'tick'")[0][0])


def launch(tmp_path: Path, *args: object) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-m", "smalltown", *map(str, args)], env=env, cwd=ROOT,
                            stdout=(tmp_path / "out.txt").open("w"), stderr=(tmp_path / "err.txt").open("w"))


def stop_and_time(proc: subprocess.Popen, signals: tuple[int, ...]) -> float:
    """Send the signals (a moment apart) and how long the process then took to end."""
    t0 = time.monotonic()
    for sig in signals:
        proc.send_signal(sig)
        time.sleep(0.02)
    try:
        proc.wait(EXIT_WITHIN + 10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        pytest.fail(f"still running {EXIT_WITHIN + 10:g} s after {signals}")
    return time.monotonic() - t0


def assert_continuable(save: Path, before: int) -> None:
    assert cli("save", "check", save).returncode == 0
    assert tick(save) >= before
    cli("run", "--headless", save, "--until", "+10m", "--backend", "scripted", check=True)
    assert tick(save) > before


@pytest.mark.parametrize("signals, code", [
    ((signal.SIGINT,), 130),
    ((signal.SIGTERM,), 143),
    ((signal.SIGINT, signal.SIGINT), 130),  # the second leaves at once
], ids=["ctrl-c", "sigterm", "ctrl-c twice"])
def test_a_signal_stops_a_run_waiting_on_a_server(morning: Path, tmp_path: Path, signals, code):
    save = tmp_path / "run.sqlite"
    shutil.copy(morning, save)
    before = tick(save)
    with DripServer(0.5) as server:
        proc = launch(tmp_path, "run", "--headless", save, "--until", "+1h", "--backend", "openai",
                      "--base-url", server.url, "--timeout", "60")
        deadline = time.monotonic() + 30
        while not server.posts() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert server.posts(), (tmp_path / "err.txt").read_text()
        time.sleep(0.3)  # well inside the request, which would last a minute
        took = stop_and_time(proc, signals)
    err = (tmp_path / "err.txt").read_text()
    # (a second Ctrl-C that comes as the process is already exiting, after its handlers are gone, ends it as
    # a Ctrl-C does: -SIGINT)
    assert proc.returncode == code or (len(signals) > 1 and proc.returncode == -signal.SIGINT), err
    assert took <= EXIT_WITHIN, err
    assert "Traceback" not in err
    if len(signals) == 1:
        assert "the save is intact at its last whole tick" in " ".join(err.split())  # (a table title may wrap)
        assert f"continue it: smalltown run {save} --headless --until" in err
    assert_continuable(save, before)


def test_sigterm_stops_a_llama_generation(morning: Path, tmp_path: Path, smollm2: Path):
    """SmolLM2 on one thread takes seconds over a question: a SIGTERM sent while it answers ends
    the run within seconds, and the question is not in the save (its tick was dropped)."""
    model = smollm2  # a model slow enough to be caught mid-answer (skipped without it, failed in CI)
    save = tmp_path / "run.sqlite"
    shutil.copy(morning, save)
    before = tick(save)
    proc = launch(tmp_path, "run", "--headless", save, "--until", "+1h", "--backend", "llama", "--model", model,
                  "--threads", "1")
    # The ticks before the first question take milliseconds: a save that stops moving is a
    # question being answered.
    last, since, deadline = before, time.monotonic(), time.monotonic() + 60
    while proc.poll() is None and time.monotonic() < deadline:
        now = tick(save)
        if now != last:
            last, since = now, time.monotonic()
        elif now > before and time.monotonic() - since > 0.5:
            break
        time.sleep(0.05)
    assert proc.poll() is None, (tmp_path / "err.txt").read_text()
    took = stop_and_time(proc, (signal.SIGTERM,))
    err = (tmp_path / "err.txt").read_text()
    assert proc.returncode == 143, err
    assert took <= LLAMA_EXIT_WITHIN, err
    assert query(save, "SELECT count(*) FROM llm_calls WHERE backend = 'llama'") == [(0,)]  # cut off
    assert_continuable(save, before)


@pytest.mark.parametrize("how", ["q", "sigterm"])
async def test_leaving_the_tui_while_a_question_hangs(morning: Path, tmp_path: Path, how: str):
    """q, or SIGTERM, while the town waits on a server that never finishes answering: the app
    ends within seconds, its clock back at the save's last whole tick, and the save goes on."""
    save = tmp_path / "tui.sqlite"
    shutil.copy(morning, save)
    before = tick(save)
    previous = signal.signal(signal.SIGTERM, lambda *_: None)  # a SIGTERM the app does not take is ignored
    try:
        await leave_while_asking(save, how)
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert_continuable(save, before)


async def leave_while_asking(save: Path, how: str) -> None:
    from smalltown.llm.openai_compat import OpenAIBackend
    from smalltown.scripted import ScriptedBackend
    from smalltown.sim.open import resume
    from smalltown.tui.app import SmalltownApp

    with DripServer(0.5) as server:
        backend = OpenAIBackend(server.url, timeout=60, retries=0)
        sim = resume(save, backend, fallback=ScriptedBackend(0))
        app = SmalltownApp(sim, start_paused=False)
        async with app.run_test(size=(80, 24)) as pilot:
            for _ in range(4):
                await pilot.press("plus")  # to "max": the first question is some 180 ticks away
            await wait_until(pilot, lambda: sim.asker.in_flight(), seconds=30)
            await pilot.pause(0.3)
            t0 = time.monotonic()
            if how == "q":
                await pilot.press("q")
            else:
                os.kill(os.getpid(), signal.SIGTERM)  # (the app's handler; the test's own keeps pytest alive)
            await wait_until(pilot, lambda: app.return_code is not None, seconds=EXIT_WITHIN)
            took = time.monotonic() - t0
    assert took <= EXIT_WITHIN
    assert app.terminated == (how == "sigterm")
    assert sim.tick == tick(save)  # the clock is the save's: the tick in flight was dropped


def test_ctrl_c_while_a_run_is_still_opening_is_a_stop_not_a_crash(tmp_path: Path, capsys, monkeypatch):
    """Before run_headless puts its handler in place (opening a save, loading a model), Ctrl-C
    raises KeyboardInterrupt wherever the run is: it ends as a stop (130), without a traceback,
    and nothing is left at the new save's name."""
    import smalltown.cli.run as run_cli
    from smalltown.cli.main import main

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(run_cli, "open_simulation", interrupted)
    save = tmp_path / "s.sqlite"
    rc = main(["run", "--headless", str(TINY), "--until", "+10m", "--backend", "scripted", "--save", str(save)])
    err = capsys.readouterr().err
    assert rc == 130 and "stopped (Ctrl-C)" in err and "Traceback" not in err, err
    assert not save.exists() and not Path(f"{save}.partial").exists()


def test_a_signal_while_a_run_opens_stops_it_before_its_first_tick(tmp_path: Path, capsys, monkeypatch):
    """Ctrl-C while the save is opened (or a model loads) is remembered, not raised as a
    KeyboardInterrupt that a finaliser could swallow: the run stops before its first tick and
    says so; a new save's creation is stopped with it (its first memories are not rated), and
    nothing is left at its name (tests/test_server_path.py: the same against a slow server)."""
    import smalltown.cli.run as run_cli
    from smalltown.cli.main import main

    real = run_cli.open_simulation

    def opening_with_a_ctrl_c(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGINT)  # delivered now, in the middle of opening
        return real(*args, **kwargs)

    monkeypatch.setattr(run_cli, "open_simulation", opening_with_a_ctrl_c)
    save = tmp_path / "s.sqlite"
    rc = main(["run", "--headless", str(TINY), "--until", "+10m", "--backend", "scripted", "--save", str(save)])
    err = capsys.readouterr().err
    assert rc == 130 and "Traceback" not in err, err
    assert "while the save was being created: nothing was saved" in err
    assert not save.exists() and not Path(f"{save}.partial").exists()
