"""The map's first view (tui/widgets/map_view.py `start_tile`): on a big map the top-left corner
of open ground shows no one, so the TUI and replay open on the selected agent, else the first
town's square, else the first agent; a small map already in sight is not scrolled."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import ROOT, TINY
from smalltown.scripted import ScriptedBackend
from smalltown.sim.open import create
from smalltown.world.load import load_world

TOWNS = ROOT / "worlds" / "towns.toml"


def _sid(tmp: Path) -> Path:
    """A world of Sid's layout (towns spread over 333 x 400 tiles), as `world generate --layout sid` writes it."""
    from smalltown.world.generate import Options, generate

    text, map_text = generate(Options(2, 3, 2, layout="sid"))
    (tmp / "sid-map.toml").write_text(map_text)
    (tmp / "sid.toml").write_text(text.replace('map = "MAP"', 'map = "sid-map.toml"', 1))
    return tmp / "sid.toml"


def _save(world_file: Path, path: Path) -> Path:
    world = load_world(world_file)
    create(world, path, ScriptedBackend(world.seed), overwrite=True).close()
    return path


def _in_view(view, tile) -> bool:
    sx, sy = view.scroll_offset
    w, h = view.size
    return sx <= tile[0] < sx + w and sy <= tile[1] < sy + h


def _shown(view) -> set[str]:
    """The agents whose glyph is drawn in the view as it is (alone on their tile)."""
    from smalltown.tui.palette import agent_glyph

    text = "\n".join(view.render_line(y).text for y in range(view.size.height))
    tiles = [a.tile for a in view._agents]
    return {a.name for a in view._agents if tiles.count(a.tile) == 1 and _in_view(view, a.tile)
            and agent_glyph(a.name) in text}


@pytest.mark.asyncio
@pytest.mark.parametrize("world, size", [("towns", (80, 24)), ("sid", (80, 24)), ("sid", (140, 44))])
async def test_the_tui_opens_on_the_selected_agent_of_a_big_map(tmp_path: Path, world: str, size) -> None:
    from smalltown.cli.backends import choose
    from smalltown.sim.open import RunOptions, open_run
    from smalltown.tui.app import SmalltownApp
    from smalltown.tui.widgets.map_view import MapView

    save = _save(TOWNS if world == "towns" else _sid(tmp_path), tmp_path / "big.sqlite")
    sim, _ = open_run(save, RunOptions(backend=choose("scripted")))
    app = SmalltownApp(sim)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        view = app.query_one(MapView)
        assert view.virtual_size.width > view.size.width  # a map bigger than the view
        here = next(a.tile for a in app.frame.agents if a.name == app.selected)
        assert not (here[0] < view.size.width and here[1] < view.size.height)  # (the corner would miss it)
        assert _in_view(view, here) and app.selected in _shown(view)


@pytest.mark.asyncio
async def test_replay_opens_on_the_selected_agent_of_a_big_map(tmp_path: Path) -> None:
    from smalltown.tui.replay import ReplayApp
    from smalltown.tui.widgets.map_view import MapView

    app = ReplayApp(_save(_sid(tmp_path), tmp_path / "sid.sqlite"))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        view = app.query_one(MapView)
        here = next(a.tile for a in app.frame.agents if a.name == app.selected)
        assert not (here[0] < view.size.width and here[1] < view.size.height)  # (the corner would miss it)
        assert _in_view(view, here) and app.selected in _shown(view)


@pytest.mark.asyncio
async def test_with_no_one_selected_the_view_opens_on_the_first_towns_square(tmp_path: Path) -> None:
    from textual.app import App, ComposeResult

    from smalltown.tui.palette import agent_colours
    from smalltown.tui.snapshot import AgentView
    from smalltown.tui.widgets.map_view import MapView

    world = load_world(TOWNS)
    square = world.sectors[world.towns[0].square]
    tiles = {t for arena in square.arenas.values() for t in arena.tiles}
    agents = tuple(AgentView(a.name, a.spawn, None, "", asleep=False, walking=False) for a in world.agents)

    class Host(App[None]):
        def compose(self) -> ComposeResult:
            yield MapView(world, agent_colours([a.name for a in world.agents]), id="map")

        def on_mount(self) -> None:
            self.query_one(MapView).show(agents)

    app = Host()
    async with app.run_test(size=(60, 20)) as pilot:
        await pilot.pause()
        view = app.query_one(MapView)
        assert view.selected is None
        assert sum(_in_view(view, t) for t in tiles) > len(tiles) // 2
        assert not _in_view(view, (0, 0))


@pytest.mark.asyncio
async def test_a_map_whose_corner_shows_the_selected_agent_is_not_scrolled(tmp_path: Path) -> None:
    from smalltown.cli.backends import choose
    from smalltown.sim.open import RunOptions, open_run
    from smalltown.tui.app import SmalltownApp
    from smalltown.tui.widgets.map_view import MapView

    sim, _ = open_run(_save(TINY, tmp_path / "tiny.sqlite"), RunOptions(backend=choose("scripted")))
    app = SmalltownApp(sim)
    async with app.run_test(size=(140, 44)) as pilot:
        await pilot.pause()
        view = app.query_one(MapView)
        assert tuple(view.scroll_offset) == (0, 0) and app.selected in _shown(view)
