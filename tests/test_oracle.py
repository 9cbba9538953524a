"""The oracle (benchmarks/oracle.py): a hand-made save's dependencies, critical path and list schedule
as computed by hand; its bounds; lock-step's wall by the same model (benchmarks/waits.py) never below
it on a real scripted run; lock-step's waits classified by kind."""

from __future__ import annotations

import json

import pytest

from benchmarks import oracle, waits
from benchmarks.latency import GPU, LatencyModel
from benchmarks.waitkinds import Wait
from handmade import ISABELLA, KLAUS, MARIA, HandSave
from helpers import SMALLVILLE
from smalltown.store.conversations import ConversationRow
from smalltown.store.save import open_reader

# a reply takes as many seconds as its answer has tokens: durations read off the calls
UNIT = LatencyModel("unit", overhead=0.0, per_prompt_token=0.0, per_answer_token=1.0, slowdown=0.0, slots=64)
BED = "Maria Lopez's house:bedroom:Maria's bed"


def call(agent: str, name: str, seconds: int, note: str = "") -> tuple:
    """A call row whose task is `name` (to find it again) and whose answer is `seconds` tokens."""
    return (agent, name, "prompt", "raw", "{}", 100, seconds, 0, 5.0, "llama", "m.gguf", note, "k", "")


@pytest.fixture
def hand(tmp_path):
    """The DAG (durations in seconds):
    tick 1: I a(2) -> b(3); M c(1); K d(4); M's slow job asked now: j1(5) -> j2(1), applied at tick 5
    tick 2: I and M talk: e(I, 1) -> f(M, 2) -> g(I, 1); M sets the bed's state
    tick 3: K sees I and the bed: g and f precede K's h(2)
    tick 5: M's job applied: j1, j2 logged, then M's k(1)
    critical path a b e f g h = 11 s; Σ = 23 s."""
    h = HandSave(tmp_path / "hand.sqlite")
    h.at(1, calls=[call(ISABELLA, "a", 2), call(ISABELLA, "b", 3), call(MARIA, "c", 1), call(KLAUS, "d", 4)])
    h.at(2, conversations=[ConversationRow(0, 0, "", h.time(2), "cafe", ISABELLA, MARIA)],
         events=[(MARIA, "object", "the bed is in use", json.dumps({"address": BED, "state": "in use"}))],
         calls=[call(ISABELLA, "e", 1), call(MARIA, "f", 2), call(ISABELLA, "g", 1)])
    h.at(3, events=[(KLAUS, "perceived", "sees I", json.dumps({"subject": ISABELLA, "distance": 2})),
                    (KLAUS, "perceived", "sees the bed", json.dumps({"subject": BED, "distance": 3}))],
         calls=[call(KLAUS, "h", 2)])
    h.at(5, calls=[call(MARIA, "j1", 5, "asked at tick 1"), call(MARIA, "j2", 1, "asked at tick 1"),
                   call(MARIA, "k", 1)])
    h.close()
    reader = open_reader(h.path)
    try:
        nodes = oracle.load(reader)
        yield oracle.dependencies(reader, nodes)
    finally:
        reader.close()


def edges(dag: oracle.Dag) -> set[tuple[str, str, Wait]]:
    return {(dag.nodes[a].task, dag.nodes[b].task, k) for b, ps in enumerate(dag.preds) for a, k in ps.items()}


def test_hand_dependencies(hand):
    assert edges(hand) == {
        ("a", "b", Wait.OWN), ("b", "e", Wait.OWN), ("e", "g", Wait.OWN),  # Isabella
        ("c", "f", Wait.OWN), ("f", "k", Wait.OWN), ("j1", "j2", Wait.OWN),  # Maria, her job
        ("d", "h", Wait.OWN),  # Klaus
        ("e", "f", Wait.CONVERSATION), ("f", "g", Wait.CONVERSATION),
        ("g", "h", Wait.SIGHT), ("f", "h", Wait.SIGHT),  # Isabella seen; the bed Maria set
        ("j2", "k", Wait.SLOW_JOB)}
    j1 = next(n for n in hand.nodes if n.task == "j1")
    assert (j1.job, j1.asked, j1.tick) == (True, 1, 5)


def test_hand_schedules(hand):
    dur = oracle.durations(hand.nodes, UNIT)
    length, path = oracle.critical_path(hand, dur)
    assert (length, [hand.nodes[i].task for i in path]) == (11, ["a", "b", "e", "f", "g", "h"])
    assert sum(dur) == 23
    # by hand, longest remaining path first on 2 slots: a j1 | b | c d | e | f | g j2 | h k: ends at 12
    assert oracle.list_schedule(hand, UNIT, 2).makespan == 12
    assert oracle.list_schedule(hand, UNIT, 1).makespan == 23
    assert oracle.list_schedule(hand, UNIT, 64).makespan == 11  # enough slots: the critical path


