"""The agent's state is one dataclass with one codec: what a run saved decodes to typed fields
(times as datetime) and encodes back to the very same JSON (so resumed and fresh runs write the
same save); an older save's state (keys missing) still loads. And how a conversation is spelt as
an activity is the state's own business: nothing but state/agent.py (`talking_with`, `partner_of`)
reads the prefix."""

from __future__ import annotations

import json
import re
import sqlite3
from datetime import date, datetime

import pytest

from helpers import ROOT
from smalltown.state.known import KnownTree
from smalltown.state.agent import AgentState, partner_of, talking_with
from smalltown.store.plans import agent_rows


@pytest.fixture(scope="module", params=["smallville", "gullhaven"])
def saved_states(request) -> list[str]:
    path = request.getfixturevalue(f"{request.param}_two_days")
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return [r[6] for r in agent_rows(conn)]  # each state whole, its plan put back
    finally:
        conn.close()


def test_a_saved_state_round_trips_through_the_codec_byte_for_byte(saved_states):
    states = []
    for text in saved_states:
        d = json.loads(text)
        state = AgentState.from_json(d)
        # as sim's Agent.state_json writes it: the mind's state, then the body's
        again = json.dumps({**state.to_json(), "using": d["using"], "recent": d["recent"]})
        assert again == text
        states.append(state)
    # the run left every kind of state to round-trip, decoded to typed values
    assert all(isinstance(s.plan.date, date) and isinstance(s.action.start, datetime) for s in states)
    assert all(isinstance(s.summary_date, date) for s in states)
    assert any(s.talks for s in states) and any(s.told for s in states) and any(s.last_chat for s in states)
    assert any(s.heard for s in states) and any(s.object_states for s in states)
    talk = next(t for s in states for t in s.talks.values())
    assert isinstance(talk.time, datetime) and talk.summary
    assert all(isinstance(t, datetime) for s in states for facts in s.told.values() for t in facts.values())


def test_waiting_records_and_their_known_ratings_round_trip():
    d = {"pending": [["observation", "the stove is burning", "2023-02-13 08:00:10", []],
                     ["plan", "From 08:00 to 09:00 she will: cook", "2023-02-13 08:00:20", [7]]],
         "pending_ratings": {"the stove is burning": 8}}
    state = AgentState.from_json(d)
    assert [(p.kind, p.time) for p in state.pending] == [("observation", datetime(2023, 2, 13, 8, 0, 10)),
                                                          ("plan", datetime(2023, 2, 13, 8, 0, 20))]
    out = state.to_json()
    assert json.loads(json.dumps(out["pending"])) == d["pending"] and out["pending_ratings"] == d["pending_ratings"]
    state.ratings["a text filed long ago"] = 3  # a rating of no waiting record is not saved
    assert state.to_json()["pending_ratings"] == d["pending_ratings"]


def test_an_older_state_loads_with_its_defaults():
    """Keys missing (a save from before them) are their defaults; no spatial memory: the tree given;
    an empty plan or action written as a falsy value is none."""
    tree = KnownTree({"Home": {"kitchen": ["stove"]}})
    state = AgentState.from_json({"summary": "a baker", "plan": 0, "action": ""}, known=tree)
    assert state.known is tree and state.plan is None and state.action is None
    assert state.summary == "a baker" and state.summary_date is None and state.pending == []
    out = state.to_json()
    assert out["summary_date"] == "" and out["plan"] is None and out["schedule_memory"] is None


def test_a_conversation_is_an_activity_only_the_mind_spells():
    assert partner_of(talking_with("Ann Lee")) == "Ann Lee"
    assert partner_of("sleeping") is None and partner_of(None) is None


# the store rebuilds the conversations of saves from before they were records from their
# `started` events, in a layer below the state: it keeps its own copy of the old wording
READS_OLD_SAVES = {"smalltown/store/conversations.py"}
SPELLS_IT = "smalltown/state/agent.py"
PREFIX = re.compile(r"""\bTALKING\b|["']talking with ["']""")


def test_nothing_but_the_state_reads_the_talking_prefix():
    hits = []
    for path in sorted((ROOT / "smalltown").rglob("*.py")):
        rel = str(path.relative_to(ROOT))
        if rel == SPELLS_IT or rel in READS_OLD_SAVES:
            continue
        hits += [f"{rel}:{i}" for i, line in enumerate(path.read_text().splitlines(), 1) if PREFIX.search(line)]
    assert hits == []
