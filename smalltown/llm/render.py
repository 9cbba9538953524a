"""Tasks into prompt text: the only place typed inputs become prose.

A prompt is the agent's card (stable: a model caches it), then the task's instructions with the
answer's shape and one example (stable per task), then the data of this question (times on
every memory), then the question. Text from a world file, a user or a model is quoted as a JSON
string (`quote`), so it cannot pose as part of the prompt; names and times the engine writes are
shown as they are.
"""

from __future__ import annotations

import json
import re
import string
from datetime import date, datetime
from functools import cache, lru_cache
from importlib import resources

from smalltown.llm import tasks as T
from smalltown.llm.examples import EXAMPLES, example, slot  # noqa: F401 (render_work registers more)
from smalltown.world.model import Gathering, RoutineItem

_UNSAFE = re.compile("[\u007f-\u009f\u2028\u2029]")  # line breaks json.dumps leaves as they are
NONE = "(none)"


@lru_cache(maxsize=16384)  # the same memories, names and plans are quoted prompt after prompt
def quote(text: str) -> str:
    """Text as a JSON string literal: its line breaks and quotes escaped, so that text from a
    world file, a user or a model cannot pose as part of the prompt around it (an injected
    "\\n\\nSYSTEM: ..." stays inside its quotes)."""
    return _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(text, ensure_ascii=False))


def day(t: datetime) -> str:
    return t.strftime("%A %B %-d, %Y")


def moment(t: datetime) -> str:
    """The time of a question: "Monday February 13, 2023, 08:30"."""
    return t.strftime("%A %B %-d, %Y, %H:%M")


def stamp(t: datetime, today: date | None = None) -> str:
    """When a memory was made, as every memory line shows it: "08:30" today, "Feb 12 08:30" on
    another day (the prompt says what day it is)."""
    return t.strftime("%H:%M") if t.date() == today else t.strftime("%b %-d %H:%M")


def record(r: T.Record, today: date | None = None) -> str:
    return f"({stamp(r.time, today)}) {quote(r.text)}"


def records(rs: list[T.Record], start: int | None = None, today: date | None = None) -> str:
    """Memories one a line, with their times; numbered from `start + 1` when `start` is given."""
    if not rs:
        return NONE
    if start is None:
        return "\n".join(f"- {record(r, today)}" for r in rs)
    return "\n".join(f"{start + i}. {record(r, today)}" for i, r in enumerate(rs, 1))


def bullets(items: list[str], plain: bool = False) -> str:
    return "\n".join(f"- {x if plain else quote(x)}" for x in items) or NONE


def hhmm_end(start: str, minutes: int) -> str:
    h, m = map(int, start.split(":"))
    end = h * 60 + m + minutes
    return f"{end // 60 % 24:02d}:{end % 60:02d}"


def block(b: T.Block) -> str:
    where = f" at {b.place}" if b.place else ""
    return f"{b.start}-{hhmm_end(b.start, b.minutes)} {quote(b.activity)}{where}"


@lru_cache(maxsize=1024)  # an agent's routine, shown in each of its prompts
def routine(items: tuple[RoutineItem, ...], home: str) -> str:
    return "\n".join(f"- {i.start}-{hhmm_end(i.start, i.minutes)} {quote(i.activity)} at {i.place or home}"
                     for i in items) or NONE


def gathering(g: Gathering) -> str:
    host = f", hosted by {g.host}" if g.host else ""
    return f"- {quote(g.name)} at {g.place}, {stamp(g.start)} to {g.end.strftime('%H:%M')}{host}"


def last_talk(t: T.LastTalk | None, today: date | None = None) -> str:
    return f"{stamp(t.time, today)}: {quote(t.summary)}" if t else "none before"


@lru_cache(maxsize=1024)
def card(p: T.Persona) -> str:
    """Who "the person" of the task's instructions is (stable through a day): it follows the
    instructions, which are the same for every agent, so both stay evaluated in a model's cache."""
    if p.summary:
        lines = "\n".join(quote(line) for line in p.summary.splitlines() if line.strip())
        return f"The person: {p.name}, age {p.age}.\nSummary description:\n{lines}"
    return (f"The person: {p.name}, age {p.age}.\nInnate traits: {quote(p.traits)}\n"
            f"Description: {quote(p.description)}\nLives in: {p.home}.")


