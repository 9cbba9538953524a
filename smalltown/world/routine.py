"""An agent's usual day as data: the rules a routine keeps, its items' lengths from their starts,
and, for an agent whose world file gives none, a routine read from its description.

A routine is a list of items in order of their start; each lasts until the next one starts and
the last until the first starts on the next day (it wraps round midnight). The reading of a
description is generic English (an occupation, a workplace named beside a work cue, a role, a
project, the public places the agent knows): it names no world's people, places or events. It is
fixed: the same description always gives the same routine (a planner may vary it day to day).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Iterable, Sequence

from smalltown.lang import hhmm
from smalltown.world.model import DAY, ROUTINE_KINDS, SLEEPING, RoutineItem
from smalltown.world.names import suggestion

MIN_ITEMS = 3
MAX_ITEMS = 48
ACTIVITY_MAX = 60  # a plan block's activity is at most this long
STEP_MAX = 60
MAX_STEPS = 20


def minute(start: str) -> int:
    """"07:30" -> 450."""
    h, _, m = start.partition(":")
    return int(h) * 60 + int(m)


def with_lengths(items: Sequence[RoutineItem]) -> tuple[RoutineItem, ...]:
    """The items with their `minutes`: each lasts until the next one's start, the last until the
    first's start on the next day. Items must be in order of their start (see `problems`)."""
    out = []
    for i, it in enumerate(items):
        nxt = minute(items[(i + 1) % len(items)].start)
        out.append(replace(it, minutes=(nxt - minute(it.start)) % DAY or DAY))
    return tuple(out)


# --- the rules --------------------------------------------------------------------------------


def problems(items: Sequence[RoutineItem], home: str, knows: Iterable[str],
             sectors: Iterable[str] | None = None) -> list[tuple[int | None, str]]:
    """What breaks the rules of a routine, each as (the item's index or None for the whole
    routine, message). `knows` are the sectors the agent knows (its home is added); `sectors`
    all the world's sectors, to tell an unknown place from one the agent does not know."""
    out: list[tuple[int | None, str]] = []
    known = {home, *knows}
    every = set(sectors) if sectors is not None else None
    if len(items) < MIN_ITEMS:
        out.append((None, f"a routine has at least {MIN_ITEMS} items (the whole day, from waking to "
                          f"sleeping), this one has {len(items)}"))
    if len(items) > MAX_ITEMS:
        out.append((None, f"a routine has at most {MAX_ITEMS} items, this one has {len(items)}"))
    sleeps = [i for i, it in enumerate(items) if it.kind == "sleep"]
    if items and not sleeps:
        out.append((None, 'no item of kind "sleep": a routine has exactly one, e.g. '
                          '{ start = "22:30", kind = "sleep" }'))
    for i in sleeps[1:]:
        out.append((i, f'a second item of kind "sleep" (the first starts at {items[sleeps[0]].start}): '
                       f'a routine has exactly one; make a nap kind "leisure"'))
    for i, it in enumerate(items):
        at = f"the item at {it.start}"
        if it.kind not in ("", *ROUTINE_KINDS):
            out.append((i, f"{at}: unknown kind {it.kind!r} (one of {', '.join(ROUTINE_KINDS)}, or none)"))
        if i and minute(it.start) <= minute(items[i - 1].start):
            out.append((i, f"{at} does not start after the item before it ({items[i - 1].start}): items "
                           f"are listed in order of their start, each lasting until the next one"))
        if not it.activity.strip():
            out.append((i, f'{at}: activity is missing (it may be left out only for kind "sleep")'))
        elif len(it.activity) > ACTIVITY_MAX or "\n" in it.activity:
            out.append((i, f"{at}: activity must be one line of at most {ACTIVITY_MAX} characters"))
        if it.activity.strip().lower() == SLEEPING and it.kind != "sleep":
            out.append((i, f'{at}: the activity "{SLEEPING}" is the item of kind "sleep" (add kind = "sleep")'))
        if it.kind == "sleep" and it.activity.strip().lower() != SLEEPING:
            out.append((i, f'{at}: an item of kind "sleep" has the activity "{SLEEPING}" (or leaves it out), '
                           f'not {it.activity!r}'))
        if it.kind == "sleep" and it.steps:
            out.append((i, f"{at}: sleeping has no steps (it is never broken into actions)"))
        if len(it.steps) > MAX_STEPS:
            out.append((i, f"{at}: at most {MAX_STEPS} steps, not {len(it.steps)}"))
        for s in it.steps:
            if not s.strip() or len(s) > STEP_MAX or "\n" in s:
                out.append((i, f"{at}: step {s!r} must be one line of 1 to {STEP_MAX} characters"))
        if it.place and it.place not in known:
            if every is not None and it.place not in every:
                out.append((i, f"{at}: unknown place {it.place!r} (no such sector; a routine names "
                               f"sectors, not arenas)" + suggestion(it.place, every)))
            else:
                out.append((i, f"{at}: place {it.place!r} is not a sector the agent knows (its home or "
                               f"one of `knows`)"))
    return out


