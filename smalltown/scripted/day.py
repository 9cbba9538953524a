"""An agent's day as the stand-in plans it: the persona's routine (world data) laid minute by
minute over the day, then bent by what the task declares about today in typed form: the
gatherings the agent knows of, the inner voices that still stand, a reaction to do first.

Every time and place here comes from typed inputs (routine items, a gathering's start and end,
an intention's time, `from_time`, the place of the block lived last), so the shape of the day
never depends on prose the mind wrote. The only text read is world data and the user's own
words of an inner voice.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache

from smalltown.llm.tasks import SLEEPING, Block, PersonaCard, Record, Trip
from smalltown.scripted import trips as travel
from smalltown.scripted.words import fit, minute, minute_of
from smalltown.seeded import stable_int
from smalltown.world.model import DAY, Gathering, RoutineItem

ACT = 60  # Block.activity and PlanStep.activity max_length

# The usual day of someone whose world gives no routine: generic, no place but home.
DEFAULT_ROUTINE: tuple[RoutineItem, ...] = (
    RoutineItem("23:00", 480, SLEEPING, "", "sleep"),
    RoutineItem("07:00", 45, "wake up and get ready for the day", "", "morning"),
    RoutineItem("07:45", 30, "eat breakfast", "", "meal"),
    RoutineItem("08:15", 225, "work at home", "", "work"),
    RoutineItem("12:00", 60, "have lunch", "", "meal"),
    RoutineItem("13:00", 240, "get on with the afternoon's work", "", "work"),
    RoutineItem("17:00", 90, "go for a walk", "", "leisure"),
    RoutineItem("18:30", 60, "cook and eat dinner", "", "meal"),
    RoutineItem("19:30", 150, "relax at home", "", "leisure"),
    RoutineItem("22:00", 60, "get ready for bed", "", "evening"),
)
FILL = RoutineItem("00:00", 60, "relax at home", "", "leisure")  # a long gap in a sparse routine
FREE_KINDS = ("work", "leisure", "chores", "")  # where a new intention may go on a fresh day


@dataclass(frozen=True)
class Label:
    """What a minute of the day is given to."""

    activity: str
    place: str  # a sector ("" = home)
    source: str  # routine | fill | gathering | intention | reaction | plan
    kind: str = ""


@dataclass
class Span:
    start: int
    minutes: int
    label: Label

    @property
    def end(self) -> int:
        return self.start + self.minutes


def routine(p: PersonaCard) -> tuple[RoutineItem, ...]:
    return routine_of(p.routine)


def routine_of(items: tuple[RoutineItem, ...]) -> tuple[RoutineItem, ...]:
    """A persona's routine as the day is laid out from it: the default day if it gives none."""
    return items or DEFAULT_ROUTINE


def act(text: str) -> str:
    """A plan activity as a block shows it (at most 60 characters)."""
    return fit(text, ACT) or "-"


def item_for(p: PersonaCard, activity: str) -> RoutineItem | None:
    """The routine item whose activity this is (by equality: a block's activity is the routine's
    own words when the day came from the routine)."""
    for it in routine(p):
        if act(it.activity) == activity or it.activity == activity:
            return it
    return FILL if activity == FILL.activity else None


def routine_minutes(p: PersonaCard) -> list[Label | None]:
    """The routine laid over the day's 1440 minutes (an item past midnight wraps round; a later
    item overwrites an earlier one where they overlap; gaps are filled). A fresh list each call."""
    return list(_routine_minutes(routine(p)))


# keyed by the routine (world data), not the persona, whose summary changes every day: one
# entry per distinct routine, so a town of 500 does not evict its own days
@lru_cache(maxsize=4096)
def _routine_minutes(routine_items: tuple[RoutineItem, ...]) -> tuple[Label | None, ...]:
    day: list[Label | None] = [None] * DAY
    items = sorted(routine_items, key=lambda it: (it.kind != "sleep", minute(it.start)))
    if not any(it.kind == "sleep" or it.activity == SLEEPING for it in items):
        items = [DEFAULT_ROUTINE[0], *items]
    for it in items:
        lab = Label(act(SLEEPING if it.kind == "sleep" else it.activity), it.place, "routine", it.kind)
        s = minute(it.start)
        for m in range(s, s + min(DAY, max(5, it.minutes))):
            day[m % DAY] = lab
    # gaps: a short one continues what came before, a long one is free time at home
    i = 0
    while i < DAY:
        if day[i] is not None:
            i += 1
            continue
        j = i
        while j < DAY and day[j] is None:
            j += 1
        before = day[i - 1] if i > 0 else None
        fill = before if before is not None and j - i < 60 else Label(FILL.activity, "", "fill", FILL.kind)
        for m in range(i, j):
            day[m] = fill
        i = j
    return tuple(day)


