"""The world a bare `smalltown run` opens is the one `worlds/default.txt` names: the choice is the
worlds folder's, and no code names a particular world."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from helpers import GULLHAVEN, ROOT, cli
from smalltown.world.bundled import DEFAULT_LIST, default_world
from smalltown.world.load import load_world


def _folder(tmp_path: Path, listed: str) -> Path:
    """A folder with its own worlds/ (Gullhaven and its map) and a default list of `listed`."""
    (tmp_path / "worlds").mkdir()
    (tmp_path / "maps").mkdir()
    shutil.copy(GULLHAVEN, tmp_path / "worlds" / GULLHAVEN.name)
    shutil.copytree(ROOT / "maps", tmp_path / "maps", dirs_exist_ok=True)
    (tmp_path / DEFAULT_LIST).write_text(listed, encoding="utf-8")
    return tmp_path


def test_the_checkout_names_a_world_that_loads():
    assert (ROOT / DEFAULT_LIST).is_file()
    out = cli("world", "check", default_world(), "--json", check=True)
    assert json.loads(out.stdout)["agents"] > 0


def test_a_bare_run_opens_the_world_the_list_names(tmp_path, monkeypatch):
    monkeypatch.chdir(_folder(tmp_path, f"# the town\n\n{GULLHAVEN.name}\n"))
    assert default_world() == tmp_path / "worlds" / GULLHAVEN.name
    save = tmp_path / "run.sqlite"
    cli("run", "--headless", "--until", "+10m", "--backend", "scripted", "--save", save, check=True)
    info = json.loads(cli("save", "info", save, "--json", check=True).stdout)
    assert info["world"] == load_world(GULLHAVEN).name, info


@pytest.mark.parametrize("listed", ["../secret.toml", "/etc/passwd", "sub/town.toml", "..", "# only a comment\n"])
def test_an_entry_that_is_not_a_file_name_in_the_folder_is_not_followed(tmp_path, monkeypatch, listed):
    monkeypatch.chdir(_folder(tmp_path, listed))
    assert default_world().parent == ROOT / "worlds"  # this list skipped: the checkout's is used
