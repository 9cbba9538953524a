"""The stand-in's per-agent caches hold a whole town of 600: keyed by the routine (world data), not
by the persona, whose summary changes every day, so a second day's questions find every agent's
day laid out already (a cache keyed by persona, or smaller than the town, lays it out again)."""

from __future__ import annotations

from datetime import datetime

from smalltown.llm.tasks import PersonaCard, Record
from smalltown.scripted import day, memory, steps
from smalltown.world.model import RoutineItem

TOWN = 600
T = datetime(2023, 6, 5, 8, 0)


def persona(i: int, summary: str) -> PersonaCard:
    wake = f"{5 + i % 4:02d}:{i % 60:02d}"  # distinct routines
    routine = (RoutineItem("22:00", 420 + i % 60, "sleeping", "", "sleep"),
               RoutineItem(wake, 30, "have breakfast", "", "meal"),
               RoutineItem("09:00", 240 + i, "work at the shop", f"Shop {i}", "work"))
    return PersonaCard(name=f"Person {i}", age=30, traits="", description="", home=f"House {i}",
                   summary=summary, routine=routine)


def ask_all(people: list[PersonaCard]) -> None:
    for p in people:
        day.wake_minute(p)
        steps.day_steps(p)
        memory.rate(Record(kind="observation", text=f"{p.name} is having breakfast", time=T), p)


def test_a_new_summary_does_not_lay_out_a_known_routine_again():
    ask_all([persona(i, "day one") for i in range(TOWN)])
    before = [f.cache_info().misses for f in (day._routine_minutes, steps._day_steps, memory._sights_of)]
    ask_all([persona(i, "day two, a new summary") for i in range(TOWN)])
    after = [f.cache_info().misses for f in (day._routine_minutes, steps._day_steps, memory._sights_of)]
    assert after == before


def test_the_cached_day_is_the_routine_s_own():
    a, b = persona(1, "x"), persona(2, "x")
    out = a.model_copy(update={"routine": (*a.routine[:1], RoutineItem("07:00", 30, "have breakfast", "Cafe", "meal"))})
    assert steps.day_steps(a)[1].opening == ("prepare breakfast",)
    assert steps.day_steps(out)[1].opening == ("order breakfast",)  # the routine read, not a neighbour's
    assert steps.day_steps(a) == steps.day_steps(persona(1, "another summary"))
    assert memory._sights(a) != memory._sights(b)  # each agent's sights say its own name