# --- the answer's shape ---------------------------------------------------------------------

def _describe(schema: dict, defs: dict) -> str:
    if "$ref" in schema:
        schema = defs[schema["$ref"].rsplit("/", 1)[-1]]
    if "enum" in schema:
        return "one of the options listed"
    kind = schema.get("type")
    if kind == "object":
        return "{" + ", ".join(f'"{k}": {_describe(v, defs)}' for k, v in schema.get("properties", {}).items()) + "}"
    if kind == "array":
        lo, hi = schema.get("minItems"), schema.get("maxItems")
        count = f"{lo} " if lo == hi and lo else f"{lo} to {hi} " if lo and hi else f"up to {hi} " if hi else ""
        return f"a list of {count}items, each {_describe(schema.get('items', {}), defs)}"
    if kind == "integer":
        lo, hi = schema.get("minimum"), schema.get("maximum")
        return f"a whole number {lo} to {hi}" if lo is not None and hi is not None else "a whole number"
    if kind == "boolean":
        return "true or false"
    if schema.get("pattern") == T.HHMM:
        return '"HH:MM"'
    if schema.get("maxLength"):
        return f"text of at most {schema['maxLength']} characters"
    return "text"


@cache
def answer_shape(task: type[T.Task]) -> str:
    """How to answer, the same for every question of a task: each field with what it holds,
    then one example (for other inputs)."""
    schema = task.output.model_json_schema()
    defs = schema.get("$defs", {})
    lines = ["Answer with one JSON object with these fields:"]
    for key, prop in schema.get("properties", {}).items():
        text = _describe(prop, defs)
        note = prop.get("description")
        lines.append(f'- "{key}": {text}' + (f" ({note})" if note else ""))
    lines.append("Example (its shape only: replace each <...> with the person's own answer): " + example(task.name))
    return "\n".join(lines)


# --- the data of each task ------------------------------------------------------------------


def _values(task: T.Task) -> dict[str, str]:
    """Every `$name` a task's template may use."""
    p = task.persona
    today = task.now.date()
    v: dict[str, str] = {
        "persona_card": card(p), "persona_name": p.name, "persona_home": p.home,
        "persona_age": str(p.age), "persona_traits": quote(p.traits),
        "persona_routine": routine(p.routine, p.home), "now": moment(task.now), "today": day(task.now),
        "answer_shape": answer_shape(type(task)),
    }
    for name in type(task).model_fields:
        if name in ("persona", "now"):
            continue
        value = getattr(task, name)
        if name in task.numbered:
            v[name] = records(value, task.count(name), today) if value else NONE
        elif isinstance(value, list) and value and isinstance(value[0], T.Record):
            # oldest first (unnumbered: no answer points at a position): the next question's
            # retrieval mostly adds newer memories, so a cached prefix stays longer
            v[name] = records(sorted(value, key=lambda r: (r.time, r.id)), today=today)
        elif isinstance(value, list) and value and isinstance(value[0], Gathering):
            v[name] = "\n".join(gathering(g) for g in value)
        elif isinstance(value, list) and value and isinstance(value[0], T.Block):
            v[name] = "\n".join(f"- {block(b)}" for b in value)
        elif isinstance(value, list) and value and isinstance(value[0], T.PlanStep):
            v[name] = "\n".join(f"- {s.time} {quote(s.activity)}" for s in value)
        elif isinstance(value, list) and value and isinstance(value[0], T.Line):
            v[name] = "\n".join(f"{line.speaker}: {quote(line.text)}" for line in value)
        elif isinstance(value, list) and value and isinstance(value[0], T.Done):
            v[name] = "\n".join(f"- {d.time} {quote(d.activity)}" + (f" at {d.object}" if d.object else "")
                                for d in value)
        elif isinstance(value, list):
            plain = name in ("known_places", "options", "objects")
            v[name] = bullets([str(x) for x in value], plain) if value else NONE
        elif isinstance(value, T.LastTalk) or (value is None and name == "last_talk"):
            v[name] = last_talk(value, today)
        elif isinstance(value, T.Block):
            v[name] = block(value)
        elif value is None:
            v[name] = NONE
        elif isinstance(value, str) and name not in PLAIN:
            v[name] = quote(value)
        else:
            v[name] = str(value)
    v.update(_EXTRA.get(task.name, lambda t: {})(task))
    v["broadcast_part"] = broadcast(task)
    goal = getattr(task, "goal", "") if task.name != "social_goal" else ""
    v["goal_line"] = f"{p.name}'s current goal: {quote(goal)}" if goal else ""
    return v


