"""`world generate` never writes a world `world check` refuses: the sizes Project Sid ran (500 to
1,000 agents) pass, a 1,000-agent world runs end to end and its save opens; options a world cannot
hold are refused before anything is written; a world the generator got wrong is not written."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from helpers import cli
from smalltown.store.checks import META_MAX_CHARS
from smalltown.world.load_text import MAP_MAX_BYTES, WORLD_MAX_BYTES


@pytest.mark.parametrize("options", [
    ("--agents", 600), ("--agents", 800), ("--towns", 2, "--agents", 500),
    # a married couple's names match a Keiko Jovanovic-Galloway's description too: that fact is left out
    ("--agents", 400, "--rural", 400, "--seed", 14),
], ids=["600", "800", "2x500", "fact-names-a-third"])
def test_a_generated_world_passes_world_check(tmp_path: Path, options: tuple) -> None:
    out = tmp_path / "town.toml"
    made = cli("world", "generate", *options, "--out", out)
    assert made.returncode == 0, made.stderr
    checked = cli("world", "check", out)
    assert checked.returncode == 0, checked.stderr


def test_a_thousand_agents_generate_check_run_and_open(tmp_path: Path) -> None:
    """1,000 agents: generated, checked, run for a game minute by the stand-in; the save holds its
    world (over the old 1 MB limit) and every reader opens it."""
    out, save = tmp_path / "big.toml", tmp_path / "big.sqlite"
    made = cli("world", "generate", "--agents", 1000, "--out", out)
    assert made.returncode == 0, made.stderr
    size = out.stat().st_size
    assert 1_000_000 < size < WORLD_MAX_BYTES / 1.5, f"{size:,} bytes: the limit leaves room"
    checked = cli("world", "check", out, "--json")
    assert checked.returncode == 0, checked.stderr
    assert json.loads(checked.stdout)["agents"] == 1000
    ran = cli("run", out, "--headless", "--until", "+1m", "--backend", "scripted", "--save", save)
    assert ran.returncode == 0, ran.stderr
    conn = sqlite3.connect(f"file:{save}?mode=ro", uri=True)
    (text,) = conn.execute("SELECT value FROM meta WHERE key = 'world_text'").fetchone()
    (tick,) = conn.execute("SELECT value FROM meta WHERE key = 'tick'").fetchone()
    conn.close()
    assert json.loads(text) == out.read_text(encoding="utf-8") and int(tick) == 6
    assert cli("save", "check", save).returncode == 0
    first = json.loads(text).split("[[agents]]\nname = ", 1)[1].split("\n")[0].strip('"')
    seen = cli("inspect", save, first, "--json")
    assert seen.returncode == 0, seen.stderr
    assert json.loads(seen.stdout)["agent"] == first
    pack = tmp_path / "big.smalltown-world"
    assert cli("world", "pack", out, "-o", pack).returncode == 0
    unpacked = cli("world", "unpack", pack, "--to", tmp_path / "shared")
    assert unpacked.returncode == 0, unpacked.stderr


def test_a_save_holds_what_a_world_file_may_hold() -> None:
    """The save's copy of the world and map texts is bounded as the files are (store/ cannot
    import world/, so the numbers are written twice: this keeps them one)."""
    assert META_MAX_CHARS == {"world_text": WORLD_MAX_BYTES, "map_text": MAP_MAX_BYTES}


@pytest.mark.parametrize("seed", [-1, 2**32])
def test_a_seed_a_world_cannot_hold_is_refused_before_writing(tmp_path: Path, seed: int) -> None:
    out = tmp_path / "town.toml"
    made = cli("world", "generate", "--seed", seed, "--out", out)
    assert made.returncode == 2 and "--seed must be 0 to 4294967295" in made.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_world_the_generator_got_wrong_is_not_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever a future change to the generator makes, its texts pass the loader before a file is
    written (here two agents of one name, as a broken word list could make): an internal error
    (70) naming the problem at its line, and no file."""
    import smalltown.world.generate as gen

    made = gen.generate

    def twins(opts: gen.Options) -> tuple[str, str]:
        world, map_text = made(opts)
        lines = world.split("\n")
        first, second = [lines[i + 1] for i, line in enumerate(lines) if line == "[[agents]]"][:2]
        return world.replace(f"[[agents]]\n{second}", f"[[agents]]\n{first.lower()}", 1), map_text

    monkeypatch.setattr(gen, "generate", twins)
    out = tmp_path / "town.toml"
    result = cli("world", "generate", "--out", out)
    assert result.returncode == 70, result.stderr
    assert f"{out}:" in result.stderr and "duplicate agent name" in result.stderr
    assert "nothing was written" in result.stderr and "bug" in result.stderr
    assert list(tmp_path.iterdir()) == []
