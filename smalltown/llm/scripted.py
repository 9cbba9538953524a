"""The scripted backend: deterministic answers computed from a task's inputs, no model.

It is plain but plausible: routines from the persona, places chosen by matching the words of
the activity against the options. Same seed and inputs, same answers.
"""

from __future__ import annotations

import re
from datetime import datetime

from smalltown.llm.backend import Answer
from smalltown.llm.routine import leisure, read_routine
from smalltown.seeded import stable_int
from smalltown.llm.tasks import (
    Block,
    ChoosePlace,
    ChoosePlaceOut,
    DailyPlan,
    DailyPlanOut,
    HourlySchedule,
    HourlyScheduleOut,
    ObjectState,
    ObjectStateOut,
    Output,
    Task,
)

# activity word -> words of places where it is done
LEXICON: dict[str, tuple[str, ...]] = {
    "sleep": ("bed", "bedroom", "room"), "sleeping": ("bed", "bedroom", "room"),
    "bed": ("bed", "bedroom", "room"), "nap": ("bed", "sofa", "couch"),
    "morning": ("bathroom", "shower", "sink"),
    "shower": ("bathroom", "shower"), "wash": ("bathroom", "sink"),
    "breakfast": ("kitchen", "table", "dining"), "lunch": ("kitchen", "table", "dining", "seating"),
    "dinner": ("kitchen", "table", "dining", "stove"), "cook": ("kitchen", "stove"),
    "eat": ("kitchen", "table", "dining", "seating"), "meal": ("kitchen", "table", "dining"),
    "coffee": ("cafe", "seating", "coffee", "table"), "drink": ("pub", "bar", "table", "tables"),
    "drinks": ("pub", "bar", "counter"), "chat": ("seating", "table", "common", "tables"),
    "class": ("classroom", "desks", "desk", "student"), "classes": ("classroom", "desks", "student"),
    "teach": ("classroom", "lecture", "blackboard", "podium"), "lectures": ("library", "desk", "office", "table"),
    "study": ("library", "desk", "table"), "research": ("library", "desk", "office", "table"),
    "read": ("library", "bookshelf", "armchair", "sofa", "couch", "chair", "desk"), "book": ("library", "bookshelf", "table"),
    "serve": ("counter", "behind", "bar", "cafe", "pub"), "open": ("counter", "behind", "cashier"),
    "customers": ("counter", "behind", "cashier", "cafe"), "counter": ("counter", "cashier", "behind"),
    "buy": ("shelves", "grocery", "store", "market"), "groceries": ("shelves", "grocery", "store"),
    "browse": ("shelves", "store", "supply"), "shop": ("shelves", "store", "shop"),
    "walk": ("park", "garden", "path", "bench"),
    "relax": ("common", "living", "sofa", "couch", "armchair", "chair", "bench", "room", "bed"),
    "paint": ("studio", "easel"), "painting": ("studio", "easel"), "painter": ("studio", "easel"),
    "write": ("desk", "study"), "writing": ("desk", "study"), "novel": ("desk", "study"), "writer": ("desk",),
    "poem": ("desk",), "poetry": ("desk",), "poet": ("desk",), "book's": ("desk",),
    "software": ("desk", "computer"), "engineer": ("desk", "computer"), "code": ("desk", "computer"),
    "music": ("piano", "music", "desk"), "composition": ("piano", "music", "desk"),
    "photo": ("studio", "camera", "park"), "photography": ("studio", "camera"), "photographer": ("studio",),
    "animation": ("studio", "desk", "computer"), "animator": ("studio", "desk"), "artist": ("studio", "easel", "desk"),
    "actor": ("common", "stage", "studio"), "rehearse": ("common", "stage"), "comedian": ("common", "stage"),
    "campaign": ("desk", "living", "office", "table"), "mayor": ("desk", "office"),
    "law": ("desk", "office"), "lawyer": ("desk", "office"), "tax": ("desk", "office"),
    "mathematician": ("desk",), "math": ("desk",), "philosopher": ("desk", "study"), "philosophy": ("desk",),
    "house": ("garden", "living", "kitchen"), "garden": ("garden",), "tend": ("garden",),
    "work": ("desk", "counter", "studio", "office", "shelves"),
}
HOME_WORDS = ("sleep", "sleeping", "morning routine", "breakfast", "dinner", "at home", "bed")
STOP = {"a", "an", "the", "at", "in", "on", "of", "and", "to", "for", "with", "up", "his", "her", "their"}
_WORD = re.compile(r"[a-z']+")

OBJECT_STATES: tuple[tuple[str, str, str], ...] = (
    # (object word, activity word or "", state)
    ("bed", "sleep", "being slept in"),
    ("bed", "", "in use"),
    ("stove", "", "cooking"),
    ("coffee", "", "brewing coffee"),
    ("shower", "", "running"),
    ("toilet", "", "occupied"),
    ("sink", "", "running water"),
    ("piano", "", "being played"),
    ("easel", "", "holding a painting in progress"),
    ("refrigerator", "", "open"),
    ("bar", "", "busy with orders"),
    ("counter", "serve", "busy with customers"),
    ("desk", "", "covered in work"),
    ("table", "", "in use"),
    ("shelves", "", "being browsed"),
    ("bench", "", "occupied"),
)


def words(text: str) -> list[str]:
    return [w.removesuffix("'s") for w in _WORD.findall(text.lower()) if w not in STOP]


