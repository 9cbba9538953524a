"""`smalltown why`: the chain behind an agent's action on a scripted save of the tiny town (its
action and plan block, the calls that decided it -- the link the mind records when it adopts the
action -- with their prompts, the records retrieval scored for them and the memories they cite,
down their evidence); a save from before that link says so."""

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


def linked_ids(save, agent: str, refs: list[dict]) -> list[int]:
    """The logged calls the refs name, found straight in the save: the agent's first call of the
    key at or after the tick it was asked at."""
    out = []
    for ref in refs:
        (i,), = query(save, "SELECT id FROM llm_calls WHERE agent = ? AND key = ? AND tick >= ? ORDER BY tick, id LIMIT 1",
                      ref.get("agent") or agent, ref["key"], ref["tick"])
        out.append(i)
    return out


def test_why_answers_with_the_linked_calls_their_prompts_and_the_scored_records(save):
    # Isabella's action at 9:00 (tick 1080): its "started" event names the calls that decided it
    (tick, start, data), = query(save, "SELECT tick, time, data FROM events WHERE agent = ? AND kind = 'started' "
                                       "AND tick <= 1080 ORDER BY id DESC LIMIT 1", AGENT)
    data = json.loads(data)
    ids = linked_ids(save, AGENT, data["calls"])
    tasks = [t for i in ids for (t,) in query(save, "SELECT task FROM llm_calls WHERE id = ?", i)]
    assert tasks[:2] == ["daily_plan", "hourly_schedule"] and tasks[-1] == "decompose"  # the day, its block, the action
    info = why_data(save, "Isabella", "9:00")
    assert info["linked"] is True and info["action"]["activity"] == data["activity"]
    assert [c["id"] for c in info["calls"]] == ids and [c["ref"] for c in info["calls"]] == data["calls"]
    # the decomposition that decided it lists the activity in its answer (found by the link, not by the words)
    assert data["activity"] in info["calls"][-1]["answer"]
    out = cli("why", save, "Isabella", "--at", "9:00", check=True).stdout
    assert f"Doing: {data['activity']} @" in out and f"Decided by {len(ids)} model call(s)" in out
    from smalltown.store.packing import unpack_text

    for c in info["calls"]:
        (prompt, answer), = query(save, "SELECT prompt, raw_answer FROM llm_calls WHERE id = ?", c["id"])
        assert unpack_text(prompt, "") == c["prompt"] and unpack_text(answer, "") == c["answer"]
        assert f"--- call {c['id']}: {c['task']} at " in out and c["prompt"].splitlines()[0] in out
    # the records retrieval scored for those calls (the day's plan retrieves), with their scores
    logged = query(save, "SELECT id FROM retrievals WHERE agent = ? AND tick IN (%s) ORDER BY id"
                   % ",".join("?" * len({c["tick"] for c in info["calls"]})), AGENT, *sorted({c["tick"] for c in info["calls"]}))
    assert logged and sorted(r["id"] for r in info["retrievals"]) == [i for (i,) in logged]
    plan = next(c for c in info["calls"] if c["task"] == "daily_plan")
    assert plan["retrievals"] and all(r["tick"] == plan["tick"] for r in info["retrievals"] if r["id"] in plan["retrievals"])
    described = {m["id"]: m["description"] for m in info["memories"]}
    for r in info["retrievals"]:
        assert f"--- retrieval {r['id']} ({r['purpose']}, tick {r['tick']})" in out
        for s in r["results"]:
            (description,), = query(save, "SELECT description FROM memories WHERE id = ?", s["id"])
            assert described[s["id"]] == description
            assert (f"{s['id']:>6}  {s['recency']:7.3f}  {s['importance']:10.3f}  {s['relevance']:9.3f}  "
                    f"{s['total']:5.3f}  {description}") in out


def test_every_action_links_to_logged_calls_and_a_talk_to_the_decision_to_talk(save):
    started = [(a, json.loads(d)) for a, d in query(save, "SELECT agent, data FROM events WHERE kind = 'started'")]
    assert started and all(isinstance(d.get("calls"), list) for _, d in started)
    for agent, d in started:
        for i in linked_ids(save, agent, d["calls"]):  # each ref names a call the log holds
            assert i
    talks = [(a, d) for a, d in started if d["activity"].startswith("talking with ")]
    assert talks, "the save has no conversation"
    for agent, d in talks:
        (task,), = query(save, "SELECT task FROM llm_calls WHERE id = ?", linked_ids(save, agent, d["calls"])[0])
        assert task == "react"  # the initiator's decision to talk (named for both sides)


def test_a_save_from_before_the_link_says_so_and_shows_the_calls_of_the_tick(save, tmp_path):
    old = tmp_path / "old.sqlite"
    import shutil
    import sqlite3

    shutil.copy(save, old)
    with sqlite3.connect(old) as conn:  # what a save made before the link holds: no "calls" in its events
        conn.execute("UPDATE events SET data = json_remove(data, '$.calls') WHERE kind = 'started'")
    info = why_data(old, AGENT, "9:00")
    assert info["linked"] is False
    at = info["calls"][0]["tick"]
    assert at <= info["action"]["tick"] and {c["tick"] for c in info["calls"]} == {at}
    assert [c["id"] for c in info["calls"]] == [i for (i,) in query(
        old, "SELECT id FROM llm_calls WHERE agent = ? AND tick = ? ORDER BY id", AGENT, at)]
    out = cli("why", old, AGENT, "--at", "9:00", check=True).stdout
    assert "This save predates the link from an action to the calls that decided it" in out


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


def test_why_brief_leaves_out_the_prompts_and_keeps_the_answers(save):
    info = why_data(save, "Isabella", "9:00")
    brief = cli("why", save, "Isabella", "--at", "9:00", "--brief", check=True).stdout
    full = cli("why", save, "Isabella", "--at", "9:00", check=True).stdout
    assert "Prompt:" in full and "Prompt:" not in brief and len(brief) < len(full) / 2
    for c in info["calls"]:
        assert f"--- call {c['id']}: " in brief and c["answer"].splitlines()[0] in brief
    assert all(f"--- retrieval {r['id']} " in brief for r in info["retrievals"])
