"""Where an action is done: an object (and arena) that fits it, by matching the step's words
against the names of the objects the agent knows, through a small generic lexicon of everyday
life (sleeping at a bed, showering at a shower, cooking at a stove). One's own things are
preferred and someone else's ("<First name>'s bed", "<Full Name>'s bedroom") avoided.

Also: the choice of a place for what is not decomposed (`ChoosePlace`) and the state an object
is in while used (`ObjectState`).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Callable

from smalltown.llm.tasks import SLEEPING, ChoosePlace, ChoosePlaceOut, ObjectState, ObjectStateOut, PersonaCard
from smalltown.scripted import day
from smalltown.scripted.registry import answers
from smalltown.scripted.words import first_name, stem_set, words
from smalltown.seeded import stable_int

# (words of an action, words of objects where it is done, words of arenas where it is done)
# verbs weigh more than nouns: "cook dinner" is done at the stove, "eat dinner" at the table
NOUNS = frozenset("breakfast lunch dinner meal snack night bed bedtime".split())
LEXICON: tuple[tuple[frozenset[str], tuple[str, ...], tuple[str, ...]], ...] = tuple(
    (frozenset(a.split()), tuple(o.split()), tuple(r.split())) for a, o, r in (
        ("sleep sleeping asleep nap bed bedtime night", "bed", "bedroom room"),
        ("wake stretch", "bed", "bedroom room"),
        ("shower bathe bath", "shower bathtub bath", "bathroom"),
        ("toilet restroom", "toilet", "bathroom restroom"),
        ("brush teeth floss shave face", "sink", "bathroom"),
        ("dress dressed clothes change outfit", "closet wardrobe dresser", "bedroom room"),
        ("cook prepare fry bake boil stove", "stove oven", "kitchen"),
        ("eat breakfast lunch dinner meal snack dine", "table", "kitchen dining"),
        ("dish dishes wash", "sink", "kitchen"),
        ("coffee espresso brew latte", "coffee", "cafe kitchen"),
        ("fridge refrigerator", "refrigerator fridge", "kitchen"),
        ("read book novel", "bookshelf armchair sofa couch desk", "library living"),
        ("relax rest unwind lounge watch tv television", "sofa couch armchair television", "living common"),
        ("write study homework paper essay research notes email draft work plan code computer accounts lecture",
         "desk computer table", "office study library"),
        ("paint draw sketch mural art", "easel painting", "studio"),
        ("music piano compose sing song practice rehearse guitar", "piano guitar instrument", "music"),
        ("serve customer customers counter cashier register order orders pay ring", "counter cashier register",
         "cafe store"),
        ("drink drinks beer pint cocktail bar", "bar counter table", "pub bar"),
        ("browse shelf shelves shop buy groceries restock stock supplies", "shelf shelves aisle",
         "store shop market"),
        ("walk stroll jog outside fresh air bench pond", "bench path pond", "park garden"),
        ("garden plant plants flower flowers weed water", "garden plant flower", "garden park"),
        ("teach class lesson lecture students", "blackboard podium lectern whiteboard", "classroom lecture"),
        ("chat talk guest guests welcome host dance party friend friends mingle celebrate greet thank",
         "table seating sofa counter", "cafe common living"),
        ("decorate decorations tables chairs snacks", "table", "cafe common living"),
        ("laundry", "washer washing laundry", "laundry"),
        ("game games stream streaming", "computer desk", "bedroom room"),
        ("fire burning smoke", "stove oven", "kitchen"),
        ("leak leaking flood overflowing", "sink shower toilet", "bathroom kitchen"),
    ))
KIND_WORDS = {"sleep": "sleep", "morning": "shower", "meal": "eat", "work": "work", "leisure": "relax",
              "chores": "tidy", "evening": "relax", "party": "chat"}
GENERIC = frozenset({"room", "area", "space", "corner", "window", "main", "small", "big", "old", "new"})


def _ownership(option: str, p: PersonaCard) -> float:
    """+ for one's own thing, strongly − for someone else's ("X's room")."""
    return _owned(option, first_name(p.name).lower())


@lru_cache(maxsize=8192)
def _owned(option: str, first: str) -> float:
    low = option.lower().replace("’", "'")
    if "'s" not in low:
        return 0.0
    return 1.5 if first in words(low) else -6.0


@lru_cache(maxsize=16384)
def match(step: frozenset[str], option: str, arena_level: bool = False) -> float:
    """How well an option ("arena: object", an arena or an object) fits an action's word stems:
    0 when nothing in the lexicon or the names ties them. Cached: a day asks the same steps
    against the same few objects many times."""
    arena, _, obj = option.rpartition(": ")
    if arena_level:
        arena, obj = obj, ""
    obj_s, arena_s = stem_set(obj), stem_set(arena)
    s = 0.0
    for acts, objs, arenas in LEXICON:
        hit = acts & step
        if not hit:
            continue
        weight = 1.0 if hit <= NOUNS else 2.0
        first = next((i for i, o in enumerate(objs) if o in obj_s), None)
        if first is not None:  # the lexicon lists the likeliest object first
            s += 1.5 * weight - 0.1 * first
        if arena_s & set(arenas):
            s += 1.5 * weight if arena_level else 0.5 * weight
    content = step - GENERIC
    return s + 2 * len(content & obj_s) + 0.5 * len(content & arena_s)


def score(step: frozenset[str], option: str, p: PersonaCard, arena_level: bool = False) -> float:
    m = match(step, option, arena_level)
    own = _ownership(option, p)
    return m + (own if m > 0 or own < 0 else 0.0)


def choose_object(step: str, objects: list[str], p: PersonaCard, prev: str = "", kind: str = "") -> str:
    """The object a step is done at: the best match by its words; else where the last action
    was; else the best match for the activity's kind; else one's own or a seeded pick."""
    st = stem_set(step)
    if step == SLEEPING:
        st |= {"sleep"}

    def best(key: Callable[[str], tuple]) -> str:
        """`max(objects)` by `key`, then by a seeded draw: the draw (a hash) is made only
        among the ties, the same pick as drawing it for every object."""
        keyed = [(key(o), o) for o in objects]
        top = max(k for k, _ in keyed)
        tied = [o for k, o in keyed if k == top]
        return tied[0] if len(tied) == 1 else max(tied, key=lambda o: -(stable_int(p.name, step, o) % 997))

    first = best(lambda o: (score(st, o, p), o == prev))
    if match(st, first) > 0 and score(st, first, p) > 0:
        return first
    if prev in objects:
        return prev
    if kind in KIND_WORDS:
        ks = stem_set(KIND_WORDS[kind])
        kbest = best(lambda o: (score(ks, o, p), o == prev))
        if match(ks, kbest) > 0 and score(ks, kbest, p) > 0:
            return kbest
    return best(lambda o: (_ownership(o, p),))


def choose_place(task: ChoosePlace) -> ChoosePlaceOut:
    """One level of the recursive choice (SPEC 7). Sectors: the routine's place for a routine
    activity, home for sleep, else stay where one is. Arenas and objects: by the words of the
    activity, staying in the current arena when nothing fits better. What was found closed or
    taken (`unavailable`) is not chosen while there is something else."""
    p, opts = task.persona, [o for o in task.options if o not in task.unavailable] or task.options
    if not opts:
        return ChoosePlaceOut(choice=p.home or "home")
    current = [x.strip() for x in task.current.split(":")]
    if task.level == "sector":
        item = day.item_for(p, task.activity)
        want = (item.place or p.home) if item is not None else (p.home if task.activity == SLEEPING else "")
        for w in (want, current[0], p.home):
            if w in opts:
                return ChoosePlaceOut(choice=w)
        return ChoosePlaceOut(choice=opts[0])
    st = stem_set(task.activity) | ({"sleep"} if task.activity == SLEEPING else set())
    if task.level == "arena":
        here = current[1] if len(current) > 1 and current[0] == task.within.removeprefix("in ").strip() else ""

        def arena_key(o: str) -> tuple[float, bool, int]:
            return score(st, o, p, arena_level=True), o == here, -(stable_int(p.name, task.activity, o) % 997)

        best = max(opts, key=arena_key)
        if (match(st, best, arena_level=True) <= 0 or score(st, best, p, arena_level=True) <= 0) and here in opts:
            best = here
        return ChoosePlaceOut(choice=best)
    arena = task.within.removeprefix("in ").split(":")[-1].strip()
    return ChoosePlaceOut(choice=choose_object(task.activity, [f"{arena}: {o}" for o in opts], p)
                          .split(": ", 1)[-1] if arena else choose_object(task.activity, opts, p))


# (words of an object, state while used); a bed in use by a sleeper is "being slept in"
STATES: tuple[tuple[str, str], ...] = (
    ("stove", "cooking"), ("oven", "baking"), ("coffee", "brewing coffee"), ("shower", "running"),
    ("toilet", "occupied"), ("sink", "running water"), ("piano", "being played"), ("guitar", "being played"),
    ("easel", "holding a painting in progress"), ("refrigerator", "open"), ("fridge", "open"),
    ("bar", "busy with orders"), ("counter", "busy with customers"), ("desk", "covered in work"),
    ("computer", "switched on"), ("television", "switched on"), ("table", "in use"), ("shelf", "being browsed"),
    ("shelves", "being browsed"), ("bench", "occupied"), ("sofa", "occupied"), ("couch", "occupied"),
    ("armchair", "occupied"), ("bookshelf", "being browsed"), ("closet", "open"), ("wardrobe", "open"),
    ("blackboard", "covered in notes"), ("garden", "being tended"), ("bed", "in use"),
)


def state_of(obj_name: str, activity: str, own_step: bool = False) -> str:
    """What an object (by the words of its world name) is doing while used; a bed is slept in
    only by a sleeper (`SLEEPING`, the typed activity of sleep). With `own_step` the activity is
    a step the stand-in laid out itself (from the world's routine or its own library), whose
    words it may read: a bed being made."""
    obj = stem_set(obj_name.split(":")[-1])
    if "bed" in obj and activity == SLEEPING:
        return "being slept in"
    if own_step and "bed" in obj and "make" in stem_set(activity):
        return "being made"
    for word, state in STATES:
        if word in obj:
            return state
    return "in use"


def object_state(task: ObjectState) -> ObjectStateOut:
    return ObjectStateOut(state=state_of(task.object, task.activity))


# the stand-in's answers (scripted/registry.py): the task, the run's seed
answers(ChoosePlace)(lambda t, seed: choose_place(t))
answers(ObjectState)(lambda t, seed: object_state(t))
