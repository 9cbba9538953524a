"""Scripted planning: the day from the persona's routine, bent by what the agent remembers about
today (an inner voice, a reaction, a dated event), its hours broken into 5-15 minute actions,
and the no-planning ablation's next action.

Context conventions (the mind relies on them):
- "Thought: You are going to ..."  -> an hour doing it, at the next full hour (re-plan) or in the
  morning work slot (a fresh day);
- "Reaction: put out the fire ..." -> the first block from `from_time`, 15-30 minutes;
- a line naming today's date and a time range ("on February 14 from 5 pm to 7 pm") -> a block
  then ("go to the Valentine's Day party at Hobbs Cafe"; its host hosts it).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import datetime

from smalltown.lang import hhmm
from smalltown.llm.routine import Routine, leisure, read_routine
from smalltown.llm.scripted_text import CONVERSATION, MONTHS, PLAN_RECORD, clip, full_names, is_activity, people
from smalltown.llm.tasks import (
    Block,
    DailyPlan,
    DailyPlanOut,
    Decompose,
    DecomposeOut,
    HourlySchedule,
    HourlyScheduleOut,
    NextAction,
    NextActionOut,
    Persona,
    SubAction,
)
from smalltown.seeded import stable_int

DAY = 24 * 60
SLEEPING = "sleeping"

Span = tuple[int, int, str]  # (start minute, minutes, activity)


def clock(minute: int) -> str:
    return datetime(2000, 1, 1, minute // 60 % 24, minute % 60).strftime("%-I:%M %p").lower()


def minute_of(text: str) -> int | None:
    m = re.search(r"\b(\d{1,2}):(\d{2})\b", text)
    return int(m.group(1)) * 60 + int(m.group(2)) if m else None


# --- the routine day ----------------------------------------------------------------------------

@dataclass
class Day:
    blocks: list[Span]
    wake: int  # hour
    bed: int  # minute the agent goes to sleep
    routine: Routine

    @property
    def morning_slot(self) -> int:
        """Where a fresh day puts a new intention: the first hour after breakfast."""
        return self.wake * 60 + 90


def routine_day(seed: int, p: Persona, date: str, known_places: list[str]) -> Day:
    """(start, minutes, activity) for the waking day from the persona's routine alone."""
    r = read_routine(p.name, p.description, p.home, known_places)
    roll = stable_int(seed, p.name, date)
    wake = 6 + roll % 2 + (1 if r.role == "student" else 0) + (2 if r.role == "bartender" else 0)
    bed_min = 22 * 60 + 30 * (roll // 7 % 4)  # 22:00 .. 23:30
    others = [s for s in known_places if s not in (p.home, r.workplace)]
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
    blocks: list[Span] = []

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
    add(DAY, SLEEPING)
    return Day(blocks, wake, bed_min, r)


def overlay(blocks: list[Span], start: int, minutes: int, activity: str) -> list[Span]:
    """Put an activity over the day: what it covers is cut away, nothing else moves; slivers
    under 5 minutes join their neighbour."""
    end = min(start + minutes, DAY)
    out: list[Span] = []
    for s, m, a in blocks:
        e = s + m
        if e <= start or s >= end:
            out.append((s, m, a))
            continue
        if s < start:
            out.append((s, start - s, a))
        if e > end:
            out.append((end, e - end, a))
    out.append((start, end - start, activity))
    out.sort(key=lambda b: b[0])
    merged: list[Span] = []
    for s, m, a in out:
        if m < 5 and merged:
            ps, pm, pa = merged[-1]
            merged[-1] = (ps, pm + m, pa)
        elif merged and merged[-1][1] < 5:
            ps, pm, _ = merged[-1]
            merged[-1] = (ps, pm + m, a)
        else:
            merged.append((s, m, a))
    return merged


# --- reading the context ------------------------------------------------------------------------

_TIME = r"(\d{1,2})(?::(\d{2}))?\s*(am|pm|a\.m\.|p\.m\.)?"
_RANGE = re.compile(rf"\b(?:from|between)\s+{_TIME}\s*(?:to|and|until|till|-|–)\s*{_TIME}", re.I)
_EVENT = re.compile(r"\b(a|an|the|her|his|their|my|our|[A-Z][a-z]+(?: [A-Z][a-z]+)?['’]s) ((?:[\w'’]+ ){0,4}?(?:party|celebration|gathering|"
                    r"meeting|dinner|concert|show|reading|debate|rally|festival|event|wedding|exhibition|"
                    r"picnic|fair|game|ceremony|speech|lecture|performance|open mic))\b", re.I)
_PLACE = re.compile(r"\b(?:at|in) ((?:The |the )?[A-Z][\w'’]*(?: (?:and |of |the )?[A-Z][\w'’]*)*)")
_HOSTING = re.compile(r"\b(planning|hosting|throwing|organi[sz]ing|holding|giving|having)\b")


def _to_minute(h: str, m: str | None, ampm: str | None) -> int:
    hour = int(h) % 24
    ampm = (ampm or "").replace(".", "").lower()
    if ampm == "pm" and hour < 12:
        hour += 12
    elif ampm == "am" and hour == 12:
        hour = 0
    return hour * 60 + int(m or 0)


def dated_event(line: str, date: str, persona: str) -> tuple[int, int, str, bool] | None:
    """A line naming today's date and a time range -> (start, minutes, activity, hosting)."""
    if (PLAN_RECORD.search(line) or CONVERSATION.search(line.lower()) or is_activity(line)
            or line.lower().startswith(("thought:", "reaction:"))):
        return None  # plans, conversations and sights carry dates of their own
    dm = re.search(r"\b(" + "|".join(MONTHS) + r") (\d{1,2})\b", date)
    if not dm:
        return None
    month, day = dm.group(1), int(dm.group(2))
    named = re.search(rf"\b(?:{month}|{month[:3]}\.?) {day}(?:st|nd|rd|th)?\b(?!\d)", line) or \
        re.search(rf"\b{day}(?:st|nd|rd|th)? (?:of )?{month}\b", line)
    r = _RANGE.search(line)
    if not named or not r:
        return None
    h1, m1, p1, h2, m2, p2 = r.groups()
    if not p1 and p2:
        p1 = p2 if int(h1) % 12 <= int(h2) % 12 else ("am" if p2.startswith("p") else "pm")  # "5 to 7 pm"
    if not p1 and not p2 and int(h1) < 8:
        p1 = p2 = "pm"  # "from 5 to 7": an evening
    start, end = _to_minute(h1, m1, p1), _to_minute(h2, m2, p2 or p1)
    if end <= start:
        end = min(start + 120, DAY)
    ev = _EVENT.search(line)
    after = ev.end() if ev else 0  # the place of the event is named after it
    place = next((m.group(1) for m in _PLACE.finditer(line, after) if m.group(1).split()[0] not in MONTHS), "") or \
        next((m.group(1) for m in _PLACE.finditer(line) if m.group(1).split()[0] not in MONTHS), "")
    hosting = line.startswith(persona) and bool(_HOSTING.search(line[len(persona):len(persona) + 40]))
    place = place.removeprefix("the ")
    where = f" at {place}" if place else ""
    if ev:
        det = ev.group(1) if ev.group(1)[:1].isupper() else "the"  # "Sam Moore's debate", else "the party"
        what = f"{det} {ev.group(2)}"
        activity = f"host {what}{where}" if hosting else f"go to {what}{where}"
    elif place:
        activity = f"go to {place}"
    else:
        activity = "keep the appointment: " + line
    return start, end - start, clip(activity, 200), hosting


def thought_activity(line: str, known_people: list[str]) -> str:
    """An inner voice taken as the agent's own intention, as a plan activity."""
    text = line.split(":", 1)[1].strip().rstrip(".!")
    text = full_names(text, known_people)
    m = re.match(r"^(?:you|i) (?:are|am) going to (.+)$", text, re.I)
    if m:
        act = "prepare to " + m.group(1)
    else:
        m = re.match(r"^(?:you|i) (?:will|shall|should|must|need to|have to|want to|would like to|plan to|"
                     r"are planning to|am planning to|ought to) (.+)$", text, re.I)
        if m:
            act = m.group(1)
        else:
            m = re.match(r"^(?:you|i) (?:are|am) (.+)$", text, re.I)
            act = f"think about being {m.group(1)}" if m else f"reflect on the thought: {text}"
    act = re.sub(r"\byourself\b", "oneself", act, flags=re.I)
    act = re.sub(r"\byour\b", "the", act, flags=re.I)
    return clip(act, 200)


def _in_done(activity: str, done: list[str]) -> bool:
    return any(activity in d for d in done)


# --- the three planning answers -----------------------------------------------------------------

@dataclass
class Planned:
    blocks: list[Span]
    special: set[str]  # activities that come from the context, not the routine
    wake: int


def plan_day(seed: int, task: DailyPlan | HourlySchedule) -> Planned:
    """The routine day, then (in this order, each over what came before): the daily plan's own
    items, today's dated events, a reaction, inner voices; cut to start at `from_time`."""
    p = task.persona
    day = routine_day(seed, p, task.date, task.known_places)
    blocks = day.blocks
    special: set[str] = set()
    context = list(task.context)
    known = people(p.description + " " + " ".join(context))
    from_min = minute_of(task.from_time) if isinstance(task, HourlySchedule) and task.from_time else None
    done = task.done if isinstance(task, HourlySchedule) else []

    # the daily plan's items the routine does not know (made from context a re-plan may lack)
    if isinstance(task, HourlySchedule):
        routine_acts = {a for _, _, a in day.blocks}
        items = []
        for it in task.daily_plan:
            m = re.match(r"^(.*) at (\d{1,2}):(\d{2}) (am|pm)$", it.strip())
            if m:
                items.append((_to_minute(m.group(2), m.group(3), m.group(4)), m.group(1)))
        for i, (start, act) in enumerate(items):
            if act in routine_acts or act in special:
                continue
            nxt = items[i + 1][0] if i + 1 < len(items) else start + 60
            blocks = overlay(blocks, start, max(15, min(nxt - start, 120)), act)
            special.add(act)

    # dated events for today (at their time, whatever else was planned)
    taken: list[tuple[int, int]] = []
    events = [ev for ev in (dated_event(line, task.date, p.name) for line in context) if ev]
    for start, minutes, activity, hosting in sorted(events, key=lambda ev: not ev[3]):  # hosting first
        if any(s < start + minutes and start < e for s, e in taken):
            continue  # the same event heard twice
        taken.append((start, start + minutes))
        if hosting and start - 60 >= day.wake * 60 + 90:
            place = activity.split(" at ", 1)[1] if " at " in activity else "the place"
            what = activity.removeprefix("host ").split(" at ")[0]  # "the Valentine's Day party"
            prep = f"decorate {place} for {what}" if "party" in what else f"get {place} ready for {what}"
            blocks = overlay(blocks, start - 60, 60, clip(prep, 200))
            special.add(clip(prep, 200))
        blocks = overlay(blocks, start, minutes, activity)
        special.add(activity)

    # a reaction: the first thing from from_time, 15-30 minutes
    anchor = from_min
    if from_min is not None:
        for line in context:
            if line.lower().startswith("reaction:"):
                act = clip(line.split(":", 1)[1].strip().rstrip("."), 200)
                if act and not _in_done(act, done):
                    minutes = (15, 20, 25, 30)[stable_int(seed, p.name, act, task.from_time) % 4]
                    blocks = overlay(blocks, from_min, minutes, act)
                    special.add(act)
                    anchor = from_min + minutes
                break

    # inner voices: an hour each, at the next full hour (re-plan) or the morning work slot
    slot = day.morning_slot if from_min is None else (from_min // 60 + 1) * 60
    if anchor is not None and slot < anchor:
        slot = math.ceil(anchor / 60) * 60
    thoughts = 0
    for line in context:
        if not line.lower().startswith("thought:"):
            continue
        act = thought_activity(line, known)
        if act in special or _in_done(act, done):
            continue
        start = min(slot, 23 * 60)
        if from_min is not None and start < from_min:
            break
        blocks = overlay(blocks, start, min(60, DAY - start), act)
        special.add(act)
        slot = start + 60
        thoughts += 1
        if thoughts >= 2:
            break

    if from_min is not None:
        clipped: list[Span] = []
        sliver = None  # a first piece too short to be a block: the next one starts earlier
        for s, m, a in blocks:
            e = s + m
            if e <= from_min:
                continue
            s2 = max(s, from_min)
            if e - s2 >= 5:
                if sliver is not None:
                    s2, sliver = sliver, None
                clipped.append((s2, e - s2, a))
            elif clipped:
                ps, pm, pa = clipped[-1]
                clipped[-1] = (ps, pm + e - s2, pa)
            else:
                sliver = s2
        if clipped and clipped[0][0] > from_min:  # re-planned before waking up: sleep on till then
            s0, m0, a0 = clipped[0]
            gap = s0 - from_min
            if gap >= 5 and from_min < day.wake * 60:
                clipped.insert(0, (from_min, gap, SLEEPING))
            else:
                clipped[0] = (from_min, m0 + gap, a0)
        blocks = clipped or [(from_min, max(5, DAY - from_min), SLEEPING)]
    return Planned(blocks, special, day.wake)


def daily_plan(seed: int, task: DailyPlan) -> DailyPlanOut:
    planned = plan_day(seed, task)
    items = [(f"{a} at {clock(s)}", a in planned.special) for s, _, a in planned.blocks]
    # broad strokes: at most 8 items, never dropping what came from the context
    while len(items) > 8:
        plain = [i for i, (_, sp) in enumerate(items) if not sp]
        if not plain:
            items.pop(len(items) // 2)
            continue
        mid = len(items) // 2
        items.pop(min(plain, key=lambda i: (abs(i - mid), i)))
    return DailyPlanOut(wake_up_hour=planned.wake, items=[t for t, _ in items])


def hourly(seed: int, task: HourlySchedule) -> HourlyScheduleOut:
    planned = plan_day(seed, task)
    blocks = [Block(start=hhmm(s), minutes=min(m, 1440), activity=a) for s, m, a in planned.blocks if m >= 5]
    return HourlyScheduleOut(blocks=blocks[:48])


# --- decomposition: 5-15 minute actions ---------------------------------------------------------

Step = tuple[str, int, bool]  # (text, weight, core: repeated when the block is long)

_NOT_WORK_WORDS = ("breakfast", "lunch", "dinner", "eat", "coffee", "walk", "relax", "drink with",
                   "groceries", "browse", "morning routine", "sleeping")


def _at(activity: str) -> tuple[str, str]:
    """(" at Hobbs Cafe", "Hobbs Cafe") from the activity's last " at ..." (or "in the library at")."""
    m = re.search(r" at ((?:home)|(?:the |The )?[A-Z][^,;]*?)$", activity)
    if m:
        return f" at {m.group(1)}", m.group(1)
    return "", ""


_NAMED = re.compile(r"\b((?:The )?[A-Z][\w'’]*(?: (?:and |of )?[A-Z][\w'’]*)*)")


def _meal(act: str) -> str:
    for w in ("breakfast", "lunch", "dinner", "snack"):
        if w in act:
            return w
    return "a meal"


def steps_for(activity: str, place: str) -> list[Step]:
    act = activity.lower()
    at, where = _at(activity)
    opened = re.match(r"^open (.+?)(?: and .*)?$", activity)
    named = [x for x in _NAMED.findall(activity) if x not in people(x) and not x.startswith("Valentine")]
    W = where or (opened.group(1) if opened else "") or (named[0] if named else "") or \
        place.split(":")[0].strip() or "work"
    if act.strip() == SLEEPING or re.search(r"\b(sleep|nap)\b", act):
        return [(activity, 1, True)]
    if "morning routine" in act or act.startswith("wake up"):
        return [("wake up and stretch", 1, False), ("use the bathroom", 1, False), ("brush teeth", 1, False),
                ("take a shower", 2, False), ("get dressed", 1, False), ("make the bed", 1, False)]
    if "party" in act or "celebration" in act:
        ev = re.search(r"\b(?:the|a) ((?:[\w'’]+ ){0,4}?(?:party|celebration))", activity)
        what = f"the {ev.group(1)}" if ev else "the party"
        if act.startswith("decorate") or "ready for" in act:
            return [(f"hang decorations at {W} for {what}", 2, True), (f"set out snacks at {W} for {what}", 1, True),
                    (f"arrange the tables at {W} for {what}", 1, False)]
        if act.startswith("host"):
            return [(f"welcome guests to {what}{at}", 2, False), (f"chat with guests at {what}{at}", 3, True),
                    (f"serve drinks and snacks at {what}{at}", 2, True), (f"thank the guests at {what}{at}", 1, False)]
        return [(f"arrive at {what}{at}", 1, False), (f"chat with friends at {what}{at}", 3, True),
                (f"have a drink and a snack at {what}{at}", 1, True), (f"dance with friends at {what}{at}", 1, True)]
    if re.search(r"\b(breakfast|lunch|dinner|eat|meal|snack)\b", act):
        meal = _meal(act)
        home = "home" in act or not where
        if home:
            verb = "cook" if meal == "dinner" or "cook" in act else "prepare"
            return [(f"{verb} {meal}{at}", 2, False), (f"eat {meal}{at}", 3, True),
                    (f"wash the dishes after {meal}{at}", 1, False)]
        return [(f"order {meal}{at}", 1, False), (f"eat {meal}{at}", 3, True), (f"finish {meal} and pay{at}", 1, False)]
    if "behind the bar" in act or ("drinks" in act and "serve" in act):
        return [(f"set up behind the bar{at}", 1, False), (f"serve drinks behind the bar{at}", 3, True),
                (f"mix cocktails for the regulars{at}", 2, True), (f"wash glasses behind the bar{at}", 1, True)]
    if "serve customers" in act or act.startswith("open "):
        first = [(f"open {W} and get the counter ready", 1, False)] if act.startswith("open ") else []
        cafe = "cafe" in W.lower()
        core = [(f"serve customers at {W}", 3, True),
                (f"make orders for customers at {W}", 2, True) if cafe else (f"help customers at {W}", 2, True),
                (f"wipe the tables at {W}", 1, True) if cafe else (f"restock the shelves at {W}", 1, True)]
        return first + core
    if "counter" in act or re.match(r"^work at (?!home)", act):
        pharm = "pharmacy" in W.lower()
        return [(f"help customers at the counter at {W}", 3, True),
                (f"fill prescriptions at the pharmacy counter at {W}", 2, True) if pharm else
                (f"ring up purchases at the counter at {W}", 2, True),
                (f"restock the shelves at {W}", 2, True)]
    if "attend classes" in act or re.search(r"\bclass(es)?\b", act) and "teach" not in act:
        return [(f"go to the classroom at {W}", 1, False), (f"listen to the lecture at {W}", 3, True),
                (f"take notes in class at {W}", 2, True), (f"ask the professor a question at {W}", 1, False),
                (f"talk over the lecture with classmates at {W}", 1, False)]
    if "teach" in act:
        return [(f"set up the classroom for the lecture at {W}", 1, False), (f"teach a class at {W}", 3, True),
                (f"answer students' questions at {W}", 1, True), (f"pack up after class at {W}", 1, False)]
    if "prepare lectures" in act or "lecture" in act:
        return [(f"gather books in the library at {W}", 1, False), (f"prepare lectures in the library at {W}", 3, True),
                (f"write lecture notes in the library at {W}", 2, True)]
    if "study" in act or "library" in act and "read" not in act:
        return [(f"find a desk in the library at {W}", 1, False), (f"study in the library at {W}", 3, True),
                (f"work through a problem set in the library at {W}", 2, True),
                (f"take notes in the library at {W}", 1, True)]
    if re.search(r"\bwalk|stroll|jog", act):
        return [(f"walk over to {W}" if where and where != "home" else "head out for a walk", 1, False),
                (activity, 3, True), (f"sit on a bench{at} and watch the pond" if "park" in act else
                                      f"stop to look around{at}", 1, False)]
    if "coffee" in act:
        return [(f"order a coffee{at}", 1, False), (activity, 3, True), (f"chat with people{at}", 1, True)]
    if re.search(r"\bdrinks?\b", act):
        return [(f"order a drink{at}", 1, False), (activity, 3, True), (f"chat with the regulars{at}", 1, True)]
    if re.search(r"groceries|browse|shop|buy", act):
        return [(f"browse the shelves{at}", 2, True), (f"pick up groceries{at}", 2, True),
                (f"pay at the counter{at}", 1, False)]
    if "relax" in act or act.startswith("read"):
        return [("relax on the sofa at home", 2, False), ("read a book at home", 3, True),
                ("get ready for bed at home", 1, False)] if "home" in act else \
            [(activity, 3, True)]
    if "tidy" in act or "house" in act or "garden" in act:
        return [(f"tidy up the living room{at}", 2, True), (f"do the laundry{at}", 1, False),
                (f"water the plants{at}", 1, False), (f"sweep the floor{at}", 1, True)]
    if act.startswith("work on") or act.startswith("work as") or act == "work at home":
        if re.search(r"animat|sketch|draw", act):
            prep, close = "sketch out the next scene", "save the files"
        elif re.search(r"paint|watercolou?r|easel", act):
            prep, close = "set up the easel and paints", "clean the brushes"
        elif re.search(r"photo", act):
            prep, close = "sort through yesterday's photos", "back up the photos"
        elif re.search(r"app|software|code|program", act):
            prep, close = "check messages from the team", "test the new code"
        elif re.search(r"music|compos|piano|song", act):
            prep, close = "play through the last bars on the piano", "write down the new melody"
        elif re.search(r"campaign|mayor|election", act):
            prep, close = "read the local news", "answer letters from voters"
        elif re.search(r"proof|math", act):
            prep, close = "go over yesterday's calculations", "write up the new steps of the proof"
        elif re.search(r"accounts|tax|client|cases|law", act):
            prep, close = "sort the day's paperwork", "file the finished paperwork"
        elif re.search(r"comedy|rehears|\bact(?:ing|or)?\b|stand-up", act):
            prep, close = "warm up the voice", "note down the jokes that worked"
        else:
            prep, close = "reread yesterday's pages", "note down ideas for tomorrow"
        return [(f"{prep}{at}", 1, False), (activity, 3, True), ("take a short break and stretch", 1, False),
                (f"{close}{at}", 1, False)]
    return [(activity, 1, True)]


def split_minutes(steps: list[Step], minutes: int) -> list[tuple[str, int]]:
    """The steps stretched or cut to fill `minutes` exactly, each 5-15 minutes (at most 12)."""
    total = max(5, min(minutes, 180))
    n_min, n_max = math.ceil(total / 15), min(12, total // 5)
    n = max(n_min, min(len(steps), n_max))
    chosen = list(steps)
    if n < len(chosen):  # keep the weightiest, in order
        keep = sorted(range(len(chosen)), key=lambda i: (-chosen[i][1], i))[:n]
        chosen = [chosen[i] for i in sorted(keep)]
    elif n > len(chosen):  # go round the core steps again, between the opening and the close
        cores = [i for i, s in enumerate(chosen) if s[2]] or [max(range(len(chosen)), key=lambda i: chosen[i][1])]
        pre, post = chosen[:cores[0]], chosen[cores[-1] + 1:]
        between = [chosen[i] for i in range(cores[0], cores[-1] + 1) if i not in cores]
        core = [chosen[i] for i in cores]
        loop = [core[k % len(core)] for k in range(n - len(chosen) + len(core))]
        chosen = pre + loop + between + post
    mins = [5] * len(chosen)
    left = total - 5 * len(chosen)
    while left > 0:
        room = [i for i in range(len(chosen)) if mins[i] < 15]
        i = max(room, key=lambda i: (chosen[i][1] / mins[i], -i))
        add = min(5, left, 15 - mins[i])
        mins[i] += add
        left -= add
    return [(clip(t, 200), m) for (t, _, _), m in zip(chosen, mins)]


def decompose(task: Decompose) -> DecomposeOut:
    parts = split_minutes(steps_for(task.activity, task.place), task.minutes)
    return DecomposeOut(actions=[SubAction(activity=t, minutes=m) for t, m in parts])


# --- the no-planning ablation ---------------------------------------------------------------------

def next_action(seed: int, task: NextAction) -> NextActionOut:
    """From the time of day and the routine alone: the block the routine has for this moment."""
    date, _, _ = task.time.rpartition(",")
    now = minute_of(task.time.rpartition(",")[2]) if "," in task.time else minute_of(task.time)
    now = 12 * 60 if now is None else now
    day = routine_day(seed, task.persona, date.strip() or task.time, task.known_places)
    if now < day.wake * 60:
        return NextActionOut(activity=SLEEPING, minutes=max(5, min(120, day.wake * 60 - now)))
    for s, m, a in day.blocks:
        if s <= now < s + m:
            return NextActionOut(activity=a, minutes=max(5, min(120 if a == SLEEPING else 60, s + m - now)))
    return NextActionOut(activity=SLEEPING, minutes=max(5, min(120, DAY - now)))
