"""The model-calls screen under the scripted backend (issue 14): its token columns show an
estimate from the prompt's and the answer's length, marked "~", and its title says why."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from textual.app import App
from textual.widgets import Static

from helpers import tiny_sim
from smalltown.llm.backend import estimate_prompt
from smalltown.llm.fit import estimate
from smalltown.store.packing import unpack_text
from smalltown.tui.reader import SaveReader
from smalltown.tui.screens.calls import ESTIMATED, CallDetailScreen, CallsScreen
from smalltown.tui.widgets.row_table import RowTable


class _Host(App[None]):
    def __init__(self, path: Path) -> None:
        super().__init__()
        self.reader = SaveReader(path)

    def on_mount(self) -> None:
        self.push_screen(CallsScreen(self.reader))

    def on_unmount(self) -> None:
        self.reader.close()


def _newest_call(path: Path) -> tuple[str, str]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        p, r = conn.execute("SELECT prompt, raw_answer FROM llm_calls ORDER BY id DESC LIMIT 1").fetchone()
        return unpack_text(p), unpack_text(r)  # (kept compressed: store/packing.py)
    finally:
        conn.close()


def _cells(table: RowTable, row: int) -> list[str]:
    return [str(getattr(cell, "plain", cell)) for cell in table.get_row_at(row)]


def _counted(tmp_path: Path, cached: int) -> Path:
    """A tiny scripted save whose calls say a model counted 1,234 prompt tokens (`cached` of them
    from its cache) and 56 completion tokens."""
    tiny_sim(tmp_path, until="06:20").close()
    path = tmp_path / "tiny.sqlite"
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("UPDATE llm_calls SET prompt_tokens = 1234, cached_tokens = ?, completion_tokens = 56", (cached,))
    conn.close()
    return path


@pytest.mark.asyncio
async def test_scripted_calls_show_estimated_tokens_marked_as_such(tmp_path: Path) -> None:
    tiny_sim(tmp_path, until="06:20").close()
    path = tmp_path / "tiny.sqlite"
    prompt, raw = _newest_call(path)
    app = _Host(path)
    async with app.run_test(size=(140, 30)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert ESTIMATED in screen.query_one("#title", Static).content.plain
        prompt_cell, cached_cell, completion_cell = _cells(screen.query_one("#calls", RowTable), 0)[4:7]
        assert prompt_cell == f"~{estimate_prompt(prompt):,}"
        assert completion_cell == f"~{estimate(raw):,}"
        assert cached_cell == "0"  # nothing to estimate: no cache without a model


@pytest.mark.asyncio
async def test_counted_tokens_are_shown_as_counted_without_the_note(tmp_path: Path) -> None:
    path = _counted(tmp_path, cached=0)
    app = _Host(path)
    async with app.run_test(size=(140, 30)) as pilot:
        await pilot.pause()
        assert ESTIMATED not in app.screen.query_one("#title", Static).content.plain
        assert _cells(app.screen.query_one("#calls", RowTable), 0)[4:7] == ["1,234", "0", "56"]


def _meta(app: App) -> str:
    return app.screen.query_one("#meta", Static).content.plain


@pytest.mark.asyncio
async def test_a_scripted_calls_detail_shows_the_lists_estimates_marked(tmp_path: Path) -> None:
    tiny_sim(tmp_path, until="06:20").close()
    path = tmp_path / "tiny.sqlite"
    prompt, raw = _newest_call(path)
    app = _Host(path)
    async with app.run_test(size=(140, 30)) as pilot:
        await pilot.pause()
        listed = _cells(app.screen.query_one("#calls", RowTable), 0)[4:7]
        await pilot.press("enter")  # the newest call
        await pilot.pause()
        assert isinstance(app.screen, CallDetailScreen)
        meta = _meta(app)
        assert f"prompt {listed[0]}  cached 0  completion {listed[2]}" in meta  # as the list has them
        assert listed[0] == f"~{estimate_prompt(prompt):,}" and listed[2] == f"~{estimate(raw):,}"
        assert ESTIMATED in meta


@pytest.mark.asyncio
async def test_a_counted_calls_detail_shows_its_counts_unmarked(tmp_path: Path) -> None:
    path = _counted(tmp_path, cached=617)
    app = _Host(path)
    async with app.run_test(size=(140, 30)) as pilot:
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        meta = _meta(app)
        assert "prompt 1,234  cached 617 (50%)  completion 56" in meta
        assert "~" not in meta and ESTIMATED not in meta


def test_the_totals_say_tokens_were_not_counted_rather_than_zero() -> None:
    from smalltown.tui.screens.calls import totals_line

    scripted = totals_line(5, 0, 0, 0, shown=5).plain
    assert "not counted" in scripted and "prompt 0" not in scripted
    counted = totals_line(5, 1200, 600, 80, shown=5).plain
    assert "prompt 1,200" in counted and "cached 600 (50%)" in counted and "not counted" not in counted
