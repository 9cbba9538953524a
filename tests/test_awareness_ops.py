"""Action awareness of an economy's ops (mind/awareness.py `notice_op`): a give or trade that did not
happen reaches the agent's next decompositions as typed inputs (`EconomyDecompose.outcomes`), and the
stand-in (scripted/trade.py) then offers someone else; without the setting nothing is carried, and
the stand-in offers the same person again. On Sid's tax town (many refused gives: the partner had
walked off), run scripted with each decomposition's question kept as it was asked."""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from helpers import ROOT, save_digest
from smalltown.llm.tasks import EconomyDecompose, Op, OpOutcome, Task
from smalltown.mind.awareness import OPS_KEPT_MINUTES, op_outcomes
from smalltown.scripted import ScriptedBackend
import smalltown.scripted.memory as memory
from smalltown.scripted.trade import choose, decompose
from smalltown.sim.open import create, resume
from smalltown.eval.progression import measure_progression, read_progression
from smalltown.store.save import Save, open_reader
from smalltown.world.load import load_world
from realistic import realistic_tasks

TAX = ROOT / "worlds" / "sid-tax.toml"
HOURS = 8  # 06:00-14:00: the first refused gives come after 08:00


class Kept(ScriptedBackend):
    """The stand-in, keeping each economy decomposition it answers (the question as asked)."""

    def __init__(self, seed: int):
        super().__init__(seed)
        self.asked: list[EconomyDecompose] = []

    def answer(self, task: Task, prompt: str = ""):
        if isinstance(task, EconomyDecompose):
            self.asked.append(task)
        return super().answer(task, prompt)


def _run(tmp_path: Path, on: bool) -> tuple[Path, list[EconomyDecompose]]:
    world = load_world(TAX)
    path = tmp_path / f"tax-{on}.sqlite"
    backend = Kept(world.seed)
    sim = create(world, path, backend, overwrite=True,
                 sets=["architecture=piano", f"action_awareness={str(on).lower()}"])
    try:
        sim.run_until(world.start + timedelta(hours=HOURS))
    finally:
        sim.close()
    return path, backend.asked


def _refused(path: Path) -> list[tuple[datetime, str, Op]]:
    """(when, who, the op) of each give or trade the engine refused."""
    save = Save.open(path, readonly=True)
    try:
        rows = save.conn.execute("SELECT time, agent, data FROM events WHERE kind = 'refused' ORDER BY id").fetchall()
    finally:
        save.close()
    out = []
    for time, agent, data in rows:
        label = json.loads(data)["op"]
        kind = label.split(" ", 1)[0]
        if kind in ("give", "trade"):
            out.append((datetime.fromisoformat(time), agent, label))
    return out


def _next(asked: list[EconomyDecompose], who: str, after: datetime) -> EconomyDecompose | None:
    """`who`'s first economy decomposition asked at or after `after`, within the outcomes' window."""
    return next((t for t in asked if t.persona.name == who and after <= t.now < after + timedelta(minutes=OPS_KEPT_MINUTES)),
                None)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("ops")
    return {on: _run(tmp, on) for on in (True, False)}


