"""The people of a generated world: households with names, ages, traits and jobs, and the usual
day each one's job and haunts give (a routine that names the objects of its places)."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path

from smalltown.world.generate_places import FIRST_JOBS, JOBS, MORE_JOBS, Job

WORDS = Path(__file__).with_name("wordlists")
MORNING = ("get out of bed and stretch", "use the toilet", "take a shower", "brush teeth at the bathroom sink",
           "get dressed", "make the bed")
BREAKFAST = ("take milk out of the refrigerator", "make coffee at the stove", "eat breakfast at the kitchen table",
             "wash the dishes at the kitchen sink")
DINNER = ("take vegetables out of the refrigerator", "cook dinner at the stove",
          "eat dinner at the kitchen table", "wash the dishes at the kitchen sink")
EVENING = ("tidy the kitchen", "talk with the household at the kitchen table", "read a book in bed",
           "get ready for bed")
LEISURE = {"park": ("take a walk in {place}", ("walk along the path", "sit on the park bench",
                                               "look at the flower garden", "watch the fountain")),
           "library": ("read at {place}", ("browse the bookshelves", "read a novel in the armchair",
                                           "look through the papers at the reading table")),
           "cafe": ("have a coffee at {place}", ("order a coffee at the cafe counter",
                                                 "drink the coffee at the window table", "chat with a friend")),
           "bar": ("meet friends at {place}", ("order a drink at the bar counter", "play darts at the dartboard",
                                               "chat by the fireplace"))}


# the sid layout: the chance a farm person's after-work leisure is in the nearest town's square (a
# routine is one day, repeated: the share of a week's evenings becomes a share of the farm people)
TOWN_EVENINGS = 1 / 3


def words(name: str) -> list[str]:
    lines = (WORDS / name).read_text(encoding="utf-8").splitlines()
    return [ln.strip() for ln in lines if ln.strip() and not ln.startswith("#")]


@dataclass
class Person:
    first: str
    surname: str
    age: int
    town: int  # the town whose places the person uses
    household: int
    job: Job | None = None
    traits: list[str] = field(default_factory=list)
    hobby: str = ""
    partner: str = ""

    @property
    def name(self) -> str:
        return f"{self.first} {self.surname}"


def households(rng: random.Random, sizes: list[int], towns: list[int]) -> list[list[Person]]:
    """Households of the sizes given, each with a family name no other has; a couple, then
    children (or housemates, when the couple is old)."""
    firsts, surnames = words("first_names.txt"), words("surnames.txt")
    rng.shuffle(surnames)
    traits, hobbies = words("traits.txt"), words("hobbies.txt")
    out: list[list[Person]] = []
    for h, (size, town) in enumerate(zip(sizes, towns)):
        surname = surnames[h % len(surnames)]
        if h >= len(surnames):  # more households than family names: double them
            surname += "-" + surnames[(h // len(surnames) + h) % len(surnames)]
        names = rng.sample(firsts, size)
        head = rng.randint(24, 78)
        ages = [head] + ([max(20, head + rng.randint(-6, 6))] if size > 1 else [])
        for _ in range(size - len(ages)):
            ages.append(rng.randint(8, max(8, min(21, head - 20))) if head < 52 else rng.randint(22, 60))
        people = [Person(n, surname, a, town, h, traits=rng.sample(traits, 3), hobby=rng.choice(hobbies))
                  for n, a in zip(names, ages)]
        if size > 1 and rng.random() < 0.7:
            people[0].partner, people[1].partner = people[1].name, people[0].name
        out.append(people)
    return out


def assign_jobs(rng: random.Random, people: list[Person], college: bool) -> None:
    """Pupils to school, students to the college, the retired to none; the rest fill a town's
    jobs, the ones it needs first."""
    workers = []
    for p in people:
        if p.age < 18:
            p.job = JOBS["pupil"]
        elif p.age <= 21 and college:
            p.job = JOBS["student"]
        elif p.age < 67:
            workers.append(p)
    rng.shuffle(workers)
    for i, p in enumerate(workers):
        p.job = JOBS[FIRST_JOBS[i] if i < len(FIRST_JOBS) else MORE_JOBS[i % len(MORE_JOBS)]]


def hhmm(minute: int) -> str:
    minute %= 24 * 60
    return f"{minute // 60:02d}:{minute % 60:02d}"


def item(start: int, activity: str, place: str, kind: str, steps: tuple[str, ...] = ()) -> dict:
    """One routine item; leisure and an ordinary morning, meal or evening at home are left to
    the planner, without steps (a world file holds at most 1 MB: 500 agents' steps would not fit)."""
    if kind == "leisure" or (not place and kind in ("morning", "meal", "evening")):
        steps = ()
    d: dict = {"start": hhmm(start), "activity": activity, "place": place, "kind": kind, "steps": list(steps)}
    return {k: v for k, v in d.items() if v or k in ("start",)}


def farm_jobs(people: list[Person]) -> None:
    """A farm household's jobs (the sid layout): pupils to the nearest town's school, the retired to
    none, everyone else works the household's own farm (its farmyard: `places["farm"]` is its home)."""
    for p in people:
        p.job = JOBS["pupil"] if p.age < 18 else JOBS["farmer"] if p.age < 67 else None


def routine(rng: random.Random, p: Person, places: dict[str, str], farm: str = "") -> list[dict]:
    """A person's usual day: `places` maps a kind of place to the sector of it the person uses.
    `farm`: the person's own farmhouse, when the household lives off its land (the sid layout's
    rural people): lunch at home, and its leisure in the nearest town's square only at the seeded
    chance TOWN_EVENINGS, else at home on its hobby."""
    jitter = rng.choice((-30, -15, 0, 15, 30))
    haunt = rng.choice(("park", "library", "cafe", "bar"))
    fun, fun_steps = LEISURE[haunt]
    leisure = item(0, fun.format(place=places[haunt]), places[haunt], "leisure", fun_steps)
    if farm:
        if rng.random() < TOWN_EVENINGS:
            fun, fun_steps = LEISURE["park"]
            leisure = item(0, fun.format(place=places["park"]), places["park"], "leisure", fun_steps)
        else:
            leisure = item(0, f"spend time on {p.hobby}"[:60], "", "leisure")
    if p.job is None:
        return _retired(p, places, jitter, leisure, farm)
    job = p.job
    if job.start >= 12 * 60:
        return _evening_shift(job, places, leisure)
    at = places.get(job.place, "")
    start = job.start + (jitter if job.start > 6 * 60 else 0)
    wake = start - 75 if job.place else start - 120
    lunch = start + 4 * 60 if job.start < 8 * 60 + 30 else 12 * 60 + 30
    end = start + job.hours * 60
    dinner = max(end + 90, 18 * 60 + 30)
    bed = min(max(dinner + 3 * 60, 21 * 60), 23 * 60 + 30)
    day = [item(wake, "wake up and get ready", "", "morning", MORNING),
           item(wake + 30, "have breakfast", "", "meal", BREAKFAST),
           item(start, job.activity, at, "work", job.steps),
           _home_lunch(lunch) if farm and at == farm else _lunch(lunch, job, at, places["cafe"]),
           item(lunch + 60, job.activity, at, "work"),  # its steps as the morning's: left to the planner
           {**leisure, "start": hhmm(end)},
           item(dinner, "cook and eat dinner", "", "meal", DINNER),
           item(dinner + 60, f"relax at home and think about {p.hobby}"[:60], "", "evening", EVENING),
           item(bed, "", "", "sleep")]
    return [{**d, "activity": "sleeping"} if d["kind"] == "sleep" else d for d in day]


def _lunch(start: int, job: Job, at: str, cafe: str) -> dict:
    """Pupils and students eat at their school; everyone else at the town's cafe."""
    if job.title in ("pupil", "student"):
        return item(start, "eat a packed lunch", at, "meal", ("eat a packed lunch", "chat with classmates"))
    what = "have lunch in the cafe kitchen" if job.place == "cafe" else f"have lunch at {cafe}"
    return item(start, what[:60], cafe, "meal", ("order lunch at the cafe counter", "eat lunch at the cafe table"))


def _home_lunch(start: int) -> dict:
    return item(start, "have lunch at home", "", "meal", ("make soup at the stove", "eat lunch at the kitchen table"))


def _retired(p: Person, places: dict[str, str], jitter: int, leisure: dict, farm: str = "") -> list[dict]:
    wake = 7 * 60 + jitter
    park_fun, park_steps = LEISURE["park"]
    morning = item(9 * 60 + 30, park_fun.format(place=places["park"]), places["park"], "leisure", park_steps)
    if farm:  # a farm's old folk keep to the farm in the morning (the town only as their leisure goes)
        morning = item(9 * 60 + 30, "potter about the farmyard", farm, "leisure")
    return [item(wake, "wake up and get ready", "", "morning", MORNING),
            item(wake + 45, "have breakfast", "", "meal", BREAKFAST),
            morning,
            item(11 * 60 + 30, "tidy the house", "", "chores", ("wash the dishes at the kitchen sink",
                                                                 "wipe the kitchen table", "make the bed")),
            item(12 * 60 + 30, "have lunch at home", "", "meal", ("make soup at the stove",
                                                                   "eat lunch at the kitchen table")),
            {**leisure, "start": "14:00"},
            item(16 * 60 + 30, f"spend the afternoon on {p.hobby}"[:60], "", "leisure"),
            item(18 * 60 + 30, "cook and eat dinner", "", "meal", DINNER),
            item(19 * 60 + 30, "relax at home", "", "evening", EVENING),
            {"start": hhmm(22 * 60 + jitter), "activity": "sleeping", "kind": "sleep"}]


def _evening_shift(job: Job, places: dict[str, str], leisure: dict) -> list[dict]:
    at = places[job.place]
    return [{"start": "01:30", "activity": "sleeping", "kind": "sleep"},
            item(9 * 60 + 30, "wake up and get ready", "", "morning", MORNING),
            item(10 * 60, "have breakfast", "", "meal", BREAKFAST),
            {**leisure, "start": "11:00"},
            item(13 * 60, "have lunch at home", "", "meal", ("cook lunch at the stove",
                                                              "eat lunch at the kitchen table")),
            item(14 * 60, "do the chores", "", "chores", ("wash the dishes at the kitchen sink", "make the bed")),
            item(job.start, job.activity, at, "work", job.steps),
            item(20 * 60, "have supper at work", at, "meal", ("eat supper at the corner table",)),
            item(20 * 60 + 30, job.activity, at, "work", job.steps[2:] + job.steps[:2])]