# Fields shown as they are: names of people and places (a world file's names are one line with
# no double quotes or backslashes, see world/schema.py) and times the engine writes.
PLAIN = frozenset({"listener", "other", "observed", "initiator", "level", "within", "current", "place",
                   "start", "activity_start", "from_time", "object", "quality"})


def own_example(t: T.DailyPlan | T.HourlySchedule) -> str:
    """An example drawn from the person's own usual day (a small model follows a concrete example
    better than a shape, and copying this one only keeps the person to its own routine); "" when
    the person has no routine."""
    items = [i for i in t.persona.routine if i.activity != T.SLEEPING]
    if isinstance(t, T.HourlySchedule):
        items = [i for i in items if i.start >= t.from_time] or items
        night = [{"start": "00:00", "minutes": int(items[0].start[:2]) * 60 + int(items[0].start[3:]),
                  "activity": T.SLEEPING, "place": t.persona.home}] if items and not t.from_time else []
        shown = {"blocks": night + [{"start": i.start, "minutes": i.minutes, "activity": i.activity,
                                     "place": i.place or t.persona.home} for i in items[:2]] + [slot("...")]}
    else:
        shown = {"wake_up_hour": int(items[0].start[:2]) if items else 7,
                 "items": [{"time": i.start, "activity": i.activity} for i in items[:3]] + [slot("...")]}
    return (f"Example from {t.persona.name}'s usual day (follow its shape; plan today as it really goes): "
            + re.sub(r'"\\u0000(.*?)\\u0000"', r"\1", json.dumps(shown, ensure_ascii=False))) if items else ""


def _hourly(t: T.HourlySchedule) -> dict[str, str]:
    return {"own_example": own_example(t), "start_phrase": f"{t.from_time} (now)" if t.from_time else
            f"00:00 (the whole day: {t.persona.name} wakes up at {t.wake_up_hour:02d}:00)",
            "reaction_line": f"{t.persona.name} first reacts: {quote(t.reaction)}" if t.reaction else "",
            "sleep_line": f"Where {t.persona.name} sleeps: " + ", ".join(t.sleep_places) if t.sleep_places else ""}


def _decompose(t: T.Decompose) -> dict[str, str]:
    return {**_unavailable(t),
            "before_line": f"before: {block(t.before)}" if t.before else "before: (the start of the day)",
            "after_line": f"after: {block(t.after)}" if t.after else "after: (the end of the day)",
            "activity_end": hhmm_end(t.activity_start, t.activity_minutes), "economy_part": "", "economy_task": ""}


def _unavailable(t: T.ChoosePlace | T.Decompose) -> dict[str, str]:
    """Places found closed or taken: a line only when there are some (else the prompt is as before)."""
    return {"unavailable_line": "Found closed or taken just now (unavailable for a while):\n"
            + bullets(t.unavailable, plain=True) if t.unavailable else ""}


def _utterance(t: T.Utterance) -> dict[str, str]:
    ask = ("" if t.relationship else
           f' (Also give "relationship": what {t.persona.name} thinks of {t.listener}, in a sentence.)')
    return {"relationship_ask": ask,
            "relationship": quote(t.relationship) if t.relationship else "(to be said in this answer)",
            "transcript": "\n".join(f"{line.speaker}: {quote(line.text)}" for line in t.transcript)
            or "(nothing yet: this is the first line)",
            "feeling_line": feeling_line(t.persona.name, t.feeling)}


def _react(t: T.React) -> dict[str, str]:
    talk = (f"Last conversation with {t.observed}: {last_talk(t.last_talk, t.now.date())}" if t.observed_is_agent else "")
    news = (f"News {t.persona.name} has not told {t.observed} yet:\n{records(t.news, today=t.now.date())}"
            if t.observed_is_agent and t.news else "")
    return {"last_talk_line": talk, "news_line": news, "feeling_line": feeling_line(t.persona.name, t.feeling)}


def _interview(t: T.Interview) -> dict[str, str]:
    return {"schedule": "\n".join(f"- {block(b)}" for b in t.schedule) or "(no plan yet)"}


