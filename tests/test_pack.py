"""Sharing: a world and its map packed into one file and installed from it; a save stripped of its
call log and snapshots, smaller, and still the same town."""

from __future__ import annotations

import json
import sqlite3
import zipfile
from pathlib import Path

import pytest

from smalltown.cli.main import main
from smalltown.world.errors import WorldError
from smalltown.world.load import load_world
from smalltown.world.pack import PackError, pack, read_pack, unpack

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "worlds" / "tiny.toml"
SMALLVILLE = ROOT / "worlds" / "smallville.toml"


def cli(capsys, *argv) -> tuple[int, str]:
    rc = main([str(a) for a in argv])
    out = capsys.readouterr()
    return rc, out.out + out.err


def rows(path: Path, sql: str) -> list[tuple]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


# --- world packs -------------------------------------------------------------------------------


def test_a_packed_world_installs_as_the_same_world(tmp_path: Path, capsys):
    out = tmp_path / "sv.smalltown-world"
    rc, msg = cli(capsys, "world", "pack", SMALLVILLE, "-o", out)
    assert rc == 0 and f"{out}" in msg
    with zipfile.ZipFile(out) as zf:
        assert zf.namelist() == ["manifest.json", "worlds/smallville.toml", "maps/smallville.toml"]
        manifest = json.loads(zf.read("manifest.json"))
    assert manifest["format"] == 1 and manifest["name"] == "Smallville"
    assert len(manifest["world"]["sha256"]) == 64

    rc, msg = cli(capsys, "world", "check", out, "--json")  # checked in place, not installed
    assert rc == 0 and json.loads(msg)["agents"] == 25 and not (tmp_path / "worlds").exists()
    rc, msg = cli(capsys, "world", "unpack", out, "--to", tmp_path / "home")
    assert rc == 0, msg
    installed = tmp_path / "home" / "worlds" / "smallville.toml"
    assert installed.exists() and (tmp_path / "home" / "maps" / "smallville.toml").exists()
    a, b = load_world(SMALLVILLE), load_world(installed)
    assert (a.name, a.start, a.seed, len(a.agents), len(a.objects)) == (b.name, b.start, b.seed, len(b.agents), len(b.objects))
    assert a.map.rows == b.map.rows and a.text == b.text  # its map line already reads ../maps/smallville.toml


def test_packing_is_repeatable_and_rewrites_the_map_line(tmp_path: Path):
    """A world whose map sits anywhere is packed pointing at ../maps/NAME.toml, where it installs."""
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "my map.toml").write_text((ROOT / "maps" / "tiny.toml").read_text())
    text = TINY.read_text().replace('map = "../maps/tiny.toml"', "map = 'elsewhere/my map.toml'   # moved")
    assert text != TINY.read_text()
    world = tmp_path / "town.toml"
    world.write_text(text)
    first, second = pack(world, tmp_path / "a.zip"), pack(world, tmp_path / "b.zip")
    assert first.read_bytes() == second.read_bytes()  # the same world packs to the same bytes
    pk = read_pack(first)
    assert (pk.world_path, pk.map_path) == ("worlds/town.toml", "maps/my-map.toml")
    assert "map = \"../maps/my-map.toml\"   # moved" in pk.world_text
    installed = unpack(first, tmp_path / "home")
    assert load_world(installed).map.rows == load_world(TINY).map.rows


def test_a_broken_world_is_not_packed(tmp_path: Path):
    world = tmp_path / "w.toml"
    world.write_text(TINY.read_text().replace("age = 34", "age = 340"))
    (tmp_path / "maps").mkdir()
    with pytest.raises(WorldError) as info:
        pack(world, tmp_path / "w.zip")
    assert "agents.0.age: Input should be less than or equal to 150" in str(info.value)
    assert not (tmp_path / "w.zip").exists()


def test_unpack_refuses_to_replace_a_different_world_unless_forced(tmp_path: Path, capsys):
    out = pack(TINY, tmp_path / "tiny.smalltown-world")
    home = tmp_path / "home"
    unpack(out, home)
    unpack(out, home)  # the same files again: nothing to refuse
    target = home / "worlds" / "tiny.toml"
    target.write_text(target.read_text() + "\n# my edit\n")
    rc, msg = cli(capsys, "world", "unpack", out, "--to", home)
    assert rc == 2 and f"{target}: a different file is already there (pass --force" in msg
    assert target.read_text().endswith("# my edit\n")
    rc, msg = cli(capsys, "world", "unpack", out, "--to", home, "--force")
    assert rc == 0 and not target.read_text().endswith("# my edit\n")


