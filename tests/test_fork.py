"""Rewind and fork: snapshots each game hour, a fork that is the run as it was then, and a fork
re-run from the original's answers that repeats it until its inputs change."""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
from datetime import datetime, timedelta

import pytest

from helpers import ROOT, TINY, cli, query, save_info
from handmade import as_schema_3
from smalltown.llm.cassette import CassetteBackend
from smalltown.scripted import ScriptedBackend
from smalltown.sim.fork import fork
from smalltown.sim.open import create, resume
from smalltown.sim.simulation import Simulation
from smalltown.store.snapshots import decode_snapshot
from smalltown.store.save import SCHEMA_VERSION, Save, SaveError
from smalltown.world.load import load_world

START = datetime(2023, 2, 13, 6)
END = datetime(2023, 2, 13, 10)
EVERY = 60  # ticks between recorded digests (10 game minutes)


def tick_of(when: datetime) -> int:
    return int((when - START).total_seconds() // 10)


def digest(path) -> str:
    save = Save.open(path)
    try:
        return save.digest()
    finally:
        save.close()


def file_hash(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def run_recording(sim: Simulation, until: datetime, digests: dict[int, str]) -> None:
    while sim.now < until:
        sim.step()
        if sim.tick % EVERY == 0:
            digests[sim.tick] = sim.save.digest()


@pytest.fixture(scope="module")
def original(tmp_path_factory):
    """A scripted run of the tiny town 06:00-10:00, stopped and resumed at 08:30, with the state
    digest every ten game minutes."""
    path = tmp_path_factory.mktemp("orig") / "orig.sqlite"
    world = load_world(TINY)
    sim = create(world, path, ScriptedBackend(world.seed))
    digests = {0: sim.save.digest()}
    run_recording(sim, datetime(2023, 2, 13, 8, 30), digests)
    sim.close()
    sim = resume(path, ScriptedBackend(world.seed))
    run_recording(sim, END, digests)
    sim.close()
    return path, digests


def test_snapshots_are_taken_at_creation_and_each_game_hour(original):
    path, _ = original
    ticks = [t for (t,) in query(path, "select tick from snapshots order by tick")]
    assert ticks == [tick_of(START + timedelta(hours=h)) for h in range(5)]
    save = Save.open(path)
    try:
        snaps = {t: save.snapshot(t) for t in ticks}
    finally:
        save.close()
    assert snaps[1080]["time"] == "2023-02-13 09:00:00" and snaps[1080]["meta"]["tick"] == 1080
    # agents' states are stored whole in the first snapshot a process writes, then as changes
    assert [snaps[t]["states_base"] for t in ticks] == [True, False, False, True, False]
    assert len(snaps[1440]["states"]) <= len(snaps[1080]["states"]) == 3


def test_a_fork_at_each_snapshot_has_exactly_the_state_of_that_moment(original, tmp_path):
    path, digests = original
    before = file_hash(path)
    # memories' last access changes after the fact: the snapshots must bring it back
    assert query(path, "select count(*) from memories where last_accessed != created")[0][0] > 0
    for hour in range(5):
        at = START + timedelta(hours=hour)
        r = fork(path, at, tmp_path / f"f{hour}.sqlite")
        assert r.tick == tick_of(at) and r.time == at
        assert digest(r.path) == digests[r.tick], f"fork at {at}"
    assert file_hash(path) == before  # the original is only read


def test_a_fork_between_snapshots_starts_at_the_one_before_and_drops_what_came_after(original, tmp_path):
    path, digests = original
    r = fork(path, datetime(2023, 2, 13, 9, 35), tmp_path / "f.sqlite")
    assert (r.tick, r.time, r.asked_tick) == (1080, datetime(2023, 2, 13, 9), tick_of(datetime(2023, 2, 13, 9, 35)))
    assert digest(r.path) == digests[1080]
    assert r.dropped["events"] == query(path, "select count(*) from events where tick > 1080")[0][0] > 0
    assert r.dropped["llm_calls"] == query(path, "select count(*) from llm_calls where tick > 1080")[0][0] > 0
    assert r.dropped["memories"] == (query(path, "select count(*) from memories")[0][0]
                                     - query(r.path, "select count(*) from memories")[0][0]) > 0
    assert r.dropped["snapshots"] == 1
    assert query(r.path, "select max(tick) from events")[0][0] <= 1080
    assert query(r.path, "select max(tick) from snapshots")[0][0] == 1080
    meta = json.loads(query(r.path, "select value from meta where key='forked_from'")[0][0])
    assert meta == {"path": str(path.resolve()), "digest": digest(path), "tick": 1080,
                    "time": "2023-02-13 09:00:00", "source_tick": 1440}
    # no trace of the future in the file's free pages either
    assert b"2023-02-13 09:5" not in r.path.read_bytes()


def test_fork_says_what_is_wrong(original, tmp_path):
    path, _ = original
    with pytest.raises(SaveError, match="before the run started"):
        fork(path, datetime(2023, 2, 13, 5), tmp_path / "a.sqlite")
    with pytest.raises(SaveError, match="after the end of the run"):
        fork(path, datetime(2023, 2, 13, 11), tmp_path / "a.sqlite")
    with pytest.raises(SaveError, match="cannot replace the save it is forked from"):
        fork(path, 360, path, overwrite=True)
    (tmp_path / "taken.sqlite").write_text("mine")
    with pytest.raises(SaveError, match="already there"):
        fork(path, 360, tmp_path / "taken.sqlite")
    assert (tmp_path / "taken.sqlite").read_text() == "mine"
    fork(path, 360, tmp_path / "taken.sqlite", overwrite=True)
    assert query(tmp_path / "taken.sqlite", "select value from meta where key='tick'") == [("360",)]
    old = tmp_path / "old.sqlite"
    shutil.copy(ROOT / "tests" / "fixtures" / "tiny-v1.sqlite", old)
    with pytest.raises(SaveError, match="no snapshots.*older smalltown.*only at its end"):
        fork(old, 100, tmp_path / "b.sqlite")
    assert not (tmp_path / "b.sqlite").exists() and not (tmp_path / "b.sqlite.forking").exists()
    assert query(old, "select value from meta where key='schema_version'") == [("1",)]  # untouched
    assert fork(old, None, tmp_path / "b.sqlite").tick == 360  # but now, as it is, it can


def test_a_fork_now_is_the_save_as_it_is(tiny_sim, tmp_path):
    for _ in range(50):
        tiny_sim.step()
    tiny_sim.whisper("Klaus Mueller", "I should write in the park today")  # after the tick
    expected = tiny_sim.save.digest()
    r = fork(tiny_sim.save.path, None, tmp_path / "now.sqlite")
    assert (r.tick, r.dropped["events"], r.dropped["memories"]) == (50, 0, 0)
    assert digest(r.path) == expected
    assert query(tiny_sim.save.path, "select tick from snapshots") == [(0,)]  # the original: as it was


def test_a_fork_continued_live_ends_where_the_original_did(original, tmp_path):
    path, digests = original
    r = fork(path, datetime(2023, 2, 13, 7), tmp_path / "f.sqlite")
    world = load_world(TINY)
    sim = resume(r.path, ScriptedBackend(world.seed))
    try:
        sim.run_until(END)
        assert sim.save.digest() == digests[tick_of(END)]
    finally:
        sim.close()


def test_a_fork_rerun_from_the_original_cassette_repeats_it_tick_for_tick(original, tmp_path):
    path, digests = original
    r = fork(path, datetime(2023, 2, 13, 7), tmp_path / "f.sqlite")
    cassette = CassetteBackend(path)
    sim = resume(r.path, cassette)
    try:
        assert cassette.after_tick == 360  # the calls up to the fork are not asked again
        assert cassette.recorded == query(path, "select count(*) from llm_calls where tick > 360")[0][0]
        seen = {}
        run_recording(sim, END, seen)
        assert seen == {t: d for t, d in digests.items() if t > 360}
        assert cassette.missed == 0 and cassette.replayed == cassette.recorded
    finally:
        sim.close()


def test_a_change_after_the_fork_repeats_the_original_until_it_then_goes_on_live(original, tmp_path):
    path, digests = original
    r = fork(path, datetime(2023, 2, 13, 7), tmp_path / "f.sqlite")
    world = load_world(TINY)
    cassette = CassetteBackend(path, fallthrough=ScriptedBackend(world.seed))
    sim = resume(r.path, cassette)
    change = datetime(2023, 2, 13, 8)
    try:
        seen = {}
        run_recording(sim, change, seen)
        assert seen == {t: d for t, d in digests.items() if 360 < t <= tick_of(change)}  # before the change
        assert cassette.missed == 0
        sim.whisper("Isabella Rodriguez", "I should bake a cake for Maria's birthday")
        run_recording(sim, END, seen)
        assert seen[tick_of(END)] != digests[tick_of(END)]
        assert cassette.missed > 0 and cassette.replayed > 0  # live after the change, replayed where unchanged
    finally:
        sim.close()
    # the event log, up to the change, is the original's
    cols = "tick, time, agent, kind, text, data"
    whispered = query(r.path, "select min(id) from events where kind = 'whispered'")[0][0]
    assert query(r.path, f"select {cols} from events where id < {whispered} order by id") == \
        query(path, f"select {cols} from events where tick <= {tick_of(change)} order by id")


def test_an_on_demand_snapshot_can_be_forked_from(tiny_sim, tmp_path):
    for _ in range(100):
        tiny_sim.step()
    tiny_sim.edit_object("Willow Cottage:kitchen:stove", "burning")
    assert tiny_sim.snapshot() == 100
    expected = tiny_sim.save.digest()
    for _ in range(20):
        tiny_sim.step()
    r = fork(tiny_sim.save.path, 100, tmp_path / "f.sqlite")
    assert r.tick == 100 and digest(r.path) == expected
    assert query(r.path, "select state from objects where address='Willow Cottage:kitchen:stove'") == [("burning",)]


def test_a_schema_2_save_is_migrated_and_gets_its_first_snapshot_when_opened(tiny_sim, tmp_path):
    for _ in range(50):
        tiny_sim.step()
    path = tiny_sim.save.path
    tiny_sim.close()
    as_schema_3(path)
    conn = sqlite3.connect(path)  # as a schema-2 smalltown left it
    conn.execute("drop table snapshots")
    conn.execute("update meta set value='2' where key='schema_version'")
    conn.commit()
    conn.close()
    world = load_world(TINY)
    sim = resume(path, ScriptedBackend(world.seed))
    expected = sim.save.digest()
    sim.close()
    assert query(path, "select value from meta where key='schema_version'") == [(str(SCHEMA_VERSION),)]
    assert [t for (t,) in query(path, "select tick from snapshots")] == [50]
    assert digest(fork(path, 50, tmp_path / "f.sqlite").path) == expected


def test_a_damaged_snapshot_is_an_error_not_a_crash():
    with pytest.raises(SaveError, match="damaged"):
        decode_snapshot(b"not zlib")


def test_the_fork_command_and_a_rerun_from_the_original(original, tmp_path):
    path, digests = original
    new = tmp_path / "fork.sqlite"
    out = cli("fork", path, "--at", "7:20", "--to", new, check=True).stdout
    assert "at 2023-02-13 07:00:00 (tick 360)" in out
    dropped = query(path, "select count(*) from events where tick > 360")[0][0]
    assert f"{dropped:,} events" in out
    proc = cli("fork", path, "--at", "7:20", "--to", new)
    assert proc.returncode == 2 and "already there" in proc.stderr and "Traceback" not in proc.stderr
    proc = cli("fork", path, "--at", "soon", "--to", tmp_path / "x.sqlite")
    assert proc.returncode == 2 and "cannot read the time" in proc.stderr
    cli("run", new, "--headless", "--until", "10:00", "--from", path, check=True)
    assert save_info(new)["digest"] == digests[tick_of(END)]
    assert {b for (b,) in query(new, "select distinct backend from llm_calls where tick > 360")} == {"cassette"}


def test_fork_shows_file_names_and_times_as_text(original, tmp_path):
    """A save's name comes from whoever shared it: an escape sequence in it (here: set the
    terminal's title) is shown, not sent to the terminal."""
    path, _ = original
    evil = tmp_path / "town\x1b]0;owned\x07.sqlite"
    shutil.copy(path, evil)
    new = tmp_path / "fork\x1b[2J.sqlite"
    out = cli("fork", evil, "--at", "7:20", "--to", new, check=True).stdout
    assert "\x1b" not in out and "\x07" not in out
    assert "town␛]0;owned␇.sqlite" in out and "fork␛[2J.sqlite" in out
    proc = cli("fork", evil, "--at", "day 2 \x1b[2J9:00", "--to", tmp_path / "x.sqlite")
    assert proc.returncode == 2 and "\x1b" not in proc.stderr and "cannot read the time" in proc.stderr