def _insights(t: T.ReflectionInsights) -> dict[str, str]:
    return {"questions": "\n".join(f"- {quote(q)}" for q in t.questions) or NONE}


def feeling_line(name: str, f: T.Feeling | None) -> str:
    """Social awareness: the feeling toward the other, when the setting is on ("" when off)."""
    if f is None:
        return ""
    about = f" — {quote(f.summary)}" if f.summary else ""
    return f"{name}'s feeling toward {f.other}: {f.sentiment}/10 (0 hate .. 10 love){about}"


def _summary_social(t: T.Task) -> dict[str, str]:
    """The summary's social part: filled in only for the social variant (mind/social.py)."""
    f = getattr(t, "feeling", None)
    if f is None:
        return {"social_line": "", "social_ask": ""}
    return {"social_line": "Before this conversation, " + feeling_line(t.persona.name, f),
            "social_ask": f' Also give "sentiment": how {t.persona.name} feels toward {t.other} after it '
                          f'(0 hate .. 10 love), and "relationship": their relationship, in one sentence.'}


def broadcast(t: T.Task) -> str:
    """The controller's broadcast, as a paragraph of its own (none when it is off: the prompt is
    then what it was): its decision, the open promises, and for an utterance that may promise,
    what is planned next and the places a promise may name."""
    name, parts = t.persona.name, []
    d = getattr(t, "decision", None)
    if d is not None:
        target = f" ({d.target})" if d.target else ""
        parts.append(f"What {name} has decided to do (at {d.time}): {quote(d.intent)}{target}, because: {quote(d.reason)}")
    promises = getattr(t, "promises", [])
    if promises:
        parts.append(f"What {name} has promised to do today (keep these):\n" + "\n".join(
            f"- by {p.by} at {p.where}: {quote(p.what)} (promised to {p.to})" for p in promises))
    if isinstance(t, T.CommittingUtterance):
        if t.plan_next is not None:
            parts.append(f"What {name} plans to do next: {block(t.plan_next)}")
        parts.append(f'If {name} promises {t.listener} to do something later today, give it as "commitment" '
                     f"(what, by HH:MM, where: one of these places), else null:\n"
                     + bullets(t.known_places, plain=True))
    return "\n\n".join(parts)


_EXTRA = {"hourly_schedule": _hourly, "daily_plan": lambda t: {"own_example": own_example(t)}, "decompose": _decompose, "utterance": _utterance, "react": _react,
          "interview": _interview, "reflection_insights": _insights, "choose_place": _unavailable,
          "utterance_commit": _utterance, "summarize_conversation": _summary_social,
          "summarize_conversation_social": _summary_social}


def _social_goal(t: T.SocialGoal) -> dict[str, str]:
    others = "\n".join(f"- {quote(o.name)}: {quote(o.activity)}" + (f" (working toward {quote(o.need)})" if o.need else "")
                       for o in t.others)
    return {"others": others or NONE, "community_goal": quote(t.community_goal) if t.community_goal else NONE,
            "goal": quote(t.goal) if t.goal else "none yet"}


_EXTRA["social_goal"] = _social_goal


@cache
def template(name: str) -> string.Template:
    return string.Template(resources.files("smalltown.llm").joinpath(f"prompts/{name}.txt").read_text())


def render(task: T.Task) -> str:
    """The prompt (no code is executed: `$name` placeholders are filled, text values quoted)."""
    text = template(getattr(type(task), "template_name", task.name)).safe_substitute(_values(task))
    return re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"


def _rate_person(t: T.Task) -> dict[str, str]:
    """From traits alone: an impartial judgement; from a view: as the asker sees the person (its
    card, then its view)."""
    parts = []
    if t.relationship or not t.traits:
        parts += [card(t.persona), f"Judge as {t.persona.name} sees {t.other}."]
    else:
        parts.append("Judge impartially.")
    if t.traits:
        parts.append(f"{t.other}'s innate traits: {quote(t.traits)}")
    if t.relationship or not t.traits:
        view = quote(t.relationship) if t.relationship else "nothing yet"
        parts.append(f"What {t.persona.name} thinks of {t.other}: {view}")
    return {"basis": "\n\n".join(parts)}


_EXTRA["rate_person"] = _rate_person

# issue 17's renderers (the economy, roles) live beside this module, registered into _EXTRA/EXAMPLES
from smalltown.llm import render_work  # noqa: E402,F401
