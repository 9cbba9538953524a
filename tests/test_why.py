"""`smalltown why`: the chain behind an agent's action on a scripted save of the tiny town (its
action and plan block, the call that chose it with its prompt, the records retrieval scored for it
and the memories they cite, down their evidence)."""

from __future__ import annotations

import json

import pytest

from helpers import cli, query, tiny_sim
from smalltown.cli.why import why_data

AGENT = "Isabella Rodriguez"


@pytest.fixture(scope="module")
def save(tmp_path_factory):
    """The tiny town run to 13:10 on the first day: past its agents' first plans and their first
    reflections (13:04:50); shared, as running it is the expensive part."""
    sim = tiny_sim(tmp_path_factory.mktemp("why"), "13:10")
    path = sim.save.path
    sim.close()
    return path


def test_why_names_the_call_that_chose_the_action_its_prompt_and_the_scored_records(save):
    # Isabella's first action of the day: the decompose call at her first waking tick chose it
    (tick, time, data), = query(save, "SELECT tick, time, data FROM events WHERE agent = ? AND kind = 'started' "
                                      "ORDER BY id LIMIT 1", AGENT)
    activity = json.loads(data)["activity"]
    out = cli("why", save, "Isabella", "--at", time[11:], check=True).stdout
    assert f"Doing: {activity} @" in out
    info = why_data(save, "Isabella", time[11:])
    chose = [c for c in info["calls"] if c["chose"]]
    assert len(chose) == 1 and activity in chose[0]["answer"]
    call_id, prompt, answer = query(save, "SELECT id, prompt, raw_answer FROM llm_calls WHERE id = ?", chose[0]["id"])[0]
    assert info["decided_at"]["tick"] == tick
    assert f"call {call_id}'s answer names the activity" in out and f"--- call {call_id}: " in out
    from smalltown.store.packing import unpack_text

    assert unpack_text(prompt, "") == chose[0]["prompt"] and chose[0]["prompt"].splitlines()[0] in out
    assert unpack_text(answer, "") == chose[0]["answer"]
    # the records retrieval scored at that tick, with their scores and the memories they are
    logged = query(save, "SELECT id FROM retrievals WHERE agent = ? AND tick = ? ORDER BY id", AGENT, tick)
    assert [r["id"] for r in info["retrievals"]] == [i for (i,) in logged] and logged
    described = {m["id"]: m["description"] for m in info["memories"]}
    for r in info["retrievals"]:
        assert f"--- retrieval {r['id']} ({r['purpose']})" in out
        for s in r["results"]:
            (description,), = query(save, "SELECT description FROM memories WHERE id = ?", s["id"])
            assert described[s["id"]] == description
            assert (f"{s['id']:>6}  {s['recency']:7.3f}  {s['importance']:10.3f}  {s['relevance']:9.3f}  "
                    f"{s['total']:5.3f}  {description}") in out


def test_why_follows_the_cited_memories_down_their_evidence(save):
    # the first action of Isabella's whose tick logged a retrieval citing a memory with evidence
    found = None
    for (time,) in query(save, "SELECT e.time FROM events e WHERE e.agent = ? AND e.kind = 'started' AND EXISTS "
                               "(SELECT 1 FROM retrievals r WHERE r.agent = e.agent AND r.tick = e.tick) "
                               "ORDER BY e.id", AGENT):
        info = why_data(save, AGENT, time[11:])
        if any(m["evidence"] for m in info["memories"]):
            found = time, info
            break
    assert found, "the save has no retrieval citing a memory with evidence"
    time, info = found
    chain = {m["id"]: m for m in info["memories"]}
    cited = {s["id"] for r in info["retrievals"] for s in r["results"]}
    assert cited <= set(chain)
    for m in info["memories"]:
        assert m["id"] in cited or any(m["id"] in o["evidence"] for o in info["memories"])
    out = cli("why", save, AGENT, "--at", time[11:], check=True).stdout
    rested = next(m for m in info["memories"] if m["evidence"])
    assert "--- what the cited reflections rest on" in out
    for e in rested["evidence"]:
        assert f"      <- {e}: {chain[e]['description']}" in out


def test_why_json_is_the_data_and_bad_input_is_a_usage_error(save):
    out = cli("why", save, "isabella", "--at", "9:00", "--json", check=True).stdout
    assert json.loads(out) == why_data(save, AGENT, "9:00")
    assert json.loads(out)["agent"] == AGENT
    bad = cli("why", save, "Isabela")
    assert bad.returncode == 2 and "Isabella Rodriguez" in bad.stderr  # did you mean
    late = cli("why", save, AGENT, "--at", "day 3 9:00")
    assert late.returncode == 2 and "--at" in late.stderr
