"""Agents' day plans are kept apart from the rest of their state (schema 5, store/plans.py): a
tick writes the state with its "plan" null and the plan into the plans table only when its text
changed; every reader gets the state whole, the same text as before, so the digest is unchanged."""

from __future__ import annotations

import json
import shutil
from datetime import timedelta

from helpers import ROOT, query, store_state, tiny_sim
from smalltown.state.agent import AgentState
from smalltown.store import plans
from smalltown.store.reader import Reader
from smalltown.store.save import SCHEMA_VERSION, Save


def test_a_tick_writes_the_plan_apart_and_readers_get_the_state_whole(tmp_path):
    sim = tiny_sim(tmp_path, "09:00")
    try:
        conn = sim.save.conn
        raw = dict(conn.execute("SELECT name, state FROM agents"))
        kept = dict(conn.execute("SELECT agent, plan FROM plans"))
        assert set(kept) == set(raw) and all(kept.values())
        assert all(json.loads(s)["plan"] is None for s in raw.values())  # the row holds no plan
        for row in Reader(conn).agent_rows():
            agent = next(a for a in sim.agents if a.name == row.name)
            state, plan = agent.state_texts()
            assert row.state == plans.joined(state, plan)  # the state as the program has it
            whole = json.loads(row.state)
            assert whole["plan"] == json.loads(kept[row.name]) and whole["plan"]["blocks"]
            # and it decodes and encodes back to the same text (the codec's round trip)
            again = AgentState.from_json(whole)
            assert json.dumps({**again.to_json(), "using": whole["using"], "recent": whole["recent"]}) == row.state
    finally:
        sim.close()


def test_an_unchanged_plan_writes_nothing_and_a_changed_one_is_written(tmp_path):
    sim = tiny_sim(tmp_path, "07:00")
    try:
        conn = sim.save.conn
        name, plan = conn.execute("SELECT agent, plan FROM plans WHERE plan IS NOT NULL").fetchone()
        before = conn.total_changes
        with sim.save.transaction():
            plans.write(conn, [(name, plan)])
        assert conn.total_changes == before  # the same text: no row written
        other = json.dumps({**json.loads(plan), "wake_up_hour": 11})
        with sim.save.transaction():
            plans.write(conn, [(name, other)])
        assert conn.total_changes == before + 1
        assert conn.execute("SELECT plan FROM plans WHERE agent = ?", (name,)).fetchone()[0] == other
    finally:
        sim.close()


def test_a_plan_changes_only_when_the_day_is_planned_anew(tmp_path):
    """Over a morning, actions change many times, the plans table's rows a few times."""
    sim = tiny_sim(tmp_path, "07:00")
    try:
        conn = sim.save.conn
        plan_writes = action_writes = 0
        last = dict(conn.execute("SELECT agent, plan FROM plans"))
        acts = dict(conn.execute("SELECT name, action FROM agents"))
        for _ in range(360):  # an hour
            sim.step()
            now = dict(conn.execute("SELECT agent, plan FROM plans"))
            plan_writes += sum(now[a] != last.get(a) for a in now)
            got = dict(conn.execute("SELECT name, action FROM agents"))
            action_writes += sum(got[a] != acts[a] for a in got)
            last, acts = now, got
        assert action_writes > plan_writes
    finally:
        sim.close()


def test_a_whole_state_in_the_row_reads_the_same_and_keeps_the_digest(tmp_path):
    """A row holding its plan (an older save, a hand-written one, a rewound one) reads as the
    split one did, and the digest, which hashes the states whole, is the same."""
    sim = tiny_sim(tmp_path, "08:00")
    path = sim.save.path
    sim.close()
    save = Save.open(path)
    try:
        digest, rows = save.digest(), Reader(save.conn).agent_rows()
        with save.transaction():
            for r in rows:
                store_state(save.conn, r.name, json.loads(r.state))
        assert query(path, "SELECT count(*) FROM plans") == [(0,)]
        assert Reader(save.conn).agent_rows() == rows and save.digest() == digest
    finally:
        save.close()


def test_an_older_save_is_migrated_and_its_states_read_whole_then_split(tmp_path):
    path = tmp_path / "v1.sqlite"
    shutil.copy(ROOT / "tests" / "fixtures" / "tiny-v1.sqlite", path)
    inline = {n: json.loads(s)["plan"] for n, s in query(path, "SELECT name, state FROM agents")}
    assert any(inline.values())
    save = Save.open(path)
    try:
        assert save.meta("schema_version") == SCHEMA_VERSION >= 5
        assert save.conn.execute("SELECT count(*) FROM plans").fetchone() == (0,)  # nothing moved: the rows hold their plans until next written
        assert {r.name: json.loads(r.state)["plan"] for r in Reader(save.conn).agent_rows()} == inline
    finally:
        save.close()
    from smalltown.scripted import ScriptedBackend
    from smalltown.sim.open import resume

    sim = resume(path, ScriptedBackend(0))
    try:
        sim.run_until(sim.now + timedelta(hours=1))
        # each agent written since holds its plan apart now, and reads whole
        split = dict(sim.save.conn.execute("SELECT agent, plan FROM plans WHERE plan IS NOT NULL"))
        assert split
        for r in Reader(sim.save.conn).agent_rows():
            if r.name in split:
                assert json.loads(r.state)["plan"] == json.loads(split[r.name])
    finally:
        sim.close()


def test_a_kept_plan_text_is_the_plan_as_it_is_after_every_tick(tmp_path):
    """The plan's JSON is kept between writes (sim/agent.py) and made again only when the plan is
    another or says it was edited (mind/planning.py): over a morning of decompositions, the kept
    text is always the plan's encoding now, and most writes reuse it."""
    from smalltown.state.plan import DayPlan

    sim = tiny_sim(tmp_path, "06:00")
    encoded = 0
    real = DayPlan.to_json

    def counting(plan):
        nonlocal encoded
        encoded += 1
        return real(plan)

    try:
        DayPlan.to_json = counting
        asked = 0
        for _ in range(6 * 60 * 3):  # three game hours of 10-second ticks
            sim.step()
            for agent in sim.agents:
                plan = agent.mind.state.plan
                kept = agent.plan_text()
                asked += 1
                assert kept == (json.dumps(real(plan)) if plan is not None else None), agent.name
        assert 0 < encoded < asked / 20  # re-encoded only when it changed
    finally:
        DayPlan.to_json = real
        sim.close()