# --- reading a description --------------------------------------------------------------------

# a phrase that names a place and one of these words says where the agent works
WORK_CUES = re.compile(
    r"\b(works?|working|runs|owns|owner|student|professor|teaches|teacher|lecturer|shopkeeper|"
    r"bartender|barista|studies|colleagues?|employed|manages|manager|cashier|clerk|job|nurse|doctor|"
    r"waiter|waitress|chef|cook|baker|librarian|mechanic|serves)\b", re.I)
_OCCUPATION = re.compile(r"\bis (?:an? |the )?(.+?)(?= who\b| at\b| and\b| in\b| with\b| for\b| of\b| \w+ing\b|,|;|$)")
_PROJECT = re.compile(r"\b(?:working on|works on|writing|is composing|is preparing) (.+?)"
                      r"(?= at\b| for\b| in\b| with\b| while\b| because\b|,|;|$)", re.I)
_STUDENT = re.compile(r"\b(student|studies|studying)\b", re.I)
_TEACHER = re.compile(r"\b(professor|teacher|teaches|lecturer|tutor)\b", re.I)
_NIGHT = re.compile(r"\b(bartender|night nurse|night watch\w*|until closing)\b", re.I)  # in the work phrase
_LATE = re.compile(r"\b(sleeps late|night shift|works nights|late shift)\b", re.I)  # anywhere
_BAR = re.compile(r"\b(pub|bar|tavern|inn|nightclub)\b", re.I)  # in the workplace's name
_OWNER = re.compile(r"\b(runs|owns|owner|manages|manager|proprietor)\b", re.I)
_EMPLOYED = re.compile(r"\b(works? at|works? as|worker|employed|job|clerk|cashier|shopkeeper|barista|"
                       r"assistant|nurse|doctor|waiter|waitress|chef|cook|baker|librarian|mechanic)\b", re.I)
_RETIRED = re.compile(r"\bretired\b", re.I)
_CAFE = re.compile(r"\b(cafe|café|coffee|bakery|tea ?room|diner|restaurant|bistro|canteen)\b", re.I)
_SHOP = re.compile(r"\b(store|shop|market|pharmacy|grocer\w*|supply|supplies|hardware|books(?:hop)?|"
                   r"boutique|bakery|florist|butcher)\b", re.I)


@dataclass(frozen=True)
class Role:
    """What a description says about an agent's working day."""

    role: str  # student, teacher, night, owner, worker, project, home, retired
    workplace: str  # a sector (the home for those who work at home)
    occupation: str  # "pharmacy shopkeeper" ("" when the description does not say)
    project: str  # "his research paper" ("" when none)


def phrases(description: str) -> list[str]:
    return [p.strip() for p in description.split(";") if p.strip()]


def read_role(description: str, home: str, places: Sequence[str]) -> Role:
    """The role, workplace, occupation and project a description gives in generic English: the
    workplace is the first known sector (not the home) named in a phrase with a work cue."""
    parts = phrases(description)
    text = " ".join(parts)
    m = _OCCUPATION.search(parts[0]) if parts else None
    occupation = m.group(1).strip() if m else ""
    project = ""
    for p in parts:
        pm = _PROJECT.search(p)
        if pm:
            project = pm.group(1).strip().rstrip(".")
            break
    if project and not re.match(r"(?i)(his|her|their|its|my|a|an|the)\b", project):
        project = "the " + project
    workplace, phrase = home, parts[0] if parts else ""
    for p in parts:
        named = sorted((s for s in places if s != home and s.lower() in p.lower()), key=len, reverse=True)
        if named and WORK_CUES.search(p.replace(named[0], " ")):
            workplace, phrase = named[0], p
            break
    away = workplace != home
    if not away and _RETIRED.search(text):
        role = "retired"
    elif _STUDENT.search(phrase) and (away or not project):
        role = "student"
    elif _TEACHER.search(phrase):
        role = "teacher"
    elif away and (_NIGHT.search(phrase) or _BAR.search(workplace) or _LATE.search(text)):
        role = "night"
    elif away and _OWNER.search(phrase):
        role = "owner"
    elif away and _EMPLOYED.search(phrase):
        role = "worker"
    elif away and project:
        role = "project"  # works on something of its own, at a place it names
    elif away:
        role = "worker"
    else:
        role = "home"
    return Role(role, workplace, occupation, project)


