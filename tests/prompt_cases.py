"""Fixed questions of every task, for the tests of the prompts (test_prompt_texts.py, test_render_table.py):
each task as asked (tests/realistic.py), with every input left at its default filled in (`SAMPLES`:
each optional part of a prompt shown), and bare (every input at its default, the lists empty, a
persona card with neither routine nor summary: each "(none)" shown)."""

from __future__ import annotations

from datetime import timedelta

from pydantic import ValidationError

from realistic import CONSTITUTION, GATHERING, KLAUS, NOW, PARTY, realistic_tasks, rec
from smalltown.llm.tasks.belief import Faith
from smalltown.llm.tasks import (Block, Decided, Done, Feeling, LastTalk, Op, OpOutcome, PersonaCard, Promise, RatePerson,
                                  Task, TownSeen, Trip)

# Values for inputs a realistic question leaves at their default, by field name; a name that means
# different things in different tasks has one value of each type (the first that validates is taken).
# Texts carry quotes and a line break: a prompt shows them quoted.
SAMPLES: dict[str, list] = {
    "after": [Block(start="12:00", minutes=60, activity="have lunch", place="Hobbs Cafe")],
    "already_told": [[rec("Klaus heard about the party", 120, i=80, facts=("party",))]],
    "asks_about": [("party",)],
    "before": [Block(start="09:00", minutes=30, activity="open the cafe", place="Hobbs Cafe")],
    "beds": [["Isabella Rodriguez's apartment: bed"]],
    "constitution": [CONSTITUTION],
    "decision": [Decided(intent="invite Klaus to the party", target="Klaus Mueller",
                         reason="he is new in town", time="09:10")],
    "done": [[Done(time="09:00", activity="brew coffee", object="cafe: coffee machine")],
             [Block(start="06:00", minutes=60, activity="wake up", place="Isabella Rodriguez's apartment")]],
    "facts": [[PARTY]],
    "feeling": [Feeling(other="Klaus Mueller", sentiment=8, summary='a "regular" who\nreads a lot')],
    "faiths": [[Faith(doctrine="Noodlism", level=2, levels=[["Pasta"], ["Pastafarian"]], level_names=["indirect", "direct"],
                      priest=True, persona=['You are a "passionate"\nPastafarian.'])]],
    "from_time": ["13:00"],
    "gatherings": [[GATHERING]],
    "goal": ['throw "the best" party\nin town'],
    "goal_need": ["company"],
    "heard": [["food", 'the "town\'s"\nsafety']],
    "intentions": [[rec("Isabella wants to buy flowers", 300, i=81)]],
    "known_facts": [["party"]],
    "last_talk": [LastTalk(time=NOW - timedelta(days=1), summary="they talked about books")],
    "news": [[rec(PARTY.text, 60 * 24, i=60, facts=("party",))]],
    "outcomes": [[OpOutcome(op=Op(op="trade", item="coffee", qty=1, other="Klaus Mueller", get="book", get_qty=1),
                            done=False, why="Klaus Mueller is not here", minutes_ago=40),
                  OpOutcome(op=Op(op="give", item="coffee", qty=1, other="Maria Lopez"), done=True, minutes_ago=1)]],
    "persuading": [True],
    "place": ["Hobbs Cafe: cafe"],
    "promises": [[Promise(what="bring a cake", to="Klaus Mueller", by="17:00", where="Hobbs Cafe")]],
    "rate": [[rec("the piano is idle", 5, i=82)], 15],
    "reaction": ['she says "hello"\nand waves'],
    "reason": [[rec("Klaus walked in", 2, i=83)], "Klaus walked in"],
    "relationship": ["Klaus is a regular; she likes him."],
    "role": ["baker"],
    "season": [2],
    "side": ["pro"],
    "sleep_places": [["Isabella Rodriguez's apartment: bed"]],
    "stance_text": ['taxes should "fund" the\nbakery'],
    "step": [3],
    "tones": [["kind", "rude"]],
    "traits": ["loud, warm"],
    "towns": [[TownSeen(name="Willow Creek", square="Johnson Park", minutes=0, own=True),
               TownSeen(name="Oak Hill", square="Oak Hill Square", minutes=45)]],
    "trips": [[Trip(town="Oak Hill", place="Oak Hill Square", why="market", start="08:00", end="17:00", minutes=45),
               Trip(town="Oak Hill", place="Oak Hill Square", why="people", start="08:00", end="17:00", minutes=45,
                    people=["Klaus Mueller"]),
               Trip(town="Oak Hill", place="Oak Hill Square", why="gathering", start="18:00", end="19:00",
                    minutes=45, doctrine="Lanternism"),
               Trip(town="Oak Hill", place="Oak Hill Square", why="preaching", start="08:00", end="17:00",
                    minutes=45, doctrine="Lanternism")]],
    "unavailable": [["Harvey Oak Supply Store", "Johnson Park"]],
}
BARE = PersonaCard(name="Sam Moore", age=50, traits="quiet", description="Sam Moore keeps to himself.", home="a cabin")


def _filled(t: Task) -> Task:
    """`t` with every input left at its default given a value from SAMPLES."""
    values = dict(t)
    for name, field in type(t).model_fields.items():
        if values[name] != field.get_default(call_default_factory=True):
            continue
        if name not in SAMPLES:
            raise KeyError(f"{t.name}: no sample for the input {name!r} (add one to SAMPLES)")
        for sample in SAMPLES[name]:
            try:
                type(t)(**{**values, name: sample})
            except ValidationError:
                continue
            values[name] = sample
            break
        else:
            raise ValueError(f"{t.name}: no sample of {name!r} fits its type")
    return type(t)(**values)


def _bare(t: Task) -> Task:
    """`t` with every input at its default, the required lists empty where they may be, and flags off."""
    values = {"persona": BARE}
    for name, field in type(t).model_fields.items():
        if not field.is_required() or name == "persona":
            continue
        value = getattr(t, name)
        values[name] = [] if isinstance(value, list) else False if isinstance(value, bool) else value
    try:
        return type(t)(**values)
    except ValidationError as e:  # a list that may not be empty keeps its values
        for err in e.errors():
            values[err["loc"][0]] = getattr(t, err["loc"][0])
        return type(t)(**values)


def cases() -> dict[str, Task]:
    out: dict[str, Task] = {}
    for name, t in realistic_tasks().items():
        out[f"{name}-as-asked"] = t
        out[f"{name}-filled"] = _filled(t)
        out[f"{name}-bare"] = _bare(t)
    rated = realistic_tasks()["rate_person"]
    out["rate_person-traits-only"] = RatePerson(persona=KLAUS, now=NOW, other=rated.other, quality="outgoing",
                                                traits="loud, warm")
    return out


CASES = cases()
