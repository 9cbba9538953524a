"""Issue 16: reflection as a slow module (`slow_reflection`). Its questions are asked at one tick
and applied `slow_lag_ticks` later, where the retrievals are made and the insights asked, applied
as many ticks later again: the same run at any concurrency, the same after a stop with either
step out, and nothing changed when off."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest

from helpers import GULLHAVEN, TINY, query
from piano_worlds import Busy, resumed_digest, stop_with_a_question_out
from smalltown.mind import reflect
from smalltown.scripted import ScriptedBackend
from smalltown.sim.open import create
from smalltown.world.load import load_world

LAG = 6
ON = ["slow_reflection=true", f"slow_lag_ticks={LAG}", "reflection_threshold=30"]
INLINE = ["reflection_threshold=30"]


def run(path: Path, source: Path, hours: float, sets: list[str] = ON, workers: int = 1) -> tuple[str, object]:
    world = load_world(source)
    backend = Busy(world.seed, workers, "reflection", 0.05) if workers > 1 else ScriptedBackend(world.seed)
    sim = create(world, path, backend, sets=sets)
    try:
        sim.run_until(sim.now + timedelta(hours=hours))
        return sim.save.digest(), backend
    finally:
        sim.close()


REFLECTED = "SELECT tick, agent, data FROM events WHERE kind = 'reflected' ORDER BY tick, id"
CALLS = "SELECT tick, agent, task, note FROM llm_calls WHERE task LIKE 'reflection%' ORDER BY id"


@pytest.mark.parametrize("source", [TINY, GULLHAVEN])
def test_questions_and_insights_are_each_applied_lag_ticks_after_they_were_asked(tmp_path, source):
    path = tmp_path / "slow.sqlite"
    run(path, source, 6)
    reflected = query(path, REFLECTED)
    calls = query(path, CALLS)
    assert reflected and calls
    for tick, agent, task, note in calls:
        assert note.endswith(f"asked at tick {tick - LAG}")  # logged where applied, asked lag before
    for tick, agent, data in reflected:  # each reflection: its insights asked where its questions came back
        assert (tick - LAG, agent, "reflection_questions") in [(t, a, k) for t, a, k, _ in calls]
        assert (tick, agent, "reflection_insights") in [(t, a, k) for t, a, k, _ in calls]
        ids = json.loads(data)["memories"]
        assert all(query(path, "SELECT kind FROM memories WHERE id = ?", i) == [("reflection",)] for i in ids)
    assert any(json.loads(data)["memories"] for *_, data in reflected)  # insights were stored
    # the same reflections as inline, only 2 lags later (the same questions, the same records)
    inline = tmp_path / "inline.sqlite"
    run(inline, source, 6, INLINE)
    first_inline = query(inline, REFLECTED)[0]
    assert first_inline[0] + 2 * LAG == reflected[0][0] and first_inline[1] == reflected[0][1]


def test_the_run_is_the_same_at_concurrency_1_and_8(tmp_path):
    one, _ = run(tmp_path / "c1.sqlite", TINY, 6)
    eight, busy = run(tmp_path / "c8.sqlite", TINY, 6, workers=8)
    assert busy.most_out >= 1
    assert one == eight
    log = "SELECT tick, agent, task, note, parsed_answer FROM llm_calls ORDER BY id"
    assert query(tmp_path / "c1.sqlite", log) == query(tmp_path / "c8.sqlite", log)


@pytest.mark.parametrize("step", [reflect.QUESTIONS, reflect.INSIGHTS])
def test_a_run_stopped_with_a_step_out_resumes_to_the_same_save(tmp_path, step):
    straight, _ = run(tmp_path / "straight.sqlite", TINY, 6)
    path = tmp_path / "stopped.sqlite"
    out_at, slow = stop_with_a_question_out(path, TINY, ON, step)  # this step out
    assert [(q["module"], q["asked"], q["due"]) for q in slow] == [(step, out_at, out_at + LAG)]
    assert resumed_digest(path, TINY, 6) == straight


def test_with_the_setting_off_the_run_is_byte_for_byte_as_before(tmp_path):
    digest, _ = run(tmp_path / "plain.sqlite", TINY, 6, [])
    assert digest.startswith("447e8537")  # (since actions name the calls that decided them)
    off, _ = run(tmp_path / "off.sqlite", TINY, 6, ["slow_reflection=false"])
    assert off == digest
    # inline reflection (the default) makes both calls at the tick it is due, as before
    run(tmp_path / "inline.sqlite", TINY, 6, INLINE)
    calls = query(tmp_path / "inline.sqlite", CALLS)
    assert calls and all("asked at tick" not in (note or "") for *_, note in calls)