def fit(text: str, n: int = ACTIVITY_MAX) -> str:
    """At most n characters, cut at a word boundary."""
    text = " ".join(text.split())
    if len(text) <= n:
        return text
    cut = text[:n]
    if text[n] != " " and " " in cut:
        cut = cut.rsplit(" ", 1)[0]
    return cut.rstrip(" ,;:")


# Leisure at a public place, by the words of its name: (pattern, activity, steps).
_LEISURE: tuple[tuple[re.Pattern[str], str, tuple[str, ...]], ...] = tuple(
    (re.compile(rf"\b({words})\b", re.I), activity, steps) for words, activity, steps in (
        ("park|garden|gardens|green|common|woods", "take a walk in the park",
         ("walk along the paths", "sit on a bench and watch people", "stretch the legs", "set off slowly for home")),
        ("cafe|café|coffee|tea ?room|bakery|bistro", "have a coffee and chat with friends",
         ("order a coffee at the counter", "sit at a table with the coffee", "chat with people nearby",
          "pay and say goodbye")),
        ("pub|bar|tavern|inn", "have a drink with friends",
         ("order a drink at the bar", "chat with the regulars", "play a round of darts", "say goodnight")),
        ("market|grocer\\w*|supermarket|pharmacy", "buy groceries",
         ("pick up a basket", "browse the shelves", "choose fresh produce", "pay at the counter")),
        ("store|shop|shops|supply|hardware|bookshop|bookstore", "browse the shop",
         ("browse the shelves", "ask the shopkeeper a question", "pay at the counter")),
        ("library|college|university|school", "read in the library",
         ("find a book on the shelves", "read at a table", "take notes")),
        ("square|plaza|beach|harbour|harbor|pier|river|lake", "take a stroll and watch the town",
         ("walk around and look about", "sit on a bench and watch people", "say hello to neighbours")),
        ("church|chapel|temple|mosque|synagogue", "visit and sit quietly",
         ("sit quietly", "talk with the people there")),
        ("gym|pool|sports|stadium|field", "exercise",
         ("warm up", "work out", "cool down and stretch")),
    ))


def leisure(place: str) -> tuple[str, tuple[str, ...]] | None:
    """What one does for pleasure at a public place (by the words of its name), with its steps."""
    for pattern, activity, steps in _LEISURE:
        if pattern.search(place):
            return activity, steps
    return None


# Steps that need an object: kept only when the home has an object whose name has the word.
_NEEDS = {"toilet": "toilet", "shower": "shower", "bath": "bath", "bed": "bed", "closet": "closet",
          "stove": "stove", "table": "table", "sink": "sink", "sofa": "sofa", "desk": "desk",
          "refrigerator": "refrigerator", "television": "television", "bookshelf": "bookshelf"}
MORNING_STEPS = ("get out of bed and stretch", "use the toilet", "take a shower", "brush teeth at the sink",
                 "get dressed", "make the bed")
BREAKFAST_STEPS = ("make breakfast at the stove", "eat breakfast at the table", "wash the dishes at the sink")
LUNCH_HOME_STEPS = ("make lunch at the stove", "eat lunch at the table", "wash the dishes at the sink")
LUNCH_OUT_STEPS = ("take a lunch break", "eat lunch", "chat with others over lunch")
DINNER_STEPS = ("take food out of the refrigerator", "cook dinner at the stove", "eat dinner at the table",
                "wash the dishes at the sink")
EVENING_STEPS = ("tidy up the kitchen", "relax on the sofa", "read a book from the bookshelf",
                 "brush teeth at the sink")
CHORE_STEPS = ("tidy up the living room", "do the laundry", "water the plants", "sweep the floor",
               "take out the trash")
