"""Decomposition: the next part of an activity as 5-15 minute actions, each at an object.

The whole activity (its span: `activity_start`, `activity_minutes`) is laid out once, from its
steps: opening steps at its very start, closing steps at its very end, the core steps in order
over the time between, each core step one stretch. A part is the slice of that layout the task
asks for, so a continuation picks up where the last part ended and nothing restarts each hour:
where a part falls inside the activity is read from typed times (and how much is `done`, by
count), never from the words of what was done. Consecutive pieces of one step come out as
repeated actions, which the mind merges into one continuing action.

Steps come from the routine item the activity is (by equality), else a generic library by the
item's kind, else a generic set for a gathering's host, guests or preparation (the activity
recognised by equality with what the schedule made of the task's gatherings), else the activity
itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from smalltown.llm.tasks import SLEEPING, Decompose, DecomposeOut, PersonaCard, SubAction
from smalltown.scripted import day
from smalltown.scripted.objects import choose_object, state_of
from smalltown.scripted.words import fit, minute
from smalltown.world.model import DAY, RoutineItem


MAX_ACTIONS = 10  # DecomposeOut allows at most this many actions


@dataclass(frozen=True)
class Steps:
    opening: tuple[str, ...]
    core: tuple[str, ...]
    closing: tuple[str, ...]
    kind: str = ""  # what the activity is, for an object when no step names one


MORNING = Steps(("wake up and stretch",), ("use the toilet", "take a shower", "brush teeth and wash up",
                                           "get dressed"), ("make the bed",), "morning")
OPEN_WORK = ("look over what needs doing today", "get the workspace ready", "pick up where things were left",
             "check messages and notes")
CLOSE_WORK = ("tidy up the workspace", "note down what to do next", "put things away for later",
              "wrap up the last task")
CHORES = ("tidy up the living room", "do the laundry", "water the plants", "sweep the floor",
          "take out the trash", "wipe down the kitchen counters")
EVENING_CLOSE = ("brush teeth before bed", "change for the night")
HOST = Steps(("welcome the first guests",),
             ("chat with the guests", "serve drinks and snacks", "make sure everyone is having fun"),
             ("thank the guests for coming",), "party")
GUEST = Steps(("arrive and greet the host",), ("chat with friends", "have a drink and a snack",
                                               "dance with friends"), ("say goodbye to the host",), "party")
PREPARE = Steps((), ("put up decorations", "set out the tables and chairs", "lay out snacks and drinks"),
                ("check that everything is ready",), "party")


def meal_word(start: int) -> str:
    return "breakfast" if start < 10 * 60 + 30 else "lunch" if start < 15 * 60 + 30 else "dinner"


def of_item(item: RoutineItem, items: tuple[RoutineItem, ...], activity: str, start: int, at_home: bool) -> Steps:
    """A routine item's own steps (the first opens, the last closes), else its kind's (`items`:
    the whole routine, which numbers the item among those of its kind)."""
    if item.steps:
        s = tuple(fit(x, 60) for x in item.steps if x.strip())
        if len(s) == 1:
            return Steps((), s, (), item.kind)
        if len(s) == 2:
            return Steps(s[:1], s[1:], (), item.kind)
        return Steps(s[:1], s[1:-1], s[-1:], item.kind)
    same = [it for it in sorted(items, key=lambda it: minute(it.start)) if it.kind == item.kind]
    i = same.index(item) if item in same else 0
    k = item.kind
    if k == "sleep" or activity == SLEEPING:
        return Steps((), (SLEEPING,), (), "sleep")
    if k == "morning":
        return MORNING
    if k == "meal":
        meal = meal_word(start)
        if at_home:
            first = "cook dinner" if meal == "dinner" else f"prepare {meal}"
            return Steps((first,), (activity,), (f"wash the dishes after {meal}",), "meal")
        return Steps((f"order {meal}",), (activity,), (f"pay for {meal}",), "meal")
    if k == "work":
        return Steps((OPEN_WORK[i % len(OPEN_WORK)],), (activity,), (CLOSE_WORK[i % len(CLOSE_WORK)],), "work")
    if k == "chores":
        return Steps((), tuple(CHORES[(3 * i + j) % len(CHORES)] for j in range(3)), (), "chores")
    if k == "evening":
        return Steps((), (activity,), EVENING_CLOSE, "evening")
    return Steps((), (activity,), (), k)


def day_steps(p: PersonaCard) -> dict[int, Steps]:
    """Each routine item's steps (by its index), named so that no step of the day repeats an
    earlier one: a step the routine gives twice (the dishes after each meal, a second session of
    the same work) is said for what it is ("... after lunch", "get back to ...")."""
    return _day_steps(day.routine(p), p.home)


# keyed by what the steps read (routine and home), not the persona, whose summary changes daily:
# a town of 500 keeps all its days
@lru_cache(maxsize=4096)
def _day_steps(items: tuple[RoutineItem, ...], home: str) -> dict[int, Steps]:
    order = sorted(range(len(items)), key=lambda i: minute(items[i].start))
    seen: set[str] = set()
    out: dict[int, Steps] = {}
    for i in order:
        it = items[i]
        activity = day.act(it.activity)
        st = of_item(it, items, activity, minute(it.start), it.place in ("", home))
        if st.kind == "sleep":
            out[i] = st
            continue
        meal = meal_word(minute(it.start)) if it.kind == "meal" else ""

        def fresh(x: str) -> str:
            options = [x]
            if meal and meal not in x:
                options.append(f"{x} after {meal}")
            if x == activity:
                options += [f"get back to {x}", f"carry on: {x}"]
            options += [f"{x} once more", f"{x} again"]
            for v in (fit(o, 60) for o in options):
                if v and v not in seen:
                    seen.add(v)
                    return v
            return x

        out[i] = Steps(tuple(map(fresh, st.opening)), tuple(map(fresh, st.core)), tuple(map(fresh, st.closing)),
                       st.kind)
    return out


def steps_for(task: Decompose, start: int, at_home: bool) -> Steps:
    """The steps of the task's activity, recognised by equality with what the stand-in derives
    from typed inputs: a routine item's activity, a gathering's (host, prepare, guest), an inner
    voice's; any other activity (a model's words) is one step, itself."""
    p, activity = task.persona, task.activity
    if activity == SLEEPING:
        return Steps((), (SLEEPING,), (), "sleep")
    items = day.routine(p)
    same = [i for i, it in enumerate(items) if day.act(it.activity) == activity or it.activity == activity]
    if same:  # the session of this activity that starts at (or last before) the activity's start
        i = min(same, key=lambda k: ((start - minute(items[k].start)) % DAY, k))
        return day_steps(p)[i]
    item = day.item_for(p, activity)
    if item is not None:
        return of_item(item, day.routine(p), activity, start, at_home)
    for g in task.gatherings:
        for _, _, label in day.gathering_labels(p, g):
            if label.activity == activity:
                return {"host": HOST, "prepare": PREPARE}.get(label.kind, GUEST)
    return Steps((), (activity,), (), "")


# --- the layout -----------------------------------------------------------------------------------


def layout(st: Steps, total: int, offset: int, part: int, first: bool, last: bool) -> list[tuple[str, int]]:
    """(step, minutes) for the part [offset, offset + part) of an activity `total` minutes long."""
    core = st.core or (st.opening + st.closing)[:1] or ("-",)
    op, cl = list(st.opening), list(st.closing)
    sl = 10 if total >= 45 else 5

    def trim(o: list[str], c: list[str], room: int) -> tuple[list[str], list[str]]:
        nonlocal sl
        while (len(o) + len(c)) * sl > room and (o or c):
            if sl > 5:
                sl = 5
                continue
            if len(o) >= len(c) and o:
                o = o[:-1]  # the first opening step stays longest
            else:
                c = c[1:]  # and the last closing step
        return o, c

    op, cl = trim(op, cl, max(0, total - 5))
    lead, tail_len = len(op) * sl, len(cl) * sl
    span = max(1, total - lead - tail_len)
    head = op if first else []
    tail = cl if last else []
    head, tail = trim(head, tail, max(0, part - 5))
    pieces: list[list] = [[s, sl] for s in head]
    a, b = offset + len(head) * sl, offset + part - len(tail) * sl
    for x in range(a, b):
        i = min(len(core) - 1, max(0, (x - lead) * len(core) // span))
        if pieces and pieces[-1][0] == core[i] and len(pieces) > len(head):
            pieces[-1][1] += 1
        else:
            pieces.append([core[i], 1])
    pieces += [[s, sl] for s in tail]
    # no piece under 5 minutes: it joins its neighbour
    merged: list[list] = []
    for s, m in pieces:
        if merged and m < 5:
            merged[-1][1] += m
        elif merged and merged[-1][1] < 5:
            merged[-1] = [s, merged[-1][1] + m]
        else:
            merged.append([s, m])
    out: list[tuple[str, int]] = []
    for s, m in merged:
        k = max(1, -(-m // 15))
        for j in range(k):
            out.append((s, m // k + (1 if j < m % k else 0)))
    out = [(s, max(5, min(15, m))) for s, m in out if m > 0] or [(core[0], 5)]
    while len(out) > MAX_ACTIONS:  # the answer holds at most 8: the shortest neighbours join
        pairs = [(out[i][1] + out[i + 1][1], i) for i in range(len(out) - 1) if out[i][1] + out[i + 1][1] <= 15]
        if not pairs:
            break
        _, i = min(pairs)
        out[i:i + 2] = [(out[i][0], out[i][1] + out[i + 1][1])]
    return out[:MAX_ACTIONS]


def decompose(task: Decompose, rate) -> DecomposeOut:
    p = task.persona
    start = minute(task.activity_start)
    offset = (minute(task.start) - start) % DAY
    total = max(task.activity_minutes, offset + task.minutes, 5)
    if offset >= total:
        offset = 0
    at_home = task.place == p.home
    st = steps_for(task, start, at_home)
    parts = layout(st, total, offset, max(5, task.minutes), first=offset == 0 and not task.done,
                   last=task.minutes_left <= 0)
    # what was found closed or taken is not used while there is something else
    objects = [o for o in task.objects if o not in task.unavailable] or task.objects
    prev = task.done[-1].object if task.done and task.done[-1].object in objects else ""
    actions = []
    for step, m in parts:
        obj = choose_object(step, objects, p, prev, st.kind) if objects else ""
        actions.append(SubAction(activity=fit(step, 60) or "-", minutes=m, object=obj,
                                 state=state_of(obj, step, own_step=True)))
        prev = obj or prev
    return DecomposeOut(actions=actions, ratings=[rate(r, p) for r in task.rate])


def routine_sights(items: tuple[RoutineItem, ...], home: str) -> set[str]:
    """The steps a routine (`day.routine`) is made of, as activities: what its agent is seen
    doing on an ordinary day (an observation equal to "<name> is <one of these>" is its routine)."""
    out: set[str] = set()
    for it in items:
        st = of_item(it, items, day.act(it.activity), minute(it.start), not it.place or it.place == home)
        out |= set(st.opening + st.core + st.closing)
        out.add(day.act(SLEEPING if it.kind == "sleep" else it.activity))
    return out