def wake_minute(p: PersonaCard) -> int:
    """When the routine's night sleep ends (the sleep that covers the small hours)."""
    day = _routine_minutes(routine(p))
    if day[0] is None or day[0].activity != SLEEPING:
        first_sleep = next((m for m in range(DAY) if day[m] and day[m].activity == SLEEPING), None)
        if first_sleep is None or first_sleep > 12 * 60:
            return 7 * 60
        m = first_sleep
    else:
        m = 0
    while m < DAY and day[m] is not None and day[m].activity == SLEEPING:
        m += 1
    return min(max(m, 3 * 60), 12 * 60 + 59)


def spans(day: list[Label | None], start: int = 0, end: int = DAY) -> list[Span]:
    out: list[Span] = []
    for m in range(start, end):
        lab = day[m]
        if lab is None:
            continue
        # (a run of minutes mostly holds the one Label: `is` spares comparing its fields)
        if out and out[-1].end == m and (out[-1].label is lab or out[-1].label == lab):
            out[-1].minutes += 1
        else:
            out.append(Span(m, 1, lab))
    return out


# --- what bends the day -------------------------------------------------------------------------


def the(name: str) -> str:
    """"New Year's party" -> "the New Year's party"; a name with its own article is
    left alone."""
    return name if name.lower().startswith(("the ", "a ", "an ", "my ", "our ")) else "the " + name


def sector(place: str) -> str:
    return place.split(":")[0].strip()


def gathering_labels(p: PersonaCard, g: Gathering) -> list[tuple[int, int, Label]]:
    """(start, end, label) for a gathering today: its host prepares the place for an hour first
    and hosts it; a guest goes to it."""
    where = sector(g.place)
    s, e = minute_of(g.start), minute_of(g.end) if g.end.date() == g.start.date() else DAY
    e = max(e, s + 15)
    name = the(g.name)
    if g.host == p.name:
        host = _fit_first((f"host {name} at {where}", f"host {name}"))
        prep = _fit_first((f"prepare {where} for {name}", f"prepare for {name}"))
        return [(max(0, s - 60), s, Label(prep, where, "gathering", "prepare")),
                (s, e, Label(host, where, "gathering", "host"))]
    go = _fit_first((f"go to {name} at {where}", f"go to {name}"))
    return [(s, e, Label(go, where, "gathering", "guest"))]


def _fit_first(options: tuple[str, ...]) -> str:
    return next((o for o in options if len(o) <= ACT), act(options[-1]))


_INTENT = (
    r"^(?:you|i)(?: are|'re| am|'m) going to (.+)$",
    r"^(?:you|i) (?:will|shall|should|must|need to|have to|want to|would like to|plan to|are planning to|"
    r"am planning to|ought to|are to|intend to|mean to|are about to|am about to)\s+(.+)$",
    r"^(?:you|i)'(?:ll|d like to|d better) (.+)$",
    r"^(?:let's|let us) (.+)$",
)
_PRONOUNS = ((r"\byourself\b", "oneself"), (r"\bmyself\b", "oneself"), (r"\byour\b", "their"),
             (r"\bmy\b", "their"), (r"\byou\b", "them"), (r"\bme\b", "them"))


def intention_activity(words: str) -> str:
    """The user's own words of an inner voice as a plan activity: "You are going to paint a mural
    in the park" -> "paint a mural in the park"; "I should call Ann" -> "call Ann"."""
    text = " ".join(words.strip().split()).rstrip(".!?")
    text = re.sub(r"^(?:thought|inner voice)\s*:\s*", "", text, flags=re.I)
    for pat in _INTENT:
        m = re.match(pat, text, re.I)
        if m:
            text = m.group(1)
            break
    else:
        m = re.match(r"^(?:you|i)(?: are|'re| am|'m) (.+)$", text, re.I)
        if m:
            text = f"think about being {m.group(1)}"
        elif re.match(r"^(?:you|i)\b", text, re.I):
            text = f"think about it: {text}"
    for pat, rep in _PRONOUNS:
        text = re.sub(pat, rep, text, flags=re.I)
    if text[1:2].islower():
        text = text[:1].lower() + text[1:]
    return act(text)


def named_place(words: str, places: list[str]) -> str:
    """A known place named in the user's words: the full name, else a word of exactly one
    place's name ("by the pond" -> "<Name> Pond"); "" when none."""
    low = words.lower()
    full = sorted((pl for pl in places if pl and pl.lower() in low), key=len, reverse=True)
    if full:
        return full[0]
    said = set(re.findall(r"[a-z]+", low)) - {"the", "a", "an", "at", "in", "on", "of", "and", "to", "house",
                                                "home", "go", "going", "you", "are", "i"}
    hits = [pl for pl in places if said & set(re.findall(r"[a-z]+", pl.lower().replace("'s", "")))]
    return hits[0] if len(hits) == 1 else ""