def test_a_refused_give_reaches_the_next_decompositions_typed_inputs_and_is_not_repeated(runs):
    path, asked = runs[True]
    refused = _refused(path)
    assert len(refused) >= 5, refused
    checked = avoided = 0
    for when, who, label in refused:
        task = _next(asked, who, when)
        if task is None:
            continue
        failed = [o for o in task.outcomes if not o.done and o.op.label == label]
        assert failed, (who, label, task.outcomes)  # the typed input: what, with whom, not done, and why
        o = failed[-1]
        assert o.why.endswith("is not here") or " holds " in o.why
        assert o.minutes_ago == int((task.now - when).total_seconds() // 60)
        checked += 1
        chosen = choose(task)
        other = o.op.other
        if any(op.other == other for op in task.ops):  # the same person is there to offer again
            elsewhere = any(op.other and op.other != other for op in task.ops)
            assert chosen is None or chosen.label != label
            if elsewhere:
                assert chosen is None or chosen.other != other, (who, other, chosen)
                avoided += 1
    assert checked >= 5 and avoided >= 1, (checked, avoided)


def test_without_awareness_nothing_is_carried_and_the_same_person_is_offered_again(runs):
    path, asked = runs[False]
    assert asked and not any(t.outcomes for t in asked)
    assert not any("outcomes" in t.model_dump() for t in asked)  # (its questions, and their keys, as before)
    repeats = 0
    for when, who, label in _refused(path):
        task = _next(asked, who, when)
        chosen = choose(task) if task is not None else None
        before = next((t for t in reversed(asked) if t.persona.name == who and t.now < when), None)
        op = next((o for o in before.ops if o.label == label), None) if before else None
        if chosen is None or op is None or chosen.other != op.other:
            continue
        repeats += 1
        # the same question, knowing it did not happen: another partner (when one is listed)
        knowing = task.model_copy(update={"outcomes": [OpOutcome(op=op, done=False, why=f"{op.other} is not here",
                                                                  minutes_ago=1)]})
        if any(o.other and o.other != op.other for o in task.ops):
            assert choose(knowing).other != op.other
    assert repeats >= 1


def test_with_awareness_more_offers_are_done_and_a_smaller_share_refused(runs):
    """What the module is for, on the same town and seed: with it, more gives and trades are done and a
    smaller share of those tried is refused (it offers more often, as it offers at once after a refusal). (Not the distinct items themselves: those move by a few hundredths either way
    on the bundled worlds, benchmarks/RESULTS.md.)"""
    got = {}
    for on, (path, _) in runs.items():
        reader = open_reader(path)
        try:
            r = measure_progression(read_progression(reader, str(path)))
        finally:
            reader.close()
        got[on] = (r["offers_done"], r["offers_refused"])
    share = {on: refused / (done + refused) for on, (done, refused) in got.items()}
    assert got[True][0] > got[False][0] and share[True] < share[False], (got, share)


def test_the_stand_ins_choice_from_the_outcomes_alone():
    base = realistic_tasks()["decompose_economy"]
    give = Op(op="give", item="coffee", qty=1, other="Klaus Mueller")
    trade = Op(op="trade", item="coffee", qty=1, other="Klaus Mueller", get="book", get_qty=1)
    maria = Op(op="give", item="coffee", qty=1, other="Maria Lopez")
    task = base.model_copy(update={"ops": [give, trade, maria], "need": ""})
    no = OpOutcome(op=trade, done=False, why="Klaus Mueller is not here", minutes_ago=30)
    assert choose(task.model_copy(update={"outcomes": [no]})) == maria  # another partner
    alone = task.model_copy(update={"ops": [give, trade], "outcomes": [no]})
    assert choose(alone) == give  # no one else listed: other goods with the same person, not the same offer
    done = OpOutcome(op=trade, done=True, minutes_ago=30)
    assert choose(task.model_copy(update={"outcomes": [done]})) == choose(task)  # done: as if unknown
    # when: at the end of its actions (the person has walked there), but at once after an offer did
    # not happen (the partners listed are here now)
    long = task.model_copy(update={"minutes": 60})
    for outcomes, at in (([], -1), ([done], -1), ([no], 0)):
        acts = decompose(long.model_copy(update={"outcomes": outcomes}), memory.rate).actions
        with_op = [i for i, a in enumerate(acts) if a.op]
        assert len(acts) > 1 and with_op == [range(len(acts))[at]], (outcomes, [(a.minutes, a.op) for a in acts])


def test_the_outcomes_are_saved_and_a_resumed_run_is_the_straight_one(tmp_path):
    world = load_world(TAX)
    sets = ["architecture=piano", "action_awareness=true"]
    straight, half = tmp_path / "straight.sqlite", tmp_path / "half.sqlite"
    for path, hours in ((straight, 5), (half, 3)):
        sim = create(load_world(TAX), path, ScriptedBackend(world.seed), overwrite=True, sets=sets)
        try:
            sim.run_until(world.start + timedelta(hours=hours))
        finally:
            sim.close()
    sim = resume(half, ScriptedBackend(world.seed))
    try:
        kept = [a.mind.state.modules["action awareness"]["ops"] for a in sim.agents
                if "action awareness" in a.mind.state.modules]
        assert kept  # (refused gives by 09:00, in the save's agent states)
        sim.run_until(world.start + timedelta(hours=5))
    finally:
        sim.close()
    assert save_digest(half) == save_digest(straight)


def test_a_hand_edited_outcome_is_forgotten_not_a_crash(tmp_path):
    world = load_world(TAX)
    path = tmp_path / "edited.sqlite"
    sim = create(world, path, ScriptedBackend(world.seed), overwrite=True,
                 sets=["architecture=piano", "action_awareness=true"])
    try:
        sim.run_until(world.start + timedelta(hours=3))
    finally:
        sim.close()
    conn = sqlite3.connect(path)
    name, state = conn.execute("SELECT name, state FROM agents ORDER BY name LIMIT 1").fetchone()
    state = json.loads(state)
    good = {"op": {"op": "give", "item": "bread", "qty": 1, "other": "Nobody"}, "done": False, "why": "x",
            "time": "2023-06-05 08:59:00"}
    state.setdefault("modules", {})["action awareness"] = {"ops": [{"op": {"op": "steal"}}, "x", {"time": "nope"}, good]}
    conn.execute("UPDATE agents SET state = ? WHERE name = ?", (json.dumps(state), name))
    conn.commit()
    conn.close()
    sim = resume(path, ScriptedBackend(world.seed))
    try:
        agent = sim.by_name[name]
        kept = op_outcomes(agent.mind, world.start + timedelta(hours=3))
        assert [o.op.other for o in kept] == ["Nobody"] and kept[0].minutes_ago == 1
        sim.run_until(world.start + timedelta(hours=4))
    finally:
        sim.close()


ROLES = ROOT / "worlds" / "roles.toml"


def test_over_two_days_the_role_world_ends_with_more_distinct_items_with_awareness(tmp_path):
    """Sid's direction (§3: fewer items without action awareness), on the role world over two game
    days at the world's seed (17): 4.37 distinct kinds a head with it, 4.27 without; on seeds 1-3
    4.43-4.57 with, 4.03-4.27 without (benchmarks/RESULTS.md; before awareness noticed refused
    offers, 3.83 with on each). One game day is too short: at 24 h the two are within 0.1, with
    below without."""
    world = load_world(ROLES)
    got = {}
    for on in (True, False):
        path = tmp_path / f"roles-{on}.sqlite"
        sim = create(load_world(ROLES), path, ScriptedBackend(world.seed), overwrite=True,
                     sets=["architecture=piano", f"action_awareness={str(on).lower()}"])
        try:
            sim.run_until(world.start + timedelta(days=2))
        finally:
            sim.close()
        reader = open_reader(path)
        try:
            got[on] = measure_progression(read_progression(reader, str(path)))["mean"]
        finally:
            reader.close()
    assert got[True] > got[False], got
