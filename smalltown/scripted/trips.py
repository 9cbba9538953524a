"""A trip to another town, as the stand-in plans one (a world of several towns, travel on): from
the typed reasons the day's question gives (llm/tasks/travel.py) and the person's traits (world
data), seeded by the run, the person and the day, so the day plan, its schedule and a re-plan
agree without reading each other's words.

A priest preaches in another town's square on PREACH_SHARE of days (the
nearer towns first); on the other days, a believer goes to its doctrine's gathering most days;
otherwise an outgoing person goes more often than a reserved one (Sid's agents "often migrate between different towns"); a nearer
town is chosen before a farther one, and a trip is one block: the walk there, the stay at the
place, after which the day's routine walks the person home.
"""

from __future__ import annotations

from datetime import date

from smalltown.llm.tasks import PersonaCard, Trip
from smalltown.scripted.rate import from_traits
from smalltown.scripted.words import minute
from smalltown.seeded import stable_int

GATHERING_SHARE = 70  # percent of days a believer goes to its doctrine's gathering
PREACH_SHARE = 70  # percent of days a priest preaches in another town's square (most days)
STAY = (60, 90, 120)  # minutes at a market or with people
LATEST = 20 * 60  # a trip's stay ends by 20:00


def share(p: PersonaCard) -> int:
    """Percent of days the person makes a trip for a market or people: 10 + 4 x how outgoing the
    traits say it is (0..10): 30 for the middling, up to 50 for the most outgoing."""
    return 10 + 4 * from_traits(p.traits, "outgoing")


def chosen(seed: int, p: PersonaCard, day: date, trips: list[Trip]) -> Trip | None:
    """Today's trip, if any (seeded: the same for the day's every question)."""
    if not trips:
        return None
    roll = stable_int(seed, p.name, day.isoformat(), "trip") % 100
    preaching = [t for t in trips if t.why == "preaching"]
    if preaching and stable_int(seed, p.name, day.isoformat(), "preach") % 100 < PREACH_SHARE:  # (its own roll)
        return _pick(seed, p, day, preaching)
    gatherings = [t for t in trips if t.why == "gathering"]
    if gatherings and roll < GATHERING_SHARE:
        return _pick(seed, p, day, gatherings)
    if roll >= share(p):
        return None
    people = [t for t in trips if t.why == "people"]
    others = [t for t in trips if t.why in ("market", "people")]
    if not others:
        return None
    return _pick(seed, p, day, people if people and roll % 2 == 0 else others)


def _pick(seed: int, p: PersonaCard, day: date, pool: list[Trip]) -> Trip:
    """A nearer town first: of the two nearest, one (seeded)."""
    near = sorted(pool, key=lambda t: (t.minutes, t.town, t.why))[:2]
    return near[stable_int(seed, p.name, day.isoformat(), "where") % len(near)]


def window(seed: int, p: PersonaCard, day: date, trip: Trip, wake: int) -> tuple[int, int] | None:
    """(leave, back) minutes of the trip's block: it leaves in time to walk there; a gathering is
    stayed to its end, a market or a visit for an hour or two within the place's hours and
    after the person's first hour awake. None: no time for it today."""
    s, e = minute(trip.start), minute(trip.end)
    if e <= s:
        e = 24 * 60  # (open past midnight: until the day ends)
    if trip.why == "gathering":
        leave = s - trip.minutes
        return (leave, e) if leave >= wake else None
    stay = STAY[stable_int(seed, p.name, day.isoformat(), "stay") % len(STAY)]
    first = max(s, wake + 60 + trip.minutes)
    last = min(e, LATEST) - stay
    if last < first:
        return None
    arrive = first + (stable_int(seed, p.name, day.isoformat(), "when") % ((last - first) // 15 + 1)) * 15
    return arrive - trip.minutes, arrive + stay


def activity(p: PersonaCard, trip: Trip) -> tuple[str, ...]:
    """What the trip's block is called, longest first (the first that fits is used)."""
    if trip.why == "gathering":
        # ("the gathering of X": a doctrine's name may begin with "the")
        return (f"go to the gathering of {trip.doctrine} at {trip.place}", f"go to the gathering of {trip.doctrine}")
    if trip.why == "preaching":  # (not the doctrine's name: a listener may repeat what it is told one does)
        return (f"spread the word at {trip.place}", f"spread the word in {trip.town}", "spread the word")
    if trip.why == "people" and trip.people:
        return (f"visit {trip.people[0]} in {trip.town}", f"visit {trip.people[0].split()[0]} in {trip.town}",
                f"visit friends in {trip.town}")
    return (f"go to the market at {trip.place}", f"go to the market in {trip.town}", "go to market")