@pytest.mark.parametrize("slots", [1, 2, 3, 16])
def test_never_below_the_bounds(hand, slots):
    """With a server that slows as it fills, the makespan stays above the critical path and Σ / c
    (both at one busy slot)."""
    slowing = LatencyModel("slowing", 0.1, 0.001, 0.5, slowdown=0.5, slots=64)
    dur = oracle.durations(hand.nodes, slowing)
    s = oracle.list_schedule(hand, slowing, slots)
    assert s.makespan >= oracle.critical_path(hand, dur)[0] - 1e-9
    assert s.makespan >= sum(dur) / slots - 1e-9
    assert s.busy_seconds >= sum(dur) - 1e-9  # each call at least its one-slot duration
    if slots > 1:
        assert s.busy_seconds > sum(dur)  # two at once: slower each


def test_lockstep_from_tags():
    """Lock-step: a phase's items on the workers in order, lone calls one after another."""
    nodes = [oracle.Node(i, 1, a, "t", 1, False, 0, d) for i, (a, d) in enumerate(
        [("A", 2), ("A", 3), ("B", 1), ("C", 4), ("A", 1)])]
    tags = [waits.Tag(1, 1, "A", "t", "crowd", "s"), waits.Tag(1, 1, "A", "t", "crowd", "s"),
            waits.Tag(1, 1, "B", "t", "crowd", "s"), waits.Tag(1, 1, "C", "t", "crowd", "s"),
            waits.Tag(1, 2, "A", "t", "lone", "")]
    # two workers: A (2 then 3) on one, B (1) then C (4) on the other: 5; then the lone call: 6
    assert waits.lockstep(tags, nodes, UNIT, 2).makespan == 6
    assert waits.lockstep(tags, nodes, UNIT, 1).makespan == 11


def test_waits_by_kind():
    """Phase 1's slowest item is A's (two calls); its waiters are phase 2's agents: A on its own
    chain, B near (3 tiles) and C far (20), unless B's next call depends on A's (a conversation)."""
    agents = ["A", "A", "B", "C", "A", "B", "C"]
    nodes = [oracle.Node(i, 1, a, "t", 1, False, 0, 1) for i, a in enumerate(agents)]
    tags = [waits.Tag(1, 1 if i < 4 else 3, a, "t", "crowd", "s") for i, a in enumerate(agents)]
    tiles = {1: {"A": (0, 0), "B": (3, 0), "C": (20, 0)}}
    dag = oracle.Dag(nodes, [{} for _ in nodes])
    rounds, agent_waits = waits.waits(tags, dag, tiles, reach=6)
    assert rounds == {Wait.OWN: 2}
    assert agent_waits == {Wait.OWN: 1, Wait.NEAR: 1, Wait.FAR: 1}
    dag.edge(1, 5, Wait.CONVERSATION)
    assert waits.waits(tags, dag, tiles, reach=6)[1] == {Wait.OWN: 1, Wait.CONVERSATION: 1, Wait.FAR: 1}
    tiles[1]["B"] = (30, 0)
    dag.preds[5].clear()
    assert waits.waits(tags, dag, tiles, reach=6)[1] == {Wait.OWN: 1, Wait.FAR: 2}


def test_oracle_never_slower_than_lockstep(tmp_path):
    """A real scripted hour of Smallville: the tape matches the save call for call, and lock-step's
    wall under the latency model is never below the oracle's, at any concurrency."""
    tape, start, _, reach = waits.run(str(SMALLVILLE), 1.0, [], tmp_path / "sv.sqlite")
    reader = open_reader(tmp_path / "sv.sqlite")
    try:
        nodes = oracle.load(reader, start)
        dag = oracle.dependencies(reader, nodes)
    finally:
        reader.close()
    waits.check(tape.tags, nodes)
    assert len(nodes) > 100
    assert any(Wait.SIGHT in p.values() for p in dag.preds)
    for c in (1, 4, 16, 64):
        o = oracle.list_schedule(dag, GPU, c)
        ls = waits.lockstep(tape.tags, nodes, GPU, c)
        assert o.makespan <= ls.makespan + 1e-9, c
    dur = oracle.durations(nodes, GPU)
    assert waits.lockstep(tape.tags, nodes, GPU, 1).makespan == pytest.approx(sum(dur))
    rounds, _ = waits.waits(tape.tags, dag, tape.tiles, reach)
    assert rounds[Wait.OWN] > 0 and sum(rounds.values()) > 0


def test_tokens_estimated_where_none_are_recorded(tmp_path):
    """The stand-in records no tokens: 4 characters a token, the cached part the prompt's common
    prefix with the same agent's previous prompt; recorded tokens are taken as they are."""
    def row(agent: str, prompt: str, raw: str, tokens: tuple[int, int, int] = (0, 0, 0)) -> tuple:
        return (agent, "t", prompt, raw, "{}", tokens[0], tokens[1], tokens[2], 1.0, "scripted", "", "", "k", "")
    h = HandSave(tmp_path / "tokens.sqlite")
    h.at(1, calls=[row(ISABELLA, "p" * 400, "x" * 41), row(ISABELLA, "p" * 400 + "q" * 40, "x" * 4),
                   row(MARIA, "p" * 400, ""), row(KLAUS, "anything", "y", (500, 30, 200))])
    h.close()
    reader = open_reader(h.path)
    try:
        nodes = oracle.load(reader)
    finally:
        reader.close()
    assert [(n.uncached, n.answer) for n in nodes] == [(100, 11), (10, 1), (100, 0), (300, 30)]