WORK_STEPS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    # role: (morning steps, afternoon steps)
    "student": (("go to the classroom", "find a seat in class", "listen to the lecture", "take notes in class",
                 "ask the teacher a question", "talk over the lecture with classmates", "pack up the books"),
                ("find a quiet place to study", "read the course material", "work through the exercises",
                 "review the lecture notes", "write up the homework", "pack up the books")),
    "teacher": (("set up the classroom", "teach the class", "write on the blackboard",
                 "answer the students' questions", "hand out the assignment", "pack up the lecture notes"),
                ("sit down at the desk", "grade the students' papers", "prepare the next lecture",
                 "read up on the subject", "answer students' emails", "tidy the desk")),
    "cafe": (("unlock the door and turn on the lights", "brew the first pot of coffee", "set out the pastries",
              "serve the morning customers at the counter", "make coffee orders", "wipe down the tables",
              "wash the cups"),
             ("serve customers at the counter", "make coffee orders", "restock the pastries",
              "wipe down the tables", "sweep the floor", "count the till and close up")),
    "shop": (("open the shop and turn on the lights", "check the stock on the shelves",
              "help customers find what they need", "ring up purchases at the counter", "restock the shelves",
              "answer customers' questions"),
             ("help customers at the counter", "unpack a delivery", "restock the shelves",
              "ring up purchases at the counter", "tidy the shelves", "count the till and close up")),
    "night": (("set up behind the bar", "stock the fridges with drinks", "serve drinks at the bar",
               "mix drinks for the regulars", "chat with the customers", "collect empty glasses",
               "wash glasses behind the bar", "wipe down the bar and close up"),
              ()),
}


def _keep(steps: Iterable[str], objects: frozenset[str] | None) -> tuple[str, ...]:
    """The steps whose object (a word of `_NEEDS`) the home has; all of them when unknown."""
    if objects is None:
        return tuple(steps)
    names = " ".join(objects).lower()
    out = []
    for s in steps:
        need = [w for w in _NEEDS if re.search(rf"\b{w}\b", s)]
        if all(re.search(rf"\b{_NEEDS[w]}", names) for w in need):
            out.append(s)
    return tuple(out)


