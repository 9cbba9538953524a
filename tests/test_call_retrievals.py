"""A call that dropped retrieved records to fit its prompt (its note says so) has its retrieval
logged at its tick, for its agent -- a slow module's question too, whose calls are logged ticks
after it was asked -- and a note names apart the dropped records that no retrieval chose
(records to rate, a reflection's latest records), which have no retrieval row."""

from __future__ import annotations

from datetime import timedelta

from helpers import TINY, query
from smalltown.llm.asker import dropped_note
from smalltown.scripted import ScriptedBackend
from smalltown.sim.open import create
from smalltown.world.load import load_world

SLOW = ["slow_reflection=true", "slow_lag_ticks=6", "reflection_threshold=30"]


def test_every_call_that_dropped_retrieved_records_has_its_retrieval_at_its_tick(tmp_path):
    world = load_world(TINY)
    path = tmp_path / "slow.sqlite"
    sim = create(world, path, ScriptedBackend(world.seed), sets=SLOW)
    try:
        sim.run_until(sim.now + timedelta(hours=8))
    finally:
        sim.close()
    dropped = query(path, "SELECT id, agent, tick, task, note FROM llm_calls WHERE note LIKE '%dropped to fit%'")
    retrieved = [c for c in dropped if "retrieved record" in c[4]]
    assert retrieved and {"reflection_insights", "react"} <= {c[3] for c in retrieved}
    for i, agent, tick, task, note in retrieved:
        assert query(path, "SELECT count(*) FROM retrievals WHERE agent = ? AND tick = ?", agent, tick)[0][0], (i, task)
    # the slow insights: asked at one tick, logged (calls and retrievals) where applied
    for i, agent, tick, task, note in [c for c in retrieved if c[3] == "reflection_insights"]:
        assert "asked at tick" in note
        purposes = [p for (p,) in query(path, "SELECT purpose FROM retrievals WHERE agent = ? AND tick = ?", agent, tick)]
        assert "reflection" in purposes
    others = [c for c in dropped if c[3] in ("decompose", "reflection_questions")]
    assert others and all("retrieved" not in c[4] for c in others)
    assert any("to rate" in c[4] for c in others) and any("latest record" in c[4] for c in others)


def test_a_note_counts_retrieved_records_apart_from_the_others():
    from realistic import realistic_tasks

    task = realistic_tasks()["daily_plan"]  # its context retrieved, its yesterday not
    assert len(task.context) >= 3 and len(task.yesterday) >= 2
    asked = task.model_copy(update={"context": task.context[:-2], "yesterday": task.yesterday[:-1]})
    assert dropped_note(task, asked, 3) == ("2 retrieved records and 1 record of yesterday dropped to fit the "
                                            "prompt's budgets")
    assert dropped_note(task, task.model_copy(update={"context": task.context[:-1]}), 1) == (
        "1 retrieved record dropped to fit the prompt's budgets")  # (as it always read)
    assert dropped_note(task, task, 0) == ""
