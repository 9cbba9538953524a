"""Two game days of Smallville with the scripted backend, checked on the save: reflections,
plans at three levels, conversations, and news spreading through them as in the paper."""

from __future__ import annotations

import json
import sqlite3

import pytest

from conftest import SMALLVILLE, smalltown


@pytest.fixture(scope="module")
def town(tmp_path_factory):
    save = tmp_path_factory.mktemp("town") / "two-days.sqlite"
    smalltown("run", "--headless", SMALLVILLE, "--until", "+2d", "--save", save, check=True)
    conn = sqlite3.connect(f"file:{save}?mode=ro", uri=True)
    yield conn
    conn.close()


def memories(conn):
    return {r[0]: r for r in conn.execute("select id, agent, kind, description, evidence from memories")}


def traced_to_a_conversation(mem: dict, mid: int) -> bool:
    """Follow evidence back from a record: does it rest on a conversation?"""
    todo, seen = [mid], set()
    while todo:
        m = todo.pop()
        if m in seen:
            continue
        seen.add(m)
        if mem[m][2] == "chat":
            return True
        todo += json.loads(mem[m][4])
    return False


def knowers(conn, fact: str, source: str) -> set[str]:
    mem = memories(conn)
    return {m[1] for m in mem.values()
            if fact in m[3] and m[1] != source and m[2] != "chat" and traced_to_a_conversation(mem, m[0])}


def test_every_agent_reflected_with_evidence(town):
    agents = {a for (a,) in town.execute("select name from agents")}
    reflected = {a for (a,) in town.execute("select distinct agent from memories where kind='reflection' "
                                            "and evidence != '[]'")}
    assert len(agents) == 25 and reflected == agents
    mem = memories(town)
    for m in mem.values():
        if m[2] == "reflection":
            assert all(e in mem and mem[e][1] == m[1] for e in json.loads(m[4]))  # own, existing records


def test_plans_exist_at_all_three_levels(town):
    for agent, in town.execute("select name from agents"):
        plans = [d for (d,) in town.execute("select description from memories where agent=? and kind='plan'", (agent,))]
        assert any("'s plan for" in p for p in plans), agent
        assert any("'s schedule for" in p for p in plans), agent
        assert any(p.startswith("From ") for p in plans), agent


def test_at_least_ten_conversations(town):
    chats = town.execute("select count(*) from memories where kind='chat' and description not like '%asked%'").fetchone()[0]
    assert chats // 2 >= 10  # each conversation leaves a chat record on both sides
    said = town.execute("select count(*) from events where kind='said'").fetchone()[0]
    assert said >= 20


def test_the_party_spreads_through_conversation(town):
    heard = knowers(town, "Valentine's Day party", "Isabella Rodriguez")
    assert len(heard) >= 5, heard


def test_the_candidacy_spreads_through_conversation(town):
    heard = knowers(town, "running for mayor", "Sam Moore")
    assert len(heard) >= 3, heard


def test_relationships_are_in_memory(town):
    """Agents who talked know of each other through chat records, not a side table."""
    pairs = town.execute("select agent, description from memories where kind='chat'").fetchall()
    names = [a for (a,) in town.execute("select name from agents")]
    for agent, description in pairs[:20]:
        assert any(n != agent and n in description for n in names)