def derive(description: str, home: str, knows: Sequence[str],
           home_objects: Iterable[str] | None = None) -> tuple[RoutineItem, ...]:
    """A routine for an agent whose world file gives none, read from its description: waking,
    breakfast, a morning's and an afternoon's work (at the workplace it names, or at home),
    lunch, an outing to a public place it knows, dinner, an evening at home and sleep. Steps are
    given where the role makes them obvious (and, for the home, where it has the objects)."""
    places = [s for s in dict.fromkeys([home, *knows])]
    r = read_role(description, home, places)
    objects = frozenset(home_objects) if home_objects is not None else None
    away = r.workplace != home
    work_place = r.workplace if away else ""
    outings = [(s, x) for s in places if s not in (home, r.workplace) for x in [leisure(s)] if x]
    first = outings[0] if outings else None
    second = outings[1] if len(outings) > 1 else first

    def item(start: str, activity: str, kind: str, place: str = "", steps: Iterable[str] = ()) -> RoutineItem:
        return RoutineItem(start, 0, fit(activity), place, kind, tuple(fit(s, STEP_MAX) for s in steps))

    def outing(at: tuple[str, tuple[str, tuple[str, ...]]] | None, start: str) -> RoutineItem:
        if at is None:
            return item(start, "take a walk around the neighbourhood", "leisure")
        return item(start, at[1][0], "leisure", at[0], at[1][1])

    def home_work(afternoon: bool) -> tuple[str, tuple[str, ...]]:
        if r.project:
            return f"work on {r.project}", ()
        if r.role == "student" or _STUDENT.search(r.occupation):
            return ("study at home", WORK_STEPS["student"][1])
        if r.occupation and len(r.occupation) < 40:
            art = "an" if r.occupation[:1].lower() in "aeiou" else "a"
            return (f"work as {art} {r.occupation}", ())
        return ("get on with the day's work" if afternoon else "work at home"), ()

    morning = item("", "wake up and get ready for the day", "morning", "", _keep(MORNING_STEPS, objects))
    breakfast = item("", "have breakfast", "meal", "", _keep(BREAKFAST_STEPS, objects))
    dinner = item("18:30", "cook and eat dinner", "meal", "", _keep(DINNER_STEPS, objects))
    evening = item("19:30", "relax at home", "evening", "", _keep(EVENING_STEPS, objects))
    sleep = item("22:30", SLEEPING, "sleep")

    if r.role == "night":
        work = WORK_STEPS["night"][0] if _BAR.search(r.workplace) or "bartender" in r.occupation.lower() else ()
        items = [
            item("01:00", "wind down at home", "evening", "", _keep(("have a glass of water at the table",
                                                                     "brush teeth at the sink"), objects)),
            item("01:30", SLEEPING, "sleep"),
            replace(morning, start="09:30"),
            replace(breakfast, start="10:30"),
            item("11:00", "tidy up the house", "chores", "", _keep(CHORE_STEPS, objects)),
            item("13:00", "have lunch", "meal", "", _keep(LUNCH_HOME_STEPS, objects)),
            outing(first, "14:00"),
            item("15:30", "cook and eat an early dinner", "meal", "", _keep(DINNER_STEPS, objects)),
            item("16:30", "serve drinks at the bar" if work else "work the night shift", "work", work_place, work),
        ]
        return with_lengths(items)

    if r.role == "retired":
        project = (f"work on {r.project}", ()) if r.project else \
            ("tend to the house and garden", _keep(CHORE_STEPS, objects))
        items = [
            replace(morning, start="06:00"),
            replace(breakfast, start="07:00"),
            outing(first, "07:45"),
            item("09:30", project[0], "work" if r.project else "chores", "", project[1]),
            item("12:00", "have lunch", "meal", "", _keep(LUNCH_HOME_STEPS, objects)),
            item("13:00", "read and rest at home", "leisure", "",
                 _keep(("read a book from the bookshelf", "take a short nap on the sofa", "write a letter at the desk"),
                       objects)),
            outing(second, "15:00") if second is not None and second != first else
            item("15:00", "tidy up the house", "chores", "", _keep(CHORE_STEPS, objects)),
            replace(dinner, start="17:30"),
            replace(evening, start="18:30"),
            replace(sleep, start="22:00"),
        ]
        return with_lengths(items)

    wake, start, back, end, bed = {
        "owner": ("06:00", "07:30", "12:30", "18:00", "22:00"),
        "student": ("07:30", "09:00", "13:00", "16:30", "23:30"),
        "teacher": ("06:30", "08:30", "13:00", "17:00", "22:30"),
        "worker": ("06:30", "08:00", "13:00", "17:00", "22:30"),
    }.get(r.role, ("07:00", "08:30", "13:00", "17:00", "22:30"))
    if r.role == "student" and away:
        am = ("attend classes", WORK_STEPS["student"][0])
        pm = (f"work on {r.project}", ()) if r.project else ("study for classes", WORK_STEPS["student"][1])
    elif r.role == "teacher" and away:
        am, pm = ("teach classes", WORK_STEPS["teacher"][0]), ("grade papers and prepare lectures",
                                                             WORK_STEPS["teacher"][1])
    elif away and r.role in ("owner", "worker"):
        trade = "cafe" if _CAFE.search(r.workplace) else "shop" if _SHOP.search(r.workplace) else ""
        am_steps, pm_steps = WORK_STEPS[trade] if trade else ((), ())
        if r.role == "owner":
            am = ("open up and serve customers", am_steps)
            pm = ("serve customers and close up", pm_steps)
        else:
            am = (f"work as {'an' if r.occupation[:1].lower() in 'aeiou' else 'a'} {r.occupation}"
                  if r.occupation and len(r.occupation) < 40 else "work", am_steps)
            pm = ("get on with the afternoon's work", pm_steps)
    elif away:  # a project of its own, at a place it names
        am = pm = (f"work on {r.project}", ())
    else:
        am, pm = home_work(False), home_work(True)
    lunch = item("12:00", "have lunch", "meal", work_place,
                 LUNCH_OUT_STEPS if away else _keep(LUNCH_HOME_STEPS, objects))
    items = [
        replace(morning, start=wake),
        replace(breakfast, start=hhmm(min(minute(wake) + 60, minute(start) - 30))),
        item(start, am[0], "work", work_place, am[1]),
        lunch,
        item(back, pm[0], "work", work_place, pm[1]),
        outing(first, end),
    ]
    if minute(end) >= minute("18:00"):
        items += [replace(dinner, start="19:00"), replace(evening, start="20:00")]
    else:
        items += [dinner, evening]
    items.append(replace(sleep, start=bed))
    return with_lengths(items)
