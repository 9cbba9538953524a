"""`smalltown save check`: SQLite's integrity check, then the save's agreement with itself and its
world; exit 0 when clean, 1 with one line per problem."""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from smalltown.cli.main import main
from smalltown.sim.check import MAX_LISTED, check_save

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "worlds" / "tiny.toml"


def cli(capsys, *argv) -> tuple[int, str]:
    rc = main([str(a) for a in argv])
    out = capsys.readouterr()
    return rc, out.out + out.err


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny town run for three game hours, as one file (no write-ahead log beside it)."""
    from smalltown.scripted import ScriptedBackend
    from smalltown.sim.open import create
    from smalltown.world.load import load_world

    path = tmp_path_factory.mktemp("check") / "clean.sqlite"
    world = load_world(TINY)
    sim = create(world, path, ScriptedBackend(world.seed))
    sim.run_until(sim.now.replace(hour=9))
    sim.close()
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=DELETE")
    conn.close()
    return path


@pytest.fixture
def save(clean: Path, tmp_path: Path) -> Path:
    path = tmp_path / "save.sqlite"
    shutil.copy(clean, path)
    return path


def edit(path: Path, *sql: str) -> None:
    conn = sqlite3.connect(path)
    with conn:
        for s in sql:
            conn.execute(s)
    conn.close()


def test_a_clean_save_passes(save: Path, capsys):
    rc, out = cli(capsys, "save", "check", save)
    assert rc == 0 and out.startswith(f"{save}: ok — 3 agents")
    rc, out = cli(capsys, "save", "check", save, "--json")
    report = json.loads(out)
    assert rc == 0 and report["ok"] is True and report["problems"] == []
    assert report["counts"]["agents"] == 3 and report["counts"]["memories"] > 50


def test_every_problem_is_one_line_and_the_exit_code_is_1(save: Path, capsys):
    edit(save,
         "UPDATE agents SET x = 0, y = 0 WHERE name = 'Maria Lopez'",  # a wall of the cottage
         "UPDATE agents SET address = 'Hobbs Cafe:cafe:jukebox' WHERE name = 'Klaus Mueller'",
         "UPDATE memories SET evidence = '[123456789]' WHERE id = (SELECT max(id) FROM memories)",
         "UPDATE memories SET agent = 'Nobody' WHERE id = (SELECT min(id) FROM memories)",
         "INSERT INTO events(tick, time, agent, kind, text, data) VALUES (999999, '2023-02-13 06:00:00', NULL, 'x', '', '{}')")
    rc, out = cli(capsys, "save", "check", save)
    lines = out.strip().splitlines()
    assert rc == 1
    assert all(line.startswith(f"{save}: ") for line in lines)
    expected = ["agent 'Maria Lopez': position [0, 0] is not walkable",
                "agent 'Klaus Mueller': its action's address 'Hobbs Cafe:cafe:jukebox' is not an object",
                "evidence id 123456789 does not exist",
                "belonging to 'Nobody', who is not an agent of the save",
                "events: rows from tick 999999, after the save's tick"]
    for text in expected:
        assert sum(text in line for line in lines) == 1, f"{text!r} not on exactly one line:\n{out}"
    assert len(lines) == len(expected)
    report = json.loads(cli(capsys, "save", "check", save, "--json")[1])
    assert report["ok"] is False and len(report["problems"]) == len(expected)


def test_many_problems_of_a_kind_are_summed_up(save: Path):
    edit(save, "UPDATE memories SET evidence = '[0]'")
    report = check_save(save)
    assert len(report.problems) == MAX_LISTED + 1
    assert report.problems[-1].startswith("... and ") and "(evidence)" in report.problems[-1]


def test_sqlite_damage_is_found_by_the_integrity_check(save: Path, capsys):
    conn = sqlite3.connect(save)
    page = conn.execute("PRAGMA page_size").fetchone()[0]
    root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'memories'").fetchone()[0]
    conn.close()
    data = bytearray(save.read_bytes())
    start = (root - 1) * page  # the memories table's root page: its b-tree header scrambled
    data[start:start + 12] = b"\x0d\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff"
    save.write_bytes(bytes(data))
    rc, out = cli(capsys, "save", "check", save)
    assert rc == 1 and f"{save}: SQLite integrity check:" in out


def test_checking_does_not_change_the_save(tmp_path: Path, capsys):
    """Not even an old one it would migrate when run."""
    old = tmp_path / "v1.sqlite"
    shutil.copy(ROOT / "tests" / "fixtures" / "tiny-v1.sqlite", old)
    before = hashlib.sha256(old.read_bytes()).hexdigest()
    rc, out = cli(capsys, "save", "check", old)
    assert rc == 0, out
    rc, out = cli(capsys, "save", "info", old)
    assert rc == 0, out
    assert hashlib.sha256(old.read_bytes()).hexdigest() == before


def test_run_refuses_a_save_that_does_not_make_sense(save: Path, capsys):
    edit(save, "UPDATE agents SET x = 9999 WHERE name = 'Maria Lopez'")
    before = hashlib.sha256(save.read_bytes()).hexdigest()
    rc, out = cli(capsys, "run", save, "--headless", "--until", "+1h", "--backend", "scripted")
    assert rc == 2 and f"{save}: refusing to continue: agent 'Maria Lopez': position [9999" in out
    assert hashlib.sha256(save.read_bytes()).hexdigest() == before


# --- schema 4: conversations (saves written by hand, without running the simulation) ---------------


def test_a_save_with_conversations_passes_and_they_are_counted(tmp_path: Path, capsys):
    from handmade import KLAUS, MARIA, HandSave

    h = HandSave(tmp_path / "talk.sqlite")
    h.talk(60, MARIA, KLAUS, [(MARIA, "Hi Klaus."), (KLAUS, "Hello.")], reason="Klaus Mueller is reading",
           relationships={MARIA: "a kind neighbour"})
    h.close()
    rc, out = cli(capsys, "save", "check", h.path)
    assert rc == 0 and out.strip() == f"{h.path}: ok — 3 agents, 2 memories, 2 events, 1 conversations, 0 model calls"
    conn = sqlite3.connect(h.path)
    with conn:
        conn.execute("UPDATE conversations SET chats = json_set(chats, '$.\"Maria Lopez\"', 2)")  # Klaus's chat
    conn.close()
    rc, out = cli(capsys, "save", "check", h.path)
    assert rc == 1 and out.strip() == (f"{h.path}: conversations row 1: chats['Maria Lopez']: memory 2 is "
                                       f"Klaus Mueller's, not Maria Lopez's")


def test_checking_a_schema_3_save_does_not_migrate_it(tmp_path: Path, capsys):
    from handmade import KLAUS, MARIA, HandSave, as_schema_3

    h = HandSave(tmp_path / "old.sqlite")
    h.talk(60, MARIA, KLAUS, [(MARIA, "Hi Klaus."), (KLAUS, "Hello.")])
    h.close()
    as_schema_3(h.path)
    before = hashlib.sha256(h.path.read_bytes()).hexdigest()
    report = check_save(h.path)
    assert report.ok and report.counts["schema_version"] == 3 and "conversations" not in report.counts
    assert hashlib.sha256(h.path.read_bytes()).hexdigest() == before



def test_a_meta_text_within_its_limit_opens_however_long_its_json(tmp_path):
    """The meta texts' limits are on the text, not its JSON: a world text full of quotes and line
    ends (two characters each in JSON) at the world file's limit is no reason to refuse a save."""
    from helpers import tiny_sim
    from smalltown.store.checks import META_MAX_CHARS, check_contents
    from smalltown.store.errors import SaveError

    sim = tiny_sim(tmp_path)
    path = sim.save.path
    sim.close()
    conn = sqlite3.connect(path)
    text = '"\n' * (META_MAX_CHARS["world_text"] // 2)
    with conn:
        conn.execute("UPDATE meta SET value = ? WHERE key = 'world_text'", (json.dumps(text),))
    check_contents(conn, path)  # as long as a world file may be
    limit = META_MAX_CHARS["world_text"]
    with conn:
        conn.execute("UPDATE meta SET value = ? WHERE key = 'world_text'", (json.dumps(text + "x"),))
    with pytest.raises(SaveError, match=rf"meta 'world_text' is {limit + 1:,} characters \(at most {limit:,}\)"):
        check_contents(conn, path)
    conn.close()
