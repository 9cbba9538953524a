"""Issue 16, say–do: the rate of statements (promises made in talk) that contradict the speaker's
own plan at the moment they are said, read from the save's events; lower with the controller's
broadcast than without, on two worlds."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from helpers import GULLHAVEN, TINY
from smalltown.eval.saydo import contradictions_of, describe, saydo_of_save
from smalltown.scripted import ScriptedBackend
from smalltown.sim.open import create
from smalltown.store.records import EventRow
from smalltown.world.load import load_world


def run(world: Path, path: Path, hours: int, sets: list[str]) -> None:
    w = load_world(world)
    sim = create(w, path, ScriptedBackend(w.seed), sets=sets)
    try:
        sim.run_until(sim.now + timedelta(hours=hours))
    finally:
        sim.close()


def said(i: int, where: str, planned: object = None, kind: str = "committed") -> EventRow:
    data = {"to": "Bo Ray", "what": "walk", "where": where, "by": "17:00"}
    if planned is not None:
        data["planned"] = planned
    return EventRow(i, i, "2023-02-13 10:00:00", "Ann Lee", kind, "", data)


def test_a_promise_contradicts_when_the_speakers_plan_has_it_elsewhere_and_silence_is_apart():
    c = contradictions_of([said(1, "Park", "Park"), said(2, "Park", "Cafe"), said(3, "Park", ""),
                           said(4, "Park"), said(5, "Park", "Cafe", kind="kept"), said(6, "Cafe", "Cafe")])
    assert (c.statements, c.contradicting, c.unplanned) == (3, 1, 2) and c.rate == pytest.approx(1 / 3)
    assert contradictions_of([said(1, "Park", "")]).rate is None


@pytest.mark.parametrize("world", [TINY, GULLHAVEN], ids=["tiny", "gullhaven"])
def test_statements_contradict_the_speakers_state_less_with_the_broadcast(world, tmp_path):
    on, off = tmp_path / "on.sqlite", tmp_path / "off.sqlite"
    run(world, on, 24, ["commitments=true", "controller_broadcast=true"])
    run(world, off, 24, ["commitments=true", "controller_broadcast=false"])
    s_on, s_off = saydo_of_save(on), saydo_of_save(off)
    assert s_on.kept.made > 0 and s_on.contradictions.statements > 0, describe(s_on)
    assert s_off.contradictions.statements > 0, describe(s_off)
    # with the broadcast the speaker promises what it has planned; without, what it happens to think of
    assert s_on.contradictions.rate <= 0.1, describe(s_on)
    if world == GULLHAVEN:  # enough talk in a day to say one thing and plan another (tiny: two promises)
        assert s_off.contradictions.statements >= 10, describe(s_off)
        assert s_off.contradictions.rate > s_on.contradictions.rate, (describe(s_on), describe(s_off))
    assert s_on.contradictions.statements + s_on.contradictions.unplanned == s_on.kept.made