@dataclass
class Bent:
    """The day as planned, minute by minute, and where its free morning begins."""

    day: list[Label | None]
    wake: int


def plan(seed: int, p: PersonaCard, now: datetime, known_places: list[str], gatherings: list[Gathering],
         intentions: list[Record], from_min: int | None = None, reaction: str = "",
         here: str = "", promises: list[tuple[int, int, str, str]] = (), trips: list[Trip] = ()) -> Bent:
    """The routine day bent by today's gatherings, the inner voices, a trip to another town and a
    reaction (in that order of precedence: a reaction first, then gatherings at their time, then
    intentions in the free hours, then a trip where it finds the day free, then the routine)."""
    day = routine_minutes(p)
    wake = wake_minute(p)
    gathered = [False] * DAY
    for g in gatherings:
        if g.start.date() != now.date():
            continue
        for s, e, lab in gathering_labels(p, g):
            for m in range(max(0, s), min(e, DAY)):
                day[m] = lab
                gathered[m] = True

    # inner voices: an hour each, at the next full hour after the voice (today's), not before the
    # first free slot of the morning; a voice from before today in the first free slot
    free = next((m for m in range(wake, 12 * 60) if day[m] and day[m].source in ("routine", "fill")
                 and day[m].kind in FREE_KINDS and not gathered[m]), wake + 90)
    blocked = list(gathered)
    for rec in sorted(intentions, key=lambda r: (r.time, r.id)):
        slot = max((minute_of(rec.time) // 60 + 1) * 60, free) if rec.time.date() == now.date() else free
        while slot < 23 * 60 and any(blocked[slot:slot + 60]):
            m = next(k for k in range(slot, slot + 60) if blocked[k])
            while m < DAY and blocked[m]:
                m += 1
            slot = (m + 59) // 60 * 60
        if slot >= 23 * 60:
            continue
        where = named_place(rec.text, known_places)
        if not where:
            lab = day[slot]
            where = lab.place if lab is not None and lab.activity != SLEEPING else ""
        label = Label(intention_activity(rec.text), where, "intention", "")
        for m in range(slot, slot + 60):
            day[m] = label
            blocked[m] = True

    trip = travel.chosen(seed, p, now.date(), list(trips))
    span = travel.window(seed, p, now.date(), trip, wake) if trip is not None else None
    if span is not None and not any(blocked[max(0, span[0]):span[1]]) \
            and all(lab is not None and lab.activity != SLEEPING for lab in day[span[0]:span[1]]):
        label = Label(_fit_first(travel.activity(p, trip)), trip.place, "trip", "")
        for m in range(span[0], min(span[1], DAY)):
            day[m] = label

    for s, e, activity, where in promises:  # promises made (given with the broadcast): kept
        for m in range(s, e):
            day[m] = Label(act(activity), where, "promise", "")

    if reaction.strip() and from_min is not None:
        minutes = (15, 20, 25, 30)[stable_int(seed, p.name, from_min, "reaction") % 4]  # not by its words
        lab = day[from_min]
        where = here or (lab.place if lab is not None else "")
        label = Label(act(reaction), where, "reaction", "")
        for m in range(from_min, min(DAY, from_min + minutes)):
            day[m] = label
    return Bent(day, wake)


def place_of(label: Label, p: PersonaCard, known_places: list[str]) -> str:
    """A label's sector as a block gives it: one of the known places (home when its own place is
    not known)."""
    want = label.place or p.home
    if not known_places or want in known_places:
        return want
    return p.home if p.home in known_places else known_places[0]


def to_blocks(spans_: list[Span], p: PersonaCard, known_places: list[str], limit: int = 14) -> list[Block]:
    """Spans as schedule blocks: slivers under 5 minutes join a neighbour, neighbours with the
    same activity and place join, and the shortest routine blocks join their neighbour until the
    schedule has at most `limit` blocks."""
    rows = [[s.start, s.minutes, s.label.activity, place_of(s.label, p, known_places), s.label.source]
            for s in spans_ if s.minutes > 0]
    merged: list[list] = []
    for r in rows:
        if merged and (r[1] < 5 or (merged[-1][2] == r[2] and merged[-1][3] == r[3])):
            merged[-1][1] += r[1]
        elif merged and merged[-1][1] < 5:
            r = [merged[-1][0], merged[-1][1] + r[1], *r[2:]]
            merged[-1] = r
        else:
            merged.append(r)
    while len(merged) > limit:
        plain = [i for i, r in enumerate(merged[1:], 1) if r[4] in ("routine", "fill") and r[2] != SLEEPING]
        i = min(plain or range(1, len(merged)), key=lambda k: (merged[k][1], k))
        merged[i - 1][1] += merged[i][1]
        del merged[i]
    return [Block(start=f"{s // 60:02d}:{s % 60:02d}", minutes=max(5, min(m, 1440)), activity=a, place=pl)
            for s, m, a, pl, _ in merged]

