"""A prompt still too long once its records are dropped loses, in order, what its task declares
shrinkable: a late re-plan in a many-town world (a whole day done, six towns, trips, a promise)
fits the window instead of stopping the run."""

from __future__ import annotations

from datetime import datetime

import pytest

from smalltown.llm.fit import RULES, PromptTooLong, estimate, fit
from smalltown.llm.render import render
from smalltown.llm.tasks import Block, HourlySchedule, PersonaCard, PlanStep, Promise, TownSeen, Trip

NOW = datetime(2023, 6, 6, 21, 10)
ANN = PersonaCard(name="Ann Reed", age=68, traits="patient", description="Ann Reed mends radios.", home="Reed farm")
TOWNS = [TownSeen(name=f"Town{i}", square=f"Town{i} Park", minutes=10 + 5 * i) for i in range(6)]


def size(task: HourlySchedule) -> int:
    """The prompt's tokens as fit counts them (the rules, the prompt, the template's margin)."""
    return estimate(RULES) + estimate(render(task)) + 16


def late_replan(**change) -> HourlySchedule:
    done = [Block(start=f"{h:02d}:00", minutes=60, activity=f"activity of the hour {h}", place="Reed farm")
            for h in range(7, 21)]
    return HourlySchedule(**{**dict(
        persona=ANN, now=NOW, wake_up_hour=7, from_time="21:10", done=done,
        daily_plan=[PlanStep(time=f"{h:02d}:00", activity=f"plan step {h}") for h in range(7, 22, 2)],
        known_places=["Reed farm", *(t.square for t in TOWNS)], towns=TOWNS,
        trips=[Trip(town="Town1", place="Town1 Park", why="market", start="09:00", end="18:00", minutes=15)],
        promises=[Promise(what="fix the radio", by="22:00", where="Reed farm", to="Bo Lin")]), **change})


def test_the_earliest_done_blocks_go_first_then_towns():
    task = late_replan()
    fitted, prompt, _ = fit(task, size(task) - 60)
    assert size(fitted) <= size(task) - 60
    assert fitted.done[-1] == task.done[-1] and fitted.done[0] != task.done[0]  # the oldest left out
    assert fitted.towns == task.towns and fitted.promises == task.promises


def test_with_too_little_room_the_towns_go_too_before_the_promise():
    task = late_replan()
    bare = late_replan(done=[], towns=[], trips=[])
    fitted, prompt, _ = fit(task, size(bare) + 4)
    assert not fitted.done and not fitted.towns and fitted.promises == task.promises


def test_a_prompt_that_cannot_fit_still_says_so():
    with pytest.raises(PromptTooLong):
        fit(late_replan(), 200)


def test_a_prompt_that_fits_is_not_touched():
    task = late_replan()
    fitted, prompt, cut = fit(task, size(task))
    assert fitted == task and cut == 0
