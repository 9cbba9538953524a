"""History: a recorded run read back at any tick, read-only and with no model, for the replay
screen. What it reconstructs is checked against the running simulation's own state."""

from __future__ import annotations

import hashlib
import random
import shutil
import sqlite3
from datetime import datetime, timedelta

import pytest

from helpers import TINY
from smalltown.scripted import ScriptedBackend
from smalltown.sim.fork import fork
from smalltown.sim.history import History
from smalltown.sim.open import create, resume
from smalltown.sim.simulation import Simulation
from smalltown.world.load import load_world

START = datetime(2023, 2, 13, 6)
STOVE = "Willow Cottage:kitchen:stove"


def real_state(sim: Simulation) -> tuple[dict, dict]:
    agents = {a.name: (a.tile, a.action.describe() if a.action else None,
                       a.action.address if a.action else None, a.dest, a.doing) for a in sim.agents}
    return agents, dict(sim.objects)


def seen_state(h: History, tick: int) -> tuple[dict, dict]:
    s = h.state_at(tick)
    return {n: (a.tile, a.action, a.address, a.dest, a.doing) for n, a in s.agents.items()}, s.objects


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """A scripted tiny town 06:00-13:10 (past its first conversation), stopped and resumed once, with a whisper and a user's
    object edit on the way; the real state after every tick, and memory streams now and then."""
    path = tmp_path_factory.mktemp("hist") / "run.sqlite"
    world = load_world(TINY)
    sim = create(world, path, ScriptedBackend(world.seed))
    states = {0: real_state(sim)}
    streams: dict[int, dict[str, list]] = {}
    said: dict[int, int] = {}

    def run(until: datetime) -> None:
        while sim.now < until:
            events = sim.step()
            said[sim.tick] = said.get(sim.tick - 1, 0) + sum(e.kind == "said" for e in events)
            states[sim.tick] = real_state(sim)
            if sim.tick % 150 == 0:
                streams[sim.tick] = {a.name: [(m.id, m.last_accessed) for m in a.mind.memory] for a in sim.agents}

    run(datetime(2023, 2, 13, 7, 30))
    sim.whisper("Maria Lopez", "I want to go to the park")
    states[sim.tick] = real_state(sim)
    run(datetime(2023, 2, 13, 8, 40))
    sim.close()
    sim = resume(path, ScriptedBackend(world.seed))
    run(datetime(2023, 2, 13, 9))  # a snapshot is taken at this tick: then a user's edit after it
    sim.edit_object(STOVE, "on fire")
    states[sim.tick] = real_state(sim)
    run(datetime(2023, 2, 13, 13, 10))
    sim.close()
    return path, states, streams, said


def test_state_at_every_tick_is_the_real_state(recorded):
    path, states, _, _ = recorded
    with History(path) as h:
        assert h.ticks() == range(0, max(states) + 1)
        walked = set()
        for tick in h.ticks():
            assert seen_state(h, tick) == states[tick], f"tick {tick}"
            walked |= {n for n, a in h.state_at(tick).agents.items() if a.walking}
        assert walked == set(h.names)  # everyone walked somewhere: paths were reconstructed


def test_the_measures_positions_are_the_real_tiles(recorded):
    """eval culture reads where agents stood through the same reconstruction (state/positions.py),
    a fresh one on the save's reader, asked forward at some ticks only (most walks are never asked)."""
    from smalltown.state.positions import Positions
    from smalltown.store.save import open_reader

    path, states, _, _ = recorded
    reader = open_reader(path)
    try:
        with History(path) as h:
            places = Positions(reader, h.world)
        asked = sorted(random.Random(3).sample(sorted(states), 120))
        for tick in asked:
            assert places.at(tick) == {n: real[0] for n, real in states[tick][0].items()}, f"tick {tick}"
    finally:
        reader.close()


def test_state_at_in_any_order_is_the_real_state(recorded):
    path, states, _, _ = recorded
    ticks = list(states)
    random.Random(7).shuffle(ticks)
    with History(path) as h:
        for tick in ticks[:400]:
            assert seen_state(h, tick) == states[tick], f"tick {tick}"
    with History(path) as h:  # from the snapshot at 9:00, then the edit made after it
        assert h.state_at(tick_at(9)).objects[STOVE] == "on fire"


def tick_at(hour: float) -> int:
    return int(hour * 360) - 6 * 360


