"""The way to a real model, inside the TUI (issue 14): the models screen (m) in the live app and
in replay, the backend's state in the clock bar, and the start-up notice that points to them."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from textual.widgets import Static

from helpers import tiny_sim, wait_until
from smalltown.llm.models import HOW_TO_ADD
from smalltown.llm.openai_compat import OpenAIBackend
from smalltown.tui.app import SmalltownApp
from smalltown.tui.replay import ReplayApp
from smalltown.tui.screens.models import BackendFacts, ModelsScreen, backend_facts, state_line


def text_of(screen, selector: str) -> str:
    """What a Static shows, as plain text (a Text, or a rich Table printed)."""
    from io import StringIO

    from rich.console import Console

    shown = screen.query_one(selector, Static).content
    console = Console(width=200, file=StringIO(), color_system=None)
    with console.capture() as cap:
        console.print(shown)
    return cap.get()


def saved_calls(path: Path) -> tuple[int, int]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT count(*), coalesce(sum(fallback != ''), 0) FROM llm_calls").fetchone()
    finally:
        conn.close()


@pytest.mark.asyncio
async def test_m_opens_the_models_screen_with_the_backend_and_the_way_to_a_model(tmp_path: Path) -> None:
    sim = tiny_sim(tmp_path, until="06:30")
    app = SmalltownApp(sim, start_paused=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("m")
        assert isinstance(app.screen, ModelsScreen)
        calls, _ = saved_calls(tmp_path / "tiny.sqlite")
        assert calls > 0
        backend = text_of(app.screen, "#backend")
        assert "scripted" in backend and "none: the stand-in answers every question" in backend
        assert f"{calls:,} calls so far" in text_of(app.screen, "#figures")
        assert "writes the plans, the conversations and the reflections" in text_of(app.screen, "#what")
        how = text_of(app.screen, "#how")
        for command in ("smalltown models", "smalltown models pull NAME", "pip install 'smalltown[models]'",
                        "smalltown run SAVE --model PATH.gguf", "--backend openai --base-url"):
            assert command in how
        local = text_of(app.screen, "#local")
        assert "models directory:" in local and "qwen2.5-3b" in local
        await pilot.press("escape")
        assert not isinstance(app.screen, ModelsScreen)
        await pilot.press("q")
        await wait_until(pilot, lambda: app.return_code is not None)


@pytest.mark.asyncio
async def test_the_clock_bar_shows_the_backend_and_its_calls_as_the_run_goes(tmp_path: Path) -> None:
    sim = tiny_sim(tmp_path, until="06:30")
    app = SmalltownApp(sim, start_paused=True)
    path = tmp_path / "tiny.sqlite"
    async with app.run_test(size=(160, 30)) as pilot:
        bar = lambda: str(app.query_one("#backend", Static).content)  # noqa: E731
        before, _ = saved_calls(path)
        await wait_until(pilot, lambda: f"{before:,} calls" in bar())
        assert bar().startswith("scripted (no model)")
        await pilot.press("plus", "plus", "plus", "space")  # Isabella is awake: her thinking is logged
        await wait_until(pilot, lambda: saved_calls(path)[0] > before, seconds=20)
        await pilot.press("space")
        await wait_until(pilot, lambda: not app.frame.running)
        await pilot.pause(0.3)
        calls, fallbacks = saved_calls(path)
        await wait_until(pilot, lambda: f"{calls:,} calls · {fallbacks:,} fallback" in bar(), seconds=5)
        await pilot.press("q")
        await wait_until(pilot, lambda: app.return_code is not None)


@pytest.mark.asyncio
async def test_without_a_chosen_model_the_start_up_notice_points_to_m(tmp_path: Path) -> None:
    app = SmalltownApp(tiny_sim(tmp_path), start_paused=True, notice=HOW_TO_ADD)
    async with app.run_test(size=(120, 30)) as pilot:
        assert any("m: how to add a model" in n.message for n in app._notifications)
        await pilot.press("q")
        await wait_until(pilot, lambda: app.return_code is not None)


def test_a_server_backend_s_facts_name_its_url_window_and_concurrency() -> None:
    backend = OpenAIBackend("http://127.0.0.1:9/v1", model="qwen2.5-3b", max_concurrency=8, context=8192)
    facts = backend_facts(backend)
    assert facts == BackendFacts("openai", "qwen2.5-3b", "http://127.0.0.1:9/v1", 8192, None, 8)
    assert state_line(facts, 1204, 3).plain == "openai qwen2.5-3b · ctx 8,192 · 1,204 calls · 3 fallbacks"
    assert state_line(backend_facts(tiny_backend()), 1, 0).plain == "scripted (no model) · 1 call · 0 fallbacks"


def tiny_backend():
    from smalltown.scripted import ScriptedBackend

    return ScriptedBackend(1)


@pytest.mark.asyncio
async def test_m_in_replay_shows_who_answered_the_recorded_run(tmp_path: Path) -> None:
    sim = tiny_sim(tmp_path, until="06:30")
    sim.close()
    path = tmp_path / "tiny.sqlite"
    calls, _ = saved_calls(path)
    app = ReplayApp(path)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("m")
        assert isinstance(app.screen, ModelsScreen)
        recorded = text_of(app.screen, "#backend")
        assert "scripted" in recorded and f"{calls:,} calls" in recorded
        assert "smalltown models pull NAME" in text_of(app.screen, "#how")
        await pilot.press("m")
        assert not isinstance(app.screen, ModelsScreen)


def test_a_llama_backend_s_facts_say_which_cpu_paths_llama_cpp_takes(tmp_path: Path) -> None:
    from rich.console import Console

    from smalltown.llm.llama import LlamaBackend
    from smalltown.tui.screens.models import backend_table
    from tinymodel import build_tiny_gguf

    backend = LlamaBackend(build_tiny_gguf(tmp_path / "tiny.gguf"), n_ctx=512, n_threads=1, repack="off")
    try:
        facts = backend_facts(backend)
    finally:
        backend.close()
    lines = dict(facts.cpu)
    assert lines["weight repacking"] == "off (--repack off)"
    assert lines["AMX"].startswith(("absent", "present, kept off"))
    assert "AVX" in lines["CPU features"] or "NEON" in lines["CPU features"]
    assert lines["weights in"] == ", ".join(backend.buffers) and "CPU_REPACK" not in lines["weights in"]
    console = Console(width=200, color_system=None)
    with console.capture() as cap:
        console.print(backend_table(facts))
    for what, how in facts.cpu:
        assert what in cap.get() and how in cap.get()
