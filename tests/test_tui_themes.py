"""Textual's themes from the command palette: picked there, kept in the user's config file (the
line added, the user's own lines left as written), and the next TUI (live or replay) opens in it;
a theme the config names that Textual lacks is said, and the default used."""

from __future__ import annotations

import pytest
from textual.command import CommandPalette

from helpers import tiny_sim, wait_until
from smalltown.llm.models import config_path, user_config
from smalltown.tui.app import SmalltownApp
from smalltown.tui.replay import ReplayApp

USERS_OWN = "# my settings\nctx = 4096\n"


@pytest.fixture
def config(tmp_path, monkeypatch):
    """A config file of the user's own, in a config folder of this test's."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    path = config_path()
    path.parent.mkdir(parents=True)
    path.write_text(USERS_OWN, encoding="utf-8")
    return path


@pytest.mark.asyncio
async def test_a_theme_picked_in_the_palette_is_kept_and_the_next_tui_opens_in_it(tmp_path, config) -> None:
    sim = tiny_sim(tmp_path)
    app = SmalltownApp(sim)
    async with app.run_test(size=(120, 40)) as pilot:
        assert "Theme" in [c.title for c in app.get_system_commands(app.screen)]
        default = app.theme
        await pilot.press("ctrl+p")
        await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette))
        await pilot.press(*"theme")
        await pilot.pause(0.5)
        await pilot.press("enter")  # the palette lists the themes now
        await pilot.pause(0.5)
        await pilot.press(*"nord")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.theme == "nord" and "nord" in config.read_text())
        assert default != "nord"
    assert config.read_text(encoding="utf-8") == USERS_OWN + 'theme = "nord"\n'
    assert user_config() == {"ctx": 4096, "theme": "nord"}  # a config file the run reads as before

    replay = ReplayApp(sim.save.path)
    async with replay.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert replay.theme == "nord"
        replay.theme = "gruvbox"  # picked again: the line is replaced, not added
        await wait_until(pilot, lambda: "gruvbox" in config.read_text())
    assert config.read_text(encoding="utf-8") == USERS_OWN + 'theme = "gruvbox"\n'


@pytest.mark.asyncio
async def test_an_unknown_theme_in_the_config_is_said_and_the_default_used(tmp_path, config) -> None:
    config.write_text(USERS_OWN + 'theme = "no-such-theme"\n', encoding="utf-8")
    app = SmalltownApp(tiny_sim(tmp_path))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: any("no-such-theme" in n.message for n in app._notifications))
        assert app.theme == "textual-dark"
    assert "no-such-theme" in config.read_text()  # (the user's file is not rewritten unasked)