def test_a_save_from_before_snapshots_is_replayed_from_the_world_file(recorded, tmp_path):
    """No snapshots, and arrivals that did not log their tile (as an older smalltown wrote them):
    the state is brought forward from tick 0 by the event log alone."""
    path, states, _, _ = recorded
    old = tmp_path / "old.sqlite"
    shutil.copy(path, old)
    conn = sqlite3.connect(old)
    conn.execute("drop table snapshots")
    conn.execute("update events set data = json_remove(data, '$.tile') where kind = 'arrived'")
    conn.commit()
    conn.close()
    with History(old) as h:
        assert h.snapshot_ticks() == []
        for tick in list(states)[::37]:
            assert seen_state(h, tick) == states[tick], f"tick {tick}"


def test_memories_at_a_tick_are_the_stream_as_it_was(recorded):
    path, _, streams, _ = recorded
    with History(path) as h:
        for tick, by_agent in streams.items():
            for name, stream in by_agent.items():
                got = {m.id: m for m in h.memories_at(name, tick)}
                for mid, accessed in stream:
                    assert got[mid].last_accessed == accessed, (tick, name, mid)
                # the rest were noted by then and filed later, with the time they were noted
                later = set(got) - {mid for mid, _ in stream}
                assert all(i > stream[-1][0] for i in later)
                assert all(got[i].created <= h.time_of(tick) for i in later)
        assert any(m.last_accessed > m.created for m in h.memories_at("Maria Lopez", h.last_tick))


def test_conversations_until_a_tick(recorded):
    path, _, _, said = recorded
    with History(path) as h:
        for tick in (0, 1, 500, h.last_tick):
            convs = h.conversations_until(tick)
            assert sum(len(c.lines) for c in convs) == said.get(tick, 0)
        convs = h.conversations_until(h.last_tick)
        assert convs and all(len(c.participants) == 2 and set(c.participants) <= set(h.names) for c in convs)
        # rows of the conversations table (schema 4): each with its reason and both sides' summaries
        assert all(c.id > 0 and c.reason and set(c.chats) == set(c.participants) for c in convs)
        first = convs[0]
        assert first.lines[0].speaker == first.participants[0]
        assert not first.lines[0].text.startswith(first.participants[0])
        assert h.conversations_until(h.last_tick, agent="nobody") == []


def test_the_clock_and_its_bounds(recorded):
    path, states, _, _ = recorded
    with History(path) as h:
        assert h.time_of(360) == START + timedelta(hours=1) and h.tick_of(START + timedelta(hours=1)) == 360
        assert h.snapshot_ticks() == [360 * hour for hour in range(8)]  # 06:00 to 13:00, one each game hour
        with pytest.raises(ValueError, match="outside the run"):
            h.state_at(max(states) + 1)
        events = h.events(until=360, since=300, kinds=["started"])
        assert events and all(300 < e.tick <= 360 and e.kind == "started" for e in events)


def test_history_only_reads(recorded, tmp_path):
    path, states, _, _ = recorded
    ro = tmp_path / "ro.sqlite"
    shutil.copy(path, ro)
    before = hashlib.sha256(ro.read_bytes()).hexdigest()
    ro.chmod(0o444)
    try:
        with History(ro) as h:
            assert seen_state(h, 1500) == states[1500]
    finally:
        ro.chmod(0o644)
    assert hashlib.sha256(ro.read_bytes()).hexdigest() == before


def test_a_fork_has_the_original_history_up_to_its_tick(recorded, tmp_path):
    path, states, _, _ = recorded
    r = fork(path, datetime(2023, 2, 13, 8), tmp_path / "f.sqlite")
    with History(r.path) as h:
        assert h.last_tick == r.tick
        for tick in range(0, r.tick + 1, 53):
            assert seen_state(h, tick) == states[tick]


def test_walks_cut_short_by_a_conversation_in_smallville(tmp_path):
    """The bigger town, where agents meet on their way: a conversation stops a walk where it is."""
    from helpers import SMALLVILLE

    world = load_world(SMALLVILLE)
    sim = create(world, tmp_path / "sv.sqlite", ScriptedBackend(world.seed))
    states = {0: real_state(sim)}
    stopped = 0
    while sim.now < datetime(2023, 2, 13, 9):
        walking = {a.name for a in sim.agents if a.path}
        events = sim.step()
        stopped += sum(e.kind == "started" and e.agent in walking and e.data["activity"].startswith("talking with ")
                       for e in events)
        states[sim.tick] = real_state(sim)
    sim.close()
    assert stopped > 0
    with History(tmp_path / "sv.sqlite") as h:
        for tick in h.ticks():
            assert seen_state(h, tick) == states[tick], f"tick {tick}"
