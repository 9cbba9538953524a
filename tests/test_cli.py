"""The command line as a user meets it: exit codes, messages, JSON outputs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from datetime import datetime

import pytest

from helpers import ROOT, TINY, cli, query, save_info, smalltown
from smalltown.sim.clock import parse_when


def test_world_check_json_reports_sizes():
    """(Through `python -m smalltown`, a process of its own: the entry point works; the tests below
    call the same command line in this process.)"""
    out = smalltown("world", "check", TINY, "--json", check=True).stdout
    assert json.loads(out) == {"sectors": 3, "arenas": 6, "objects": 19, "agents": 3, "width": 40, "height": 14}


def test_world_check_error_names_file_line_and_exits_1_without_traceback():
    bad = ROOT / "tests" / "worlds_bad" / "bad_unknown_home.toml"
    proc = cli("world", "check", bad)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert "bad_unknown_home.toml:" in proc.stderr and "unknown home" in proc.stderr


def test_world_check_missing_file_is_a_clear_error():
    proc = cli("world", "check", "worlds/nope.toml")
    assert proc.returncode == 2 and "file not found" in proc.stderr and "Traceback" not in proc.stderr


def test_headless_run_writes_a_save_that_save_info_reads(tmp_path):
    save = tmp_path / "two-hours.sqlite"
    proc = cli("run", "--headless", TINY, "--until", "+2h", "--save", save)
    assert proc.returncode == 0, proc.stderr
    assert "run complete" in proc.stderr
    info = save_info(save)
    assert info["tick"] == 720 and info["game_time"] == "2023-02-13 08:00:00"
    assert info["world"] == "The tiny town" and info["agents"] == 3
    assert info["memories"] > 0 and info["events"] > 0 and len(info["digest"]) == 64


def test_headless_needs_until(tmp_path):
    proc = cli("run", "--headless", TINY, "--save", tmp_path / "x.sqlite")
    assert proc.returncode == 2 and "--until" in proc.stderr


def test_bad_until_is_a_clear_error(tmp_path):
    proc = cli("run", "--headless", TINY, "--until", "tomorrow", "--save", tmp_path / "x.sqlite")
    assert proc.returncode == 2 and "cannot read the time 'tomorrow'" in proc.stderr


def test_new_run_refuses_to_overwrite_an_existing_file(tmp_path):
    save = tmp_path / "s.sqlite"
    cli("run", "--headless", TINY, "--until", "+10m", "--save", save, check=True)
    before = save_info(save)
    proc = cli("run", "--headless", TINY, "--until", "+10m", "--save", save)
    assert proc.returncode == 2 and "--overwrite" in proc.stderr
    assert save_info(save) == before  # nothing lost


def test_running_a_save_continues_it_in_place(tmp_path):
    save = tmp_path / "s.sqlite"
    cli("run", "--headless", TINY, "--until", "+1h", "--save", save, check=True)
    cli("run", "--headless", save, "--until", "+1h", check=True)
    assert save_info(save)["game_time"] == "2023-02-13 08:00:00"


def test_running_a_save_with_another_save_name_forks_it(tmp_path):
    a, b = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    cli("run", "--headless", TINY, "--until", "+1h", "--save", a, check=True)
    cli("run", "--headless", a, "--until", "+1h", "--save", b, check=True)
    assert save_info(a)["game_time"] == "2023-02-13 07:00:00"
    assert save_info(b)["game_time"] == "2023-02-13 08:00:00"


def test_save_info_on_something_else_is_a_clear_error(tmp_path):
    proc = cli("save", "info", TINY)
    assert proc.returncode == 2 and "not a smalltown save" in proc.stderr
    proc = cli("save", "info", tmp_path / "missing.sqlite")
    assert proc.returncode == 2 and "no such save" in proc.stderr


def test_ctrl_c_stops_after_the_tick_in_flight_with_the_save_intact(tmp_path):
    save = tmp_path / "s.sqlite"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "smalltown", "run", "--headless", str(TINY),
                             "--until", "+3d", "--save", str(save)], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if query(save, "select value from meta where key='tick'")[0][0] != "0":
                break
        except Exception:
            pass  # not created yet
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "save is intact" in err and "Traceback" not in err
    info = save_info(save)
    assert 0 < info["tick"] < 3 * 8640
    assert query(save, "pragma integrity_check") == [("ok",)]
    assert query(save, "select max(tick) from events")[0][0] <= info["tick"]


def test_parse_when():
    now = datetime(2023, 2, 13, 6)
    assert parse_when("+6h", now) == datetime(2023, 2, 13, 12)
    assert parse_when("+1d", now) == datetime(2023, 2, 14, 6)
    assert parse_when("+1d6h30m", now) == datetime(2023, 2, 14, 12, 30)
    assert parse_when("2023-02-14 08:00", now) == datetime(2023, 2, 14, 8)
    assert parse_when("2023-02-14 08:00:30", now) == datetime(2023, 2, 14, 8, 0, 30)
    for bad in ("+", "+6", "soon", "2023-13-01 08:00"):
        with pytest.raises(ValueError):
            parse_when(bad, now)


from helpers import BAD_WORLDS, expectation as _expectation  # noqa: E402
from smalltown.cli.main import main  # noqa: E402


@pytest.mark.parametrize("path", BAD_WORLDS, ids=[p.stem for p in BAD_WORLDS])
def test_world_check_prints_file_line_and_exits_1_for_every_bad_world(path, capsys):
    file, line, col, text = _expectation(path)
    assert main(["world", "check", str(path)]) == 1
    err = capsys.readouterr().err
    where = f"{file}:{line}:{col}:" if col else f"{file}:{line}:"
    assert any(where in l and text in l for l in err.splitlines()), err
    assert "Traceback" not in err and "problem" in err.splitlines()[-1]


def test_smallville_is_the_papers_town():
    info = json.loads(cli("world", "check", ROOT / "worlds" / "smallville.toml", "--json", check=True).stdout)
    assert info["sectors"] >= 10 and info["arenas"] >= 30 and info["objects"] >= 80 and info["agents"] == 25
    assert info["width"] >= 100 and info["height"] >= 60

    from smalltown.world.load import load_world

    world = load_world(ROOT / "worlds" / "smallville.toml")
    assert world.start == datetime(2023, 2, 13, 6, 0)
    for place in ("Lin family's house", "Moreno family's house", "Moore family's house", "Hobbs Cafe",
                  "Isabella Rodriguez's apartment", "artist's co-living space", "The Rose and Crown Pub",
                  "The Willows Market and Pharmacy", "Harvey Oak Supply Store", "Johnson Park",
                  "Oak Hill College", "Oak Hill College dorm"):
        assert place in world.sectors
    assert {"library", "classroom"} <= set(world.sectors["Oak Hill College"].arenas)
    memories = {a.name: " ".join(a.seed_memories) for a in world.agents}
    assert "Valentine's Day party at Hobbs Cafe on February 14 from 5 pm to 7 pm" in memories["Isabella Rodriguez"]
    assert "running for mayor" in memories["Sam Moore"]
    assert "crush on Klaus Mueller" in memories["Maria Lopez"]
    assert "Latoya" not in memories["Sam Moore"]  # they meet in the park, as in the paper
    homes = {a.name: a.home for a in world.agents}
    assert homes["John Lin"] == homes["Mei Lin"] == homes["Eddy Lin"] == "Lin family's house"
    assert homes["Sam Moore"] == homes["Jennifer Moore"] == "Moore family's house"
    assert homes["Tom Moreno"] == homes["Jane Moreno"] == "Moreno family's house"
