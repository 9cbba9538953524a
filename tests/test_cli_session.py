"""Where a run's save goes and what a game time means on the command line: a run without --save
is saved in the user's saves folder (never in the current one) and `smalltown saves` lists it;
--save into a missing folder is refused, nothing made; a bare clock time is the next one after the
run's time for --until (as the TUI's "run until") and the latest at or before its end for --at (as
the TUI's rewind)."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from helpers import TINY, cli, query
from smalltown.cli.backends import choose
from smalltown.sim.open import RunOptions, open_run, stop_time

SCRIPTED = ("--backend", "scripted")


def _game_time(save: Path) -> str:
    return json.loads(query(save, "SELECT value FROM meta WHERE key = 'game_time'")[0][0])


@pytest.fixture(scope="module")
def into_day_two(tmp_path_factory) -> Path:
    """A tiny save run from the first morning (06:00) to 08:00 on the second day."""
    save = tmp_path_factory.mktemp("day2") / "tiny.sqlite"
    cli("run", TINY, "--headless", "--until", "day 2 8:00", "--save", save, *SCRIPTED, check=True)
    return save


def test_a_run_without_save_goes_to_the_users_saves_folder_and_is_listed(tmp_path, monkeypatch, user_folders):
    monkeypatch.chdir(tmp_path)
    first = cli("run", TINY, "--headless", "--until", "+10m", *SCRIPTED, check=True)
    second = cli("run", TINY, "--headless", "--until", "+20m", *SCRIPTED, check=True)
    assert list(tmp_path.iterdir()) == []  # no saves/ left in the folder it was started from
    folder = user_folders / "data" / "smalltown" / "saves"
    made = sorted(folder.glob("tiny-*.sqlite"))
    assert len(made) >= 2
    for proc in (first, second):
        said = next(line for line in proc.stderr.splitlines() if line.startswith("saving to "))
        assert Path(said.removeprefix("saving to ")).parent == folder

    rows = json.loads(cli("saves", "--json", check=True).stdout)
    assert [Path(r["path"]).parent for r in rows] == [folder] * len(rows)
    newest = Path(second.stderr.split("saving to ", 1)[1].splitlines()[0])
    assert rows[0]["path"] == str(newest) and rows[0]["game_time"] == "2023-02-13 06:20:00"
    assert rows[0]["world"] == "The tiny town" and rows[0]["size"] == newest.stat().st_size
    text = cli("saves", check=True).stdout
    assert str(newest) in text and "The tiny town, 2023-02-13 06:20:00" in text


def test_saves_says_where_it_looked_when_there_are_none(user_folders, monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "empty"))
    out = cli("saves", check=True).stdout
    assert "no saves yet" in out and str(tmp_path / "empty" / "smalltown" / "saves") in out


@pytest.mark.parametrize("continued", [False, True])
def test_save_into_a_missing_folder_is_refused_and_nothing_is_made(tmp_path, into_day_two, continued):
    target = into_day_two if continued else TINY
    missing = tmp_path / "no" / "such"
    proc = cli("run", target, "--headless", "--until", "+10m", "--save", missing / "x.sqlite", *SCRIPTED)
    assert proc.returncode == 2
    assert f"the folder {missing} does not exist" in proc.stderr
    assert not (tmp_path / "no").exists()


def test_until_a_bare_clock_time_is_its_next_occurrence_after_the_runs_time(into_day_two, tmp_path):
    copy = tmp_path / "copy.sqlite"
    sim, until = open_run(into_day_two, RunOptions(backend=choose("scripted"), save=copy, until="7:00"))
    sim.close()
    assert until == datetime(2023, 2, 15, 7, 0)  # the save is at day 2 08:00: the next 7:00 is day 3's
    sim, until = open_run(TINY, RunOptions(backend=choose("scripted"), save=tmp_path / "new.sqlite", until="5:00"))
    sim.close()
    assert until == datetime(2023, 2, 14, 5, 0)  # the world starts at 06:00


def test_until_day_n_counts_from_the_worlds_first_day_not_the_runs():
    start, now = datetime(2023, 2, 13, 6), datetime(2023, 2, 14, 10)
    assert stop_time("day 3 9:00", now, start) == datetime(2023, 2, 15, 9)
    assert stop_time("2023-02-20 09:00", now, start) == datetime(2023, 2, 20, 9)
    assert stop_time("+1h", now, start) == datetime(2023, 2, 14, 11)


def test_headless_until_a_clock_time_already_past_today_runs_to_tomorrows(into_day_two, tmp_path):
    copy = tmp_path / "copy.sqlite"
    cli("run", into_day_two, "--headless", "--until", "7:50", "--save", copy, *SCRIPTED, check=True)
    assert _game_time(copy) == "2023-02-15 07:50:00"


def test_fork_at_a_bare_clock_time_is_the_latest_at_or_before_the_end(into_day_two, tmp_path):
    out = tmp_path / "fork.sqlite"
    cli("fork", into_day_two, "--at", "7:00", "--to", out, check=True)
    assert _game_time(out) == "2023-02-14 07:00:00"  # the second day's: the first's is not the latest
    cli("fork", into_day_two, "--at", "day 1 7:00", "--to", tmp_path / "day1.sqlite", check=True)
    assert _game_time(tmp_path / "day1.sqlite") == "2023-02-13 07:00:00"


def test_replay_at_a_bare_clock_time_is_the_latest_at_or_before_the_end(into_day_two, monkeypatch):
    import smalltown.tui.replay

    opened = []
    monkeypatch.setattr(smalltown.tui.replay, "run_replay", lambda save, at: opened.append(at))
    cli("replay", into_day_two, "--at", "7:00", check=True)
    from smalltown.sim.history import History

    with History(into_day_two) as h:
        assert h.time_of(opened[0]) == datetime(2023, 2, 14, 7, 0)