class ScriptedBackend:
    name = "scripted"
    model = "scripted"

    def __init__(self, seed: int = 0):
        self.seed = seed

    def answer(self, task: Task, prompt: str) -> Answer:
        handler = {
            DailyPlan: self._daily_plan,
            HourlySchedule: self._hourly,
            ChoosePlace: self._choose_place,
            ObjectState: self._object_state,
        }[type(task)]
        out: Output = handler(task)
        return Answer(output=out, raw=out.model_dump_json())

    # --- planning ---------------------------------------------------------------------------

    def _day(self, task: DailyPlan | HourlySchedule) -> tuple[list[tuple[int, int, str]], int]:
        """(start minute, minutes, activity) for the waking day, and the wake-up hour."""
        p = task.persona
        r = read_routine(p.name, p.description, p.home, task.known_places)
        roll = stable_int(self.seed, p.name, task.date)
        wake = 6 + roll % 2 + (1 if r.role == "student" else 0) + (2 if r.role == "bartender" else 0)
        bed_min = 22 * 60 + 30 * (roll // 7 % 4)  # 22:00 .. 23:30
        others = [s for s in task.known_places if s not in (p.home, r.workplace)]
        outings = [a for a in map(leisure, others) if a]
        outing = outings[roll // 11 % len(outings)] if outings else "read a book at home"
        cafes = [s for s in others if "cafe" in s.lower()]
        at_home = r.workplace == p.home
        if at_home:
            lunch = "have lunch at home"
        elif cafes and roll // 13 % 2:
            lunch = f"have lunch at {cafes[0]}"
        else:
            lunch = f"eat lunch at {r.workplace}"
        blocks: list[tuple[int, int, str]] = []

        def add(end: int, activity: str) -> None:
            start = blocks[-1][0] + blocks[-1][1] if blocks else wake * 60
            if end > start:
                blocks.append((start, end - start, activity))

        t = wake * 60
        add(t + 60, "wake up and complete the morning routine")
        add(t + 90, "eat breakfast at home")
        if r.role == "bartender":
            add(12 * 60, "tidy up the house at home")
            add(13 * 60, "have lunch at home")
            add(15 * 60, outing)
            add(16 * 60, "cook and eat an early dinner at home")
            add(bed_min, r.work(p.home, afternoon=False))
        else:
            add(12 * 60, r.work(p.home, afternoon=False))
            add(13 * 60, lunch)
            add(17 * 60, r.work(p.home, afternoon=True))
            add(18 * 60 + 30, outing)
            add(19 * 60 + 30, "cook and eat dinner at home")
            add(bed_min, "relax at home and read")
        add(24 * 60, "sleeping")
        return blocks, wake

    def _daily_plan(self, task: DailyPlan) -> DailyPlanOut:
        blocks, wake = self._day(task)
        items = [f"{a} at {_clock(s)}" for s, _, a in blocks]
        # broad strokes: merge to at most 8 items
        while len(items) > 8:
            items.pop(len(items) // 2)
        return DailyPlanOut(wake_up_hour=wake, items=items)

    def _hourly(self, task: HourlySchedule) -> HourlyScheduleOut:
        blocks, _ = self._day(task)
        return HourlyScheduleOut(blocks=[Block(start=_hhmm(s), minutes=m, activity=a) for s, m, a in blocks])

    # --- places -----------------------------------------------------------------------------

    def _choose_place(self, task: ChoosePlace) -> ChoosePlaceOut:
        act = task.activity.lower()
        opts = task.options
        if task.level == "sector":
            named = sorted((o for o in opts if o.lower() in act), key=len, reverse=True)
            if named:
                return ChoosePlaceOut(choice=named[0])
            if any(w in act for w in HOME_WORDS) and task.persona.home in opts:
                return ChoosePlaceOut(choice=task.persona.home)
            current = task.current.split(":")[0].strip()
            if current in opts:
                return ChoosePlaceOut(choice=current)
            return ChoosePlaceOut(choice=task.persona.home if task.persona.home in opts else opts[0])
        first = task.persona.name.split()[0].lower()
        act_words = words(task.activity)
        current_last = task.current.split(":")[-1].strip()
        restful = any(w in act_words for w in ("sleep", "sleeping", "nap", "relax", "rest", "bed"))
        eating = any(w in act_words for w in ("eat", "lunch", "breakfast", "dinner", "coffee", "meal", "drink"))
        away = not task.within.removeprefix("in ").startswith(task.persona.home)

        def score(option: str) -> tuple[float, int]:
            ow = words(option)
            matched = set(ow) & set(act_words)
            s = 3.0 * len(matched)
            for w in act_words:
                for place_word in LEXICON.get(w, ()):
                    hits = [o for o in ow if place_word in o]  # "room" fits "bedroom"
                    if hits:
                        s += 1
                        matched.update(hits)
            s -= 0.25 * len(set(ow) - matched)  # "cafe" fits "serve at the cafe" better than "cafe kitchen"
            low = option.lower()
            if "'s" in low:
                if first not in low:
                    s -= 4  # someone else's room or bed
                elif restful:
                    s += 2  # one's own room, to sleep or rest
            if away and "kitchen" in ow and eating:
                s -= 2  # away from home one eats where the guests sit, not in the staff kitchen
            # staying in the current area only breaks ties
            return (s, option == current_last, -(stable_int(self.seed, task.persona.name, task.activity, option) % 1000))

        return ChoosePlaceOut(choice=max(opts, key=score))

    def _object_state(self, task: ObjectState) -> ObjectStateOut:
        obj, act = words(task.object), task.activity.lower()
        for word, cue, state in OBJECT_STATES:
            # whole words ("bed" is not in "bedside table"), plurals too ("pub tables")
            if (word in obj or word + "s" in obj) and (not cue or cue in act):
                return ObjectStateOut(state=state)
        return ObjectStateOut(state="in use")


def _hhmm(minute: int) -> str:
    return f"{minute // 60 % 24:02d}:{minute % 60:02d}"


def _clock(minute: int) -> str:
    return datetime(2000, 1, 1, minute // 60 % 24, minute % 60).strftime("%-I:%M %p").lower()