def test_unpack_never_writes_through_a_link(tmp_path: Path):
    out = pack(TINY, tmp_path / "tiny.smalltown-world")
    home = tmp_path / "home"
    (home / "worlds").mkdir(parents=True)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    (home / "worlds" / "tiny.toml").symlink_to(victim)
    with pytest.raises(PackError, match="not a plain file"):
        unpack(out, home, force=True)
    assert victim.read_text() == "precious"


def test_run_takes_a_pack_installs_it_and_runs_it(tmp_path: Path, capsys, monkeypatch):
    out = pack(TINY, tmp_path / "tiny.smalltown-world")
    monkeypatch.chdir(tmp_path)
    rc, msg = cli(capsys, "run", out, "--headless", "--until", "+10m", "--backend", "scripted",
                  "--save", tmp_path / "s.sqlite")
    assert rc == 0, msg
    assert (tmp_path / "worlds" / "tiny.toml").exists() and (tmp_path / "maps" / "tiny.toml").exists()
    assert rows(tmp_path / "s.sqlite", "SELECT value FROM meta WHERE key = 'tick'") == [("60",)]


# --- stripped saves ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny town run to noon: calls, retrievals and (schema 3) snapshots."""
    from smalltown.scripted import ScriptedBackend
    from smalltown.sim.open import create

    path = tmp_path_factory.mktemp("strip") / "played.sqlite"
    world = load_world(TINY)
    sim = create(world, path, ScriptedBackend(world.seed))
    sim.run_until(sim.now.replace(hour=12))
    sim.close()
    return path


def info(capsys, path: Path) -> dict:
    rc, out = cli(capsys, "save", "info", path, "--json")
    assert rc == 0, out
    return json.loads(out)


def test_a_stripped_save_is_smaller_and_the_same_town(played: Path, tmp_path: Path, capsys):
    original = tmp_path / "original.sqlite"
    original.write_bytes(played.read_bytes())
    before = info(capsys, original)
    stripped = tmp_path / "stripped.sqlite"
    rc, out = cli(capsys, "save", "strip", original, "-o", stripped)
    assert rc == 0, out
    assert f"{stripped}: {stripped.stat().st_size:,} bytes" in out and f"{original.stat().st_size:,} bytes" in out
    assert f"dropped {before['llm_calls']:,} llm_calls" in out
    assert stripped.stat().st_size < original.stat().st_size
    assert not Path(f"{stripped}-wal").exists()  # one file to share

    after = info(capsys, stripped)
    assert after["digest"] == before["digest"] and after["tick"] == before["tick"]
    assert after["llm_calls"] == 0 and after["memories"] == before["memories"] and after["events"] == before["events"]
    tables = {r[0] for r in rows(stripped, "SELECT name FROM sqlite_master WHERE type = 'table'")}
    for table in {"retrievals", "snapshots"} & tables:
        assert rows(stripped, f"SELECT count(*) FROM {table}") == [(0,)]
    assert info(capsys, original) == before  # the original is untouched
    rc, out = cli(capsys, "save", "check", stripped)
    assert rc == 0 and "ok" in out

    # it continues exactly as the original does
    for path in (original, stripped):
        rc, out = cli(capsys, "run", path, "--headless", "--until", "+1h", "--backend", "scripted")
        assert rc == 0, out
    assert info(capsys, stripped)["digest"] == info(capsys, original)["digest"]


def test_strip_can_keep_the_retrieval_log(played: Path, tmp_path: Path, capsys):
    kept = tmp_path / "kept.sqlite"
    rc, out = cli(capsys, "save", "strip", played, "-o", kept, "--keep-retrievals")
    assert rc == 0, out
    assert rows(kept, "SELECT count(*) FROM retrievals") == rows(played, "SELECT count(*) FROM retrievals") != [(0,)]
    rc, out = cli(capsys, "save", "strip", played, "-o", kept)
    assert rc == 2 and "a file is already there" in out


def test_a_stripped_save_cannot_be_replayed_as_a_cassette(played: Path, tmp_path: Path, capsys):
    stripped = tmp_path / "stripped.sqlite"
    assert cli(capsys, "save", "strip", played, "-o", stripped)[0] == 0
    rc, out = cli(capsys, "run", TINY, "--headless", "--until", "+1h", "--backend", "cassette", "--from",
                  stripped, "--save", tmp_path / "replay.sqlite")
    assert rc == 2
    assert f"{stripped}: stripped of its model call log" in out and "replay from the original save" in out
    assert not (tmp_path / "replay.sqlite").exists()
