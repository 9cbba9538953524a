"""Interviews (SPEC 9): the user's question (user text: read freely) answered in the first
person from typed data: plan questions from today's schedule at the asked time, questions about
oneself from the persona and its routine, "Who is X?" from the records that name X, what one
would do from a generic lexicon of everyday mishaps, and anything else from the retrieved
memories, quoted word for word with their times in plain words (never reworded: the stand-in
does not read what a memory says)."""

from __future__ import annotations

import re

from smalltown.llm.tasks import SLEEPING, Block, Interview, InterviewOut, Record
from smalltown.scripted import day
from smalltown.scripted.memory import traits
from smalltown.scripted.registry import answers
from smalltown.scripted.words import clip, clock, first_name, ing, minute, minute_of, when
from smalltown.world.model import DAY

_TIME = re.compile(r"\b(\d{1,2})(?::(\d{2}))?\s*(am|pm|a\.m\.|p\.m\.)?(?=\W|$)", re.I)
_NAME = re.compile(r"\b([A-Z][\w'’-]+(?: [A-Z][\w'’-]+)+|[A-Z][\w'’-]+)")
YES_NO = re.compile(r"^(was|were|is|are|did|do|does|has|have|had|will|would|can)\b", re.I)

# (all of these words, or any of those, in the question) -> what one would do
MISHAPS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("fire", "street"), "I'd call the fire department right away and make sure everyone nearby gets to safety."),
    (("burn",), "I'd turn off the stove at once, take the pan off the heat and open a window, then start again."),
    (("fire",), "I'd put it out if it's small, or get everyone out and call the fire department if it isn't."),
    (("smoke",), "I'd find where the smoke is coming from and put out whatever is burning."),
    (("occupied",), "I'd wait a few minutes for it to be free, and knock gently if it takes too long."),
    (("empty",), "I'd go out and buy groceries, or eat out tonight and shop tomorrow."),
    (("friend",), "I'd wave and say hello, and ask how their day is going."),
    (("leak",), "I'd turn off the water and mop up, then call someone to fix it."),
    (("flood",), "I'd turn off the water and mop up, then call someone to fix it."),
    (("broken",), "I'd see if I can fix it myself, or call someone who can."),
    (("lost",), "I'd retrace my steps and ask the people around me for help."),
)


def asked_minute(q: str) -> int | None:
    low = q.lower()
    if "noon" in low or "midday" in low:
        return 12 * 60
    if "midnight" in low:
        return 0
    for m in _TIME.finditer(q):
        h, mm, ampm = int(m.group(1)), int(m.group(2) or 0), (m.group(3) or "").replace(".", "").lower()
        if not ampm and not m.group(2):
            continue  # a bare number is not a time
        if h > 23 or mm > 59:
            continue
        if ampm == "pm" and h < 12:
            h += 12
        elif ampm == "am" and h == 12:
            h = 0
        return h * 60 + mm
    return None


def _where(b: Block, home: str) -> str:
    place = b.place or home
    if not place or place in b.activity:
        return ""
    return " at home" if place == home else f" at {place}"


def _doing(b: Block, home: str) -> str:
    return "asleep" if b.activity == SLEEPING else ing(b.activity) + _where(b, home)


def plan_answer(task: Interview, at: int, finished: bool) -> str:
    home = task.persona.home
    blocks = sorted(task.schedule, key=lambda b: minute(b.start))
    now = minute_of(task.now)
    past = at < now
    if not blocks:  # no plan made today: the routine stands in
        label = day.routine_minutes(task.persona)[at % DAY]
        doing = "asleep" if label.activity == SLEEPING else ing(label.activity)
        return f"I haven't planned my day yet, but at {clock(at)} I'm usually {doing}."
    if finished:
        ended = [b for b in blocks if minute(b.start) + b.minutes <= at]
        if not ended:
            return f"At {clock(at)} I {'had' if past else 'will have'} only just woken up."
        b = max(ended, key=lambda b: minute(b.start) + b.minutes)
        what = "sleeping" if b.activity == SLEEPING else ing(b.activity) + _where(b, home)
        return (f"By {clock(at)} I had just finished {what}." if past
                else f"At {clock(at)} I'll have just finished {what}.")
    b = next((b for b in blocks if minute(b.start) <= at < minute(b.start) + b.minutes), None)
    if b is None:
        return f"At {clock(at)} I {'was' if past else 'will'} most likely {'' if past else 'be '}asleep."
    return f"At {clock(at)} I was {_doing(b, home)}." if past else f"At {clock(at)} I'll be {_doing(b, home)}."


def _quote(r: Record, now) -> str:
    return f'{when(r.time, now)}: "{r.text.strip()}"'


def _quotes(records: list[Record], now, n: int = 2) -> str:
    top = sorted(records, key=lambda r: (-r.score, -r.importance, -r.id))[:n]
    return "; ".join(_quote(r, now) for r in top)


def _routine_words(task: Interview) -> tuple[list[str], list[str], int, int]:
    """(work activities, leisure activities, wake minute, bed minute) from the routine."""
    p = task.persona
    items = sorted(day.routine(p), key=lambda it: minute(it.start))
    work = list(dict.fromkeys(day.act(it.activity) + (f" at {it.place}" if it.place else "")
                              for it in items if it.kind == "work"))
    leisure = list(dict.fromkeys(day.act(it.activity) for it in items if it.kind == "leisure"))
    sleep = [it for it in items if it.kind == "sleep"]
    bed = minute(sleep[-1].start) if sleep else 23 * 60
    return work, leisure, day.wake_minute(p), bed


def about_self(task: Interview, ql: str) -> str:
    p = task.persona
    work, leisure, wake, bed = _routine_words(task)
    job = f"On most days I {work[0]}." if work else "I don't have a regular job."
    if re.search(r"introduc|about yourself|who are you", ql):
        return f"I'm {p.name}, and I'm {p.age}. People would say I'm {traits(p.traits)}. {job} I live at {p.home}."
    if re.search(r"occupation|your job|for a living|your work|do you work", ql):
        return job
    if re.search(r"interest|hobb|free time|enjoy|like to do", ql):
        likes = f" In my free time I like to {leisure[0]}." if leisure else ""
        care = ", and I care about my work" if work else ""
        return f"I'm {traits(p.traits)}{care}.{likes}"
    if re.search(r"live with|living with|live\b", ql):
        others = [r for r in task.memories if any(a != p.name for a in r.about)]
        known = f" What I remember about home: {_quotes(others, task.now, 1)}." if others else ""
        return f"I live at {p.home}.{known}"
    items = [it for it in sorted(day.routine(p), key=lambda it: minute(it.start))
             if it.kind not in ("sleep", "morning")]
    strokes = [day.act(it.activity) for it in items][:7]
    return clip(f"I usually wake up around {clock(wake)}, then " + ", then ".join(strokes)
                + f", and I go to bed around {clock(bed)}.", 600)


def _names(task: Interview) -> list[str]:
    return list(dict.fromkeys(a for r in task.memories for a in r.about if a != task.persona.name))


def _named_in(question: str, names: list[str]) -> str:
    for n in sorted(names, key=len, reverse=True):
        if n in question or re.search(rf"\b{re.escape(first_name(n))}\b", question):
            return n
    return ""


def interview(seed: int, task: Interview) -> InterviewOut:
    p = task.persona
    q = " ".join(task.question.split())
    ql = q.lower()
    at = asked_minute(q)
    if at is not None and re.search(r"\b(doing|finish\w*|plan\w*|going to|be at|where will|be up to)\b", ql):
        return InterviewOut(answer=plan_answer(task, at, finished=bool(re.search(r"finish", ql))))
    if re.search(r"what would you do|what do you do|what will you do|!", ql):
        for cues, answer in MISHAPS:
            if all(c in ql for c in cues):
                return InterviewOut(answer=answer)
    if re.search(r"\bwhat are you doing\b|\bright now\b", ql):
        return InterviewOut(answer=f"Right now I'm {task.doing}." if task.doing else "Nothing much right now.")
    if re.search(r"introduc|about yourself|who are you|occupation|your job|for a living|your work|do you work|"
                 r"your interest|hobb|free time|live with|living with|where do you live|schedule|typical|weekday|"
                 r"your day", ql):
        return InterviewOut(answer=clip(about_self(task, ql), 600))
    m = re.search(r"\b(?i:who)(?: is|'s) (" + _NAME.pattern + r")", q)
    if m and m.group(1).split()[0] not in ("The", "A", "An"):
        who = m.group(1).strip()
        if who == p.name or who == first_name(p.name):
            return InterviewOut(answer=clip(about_self(task, "introduce"), 600))
        names = _names(task)
        full = next((n for n in names if n == who or first_name(n) == who), "")
        about = [r for r in task.memories if full and full in r.about]
        if not about:
            return InterviewOut(answer=f"I'm sorry, I don't know who {who} is.")
        return InterviewOut(answer=clip(f"{full}? I know them. I remember {_quotes(about, task.now)}.", 600))
    names = _names(task)
    someone = _named_in(q, names)
    m = re.search(r"\b(?:know|met|heard of)\b(?: of| about)? (" + _NAME.pattern + r")", q)
    if m and not someone and m.group(1).split()[0] not in ("The", "A", "An") and m.group(1) != p.name:
        return InterviewOut(answer=f"No, I don't know {m.group(1).strip()}.")  # a person no memory names
    if m and someone and re.match(r"^(do|did|have|has)\b", ql):
        about = [r for r in task.memories if someone in r.about]
        if about:
            return InterviewOut(answer=clip(f"Yes, I know {someone}. I remember {_quotes(about, task.now)}.", 600))
    if re.search(r"spend time|talked to recently|talked with recently", ql):
        chats = [r for r in task.memories if r.kind == "chat" and any(a != p.name for a in r.about)]
        if chats:
            last = max(chats, key=lambda r: (r.time, r.id))
            other = next(a for a in last.about if a != p.name)
            return InterviewOut(answer=clip(f"I'd like to spend more time with {other}. We talked "
                                            f"{_quote(last, task.now)}.", 600))
    if someone:
        about = [r for r in task.memories if someone in r.about]
        if about:
            return InterviewOut(answer=clip(f"Thinking of {someone}, I remember {_quotes(about, task.now)}. "
                                            f"I'd pick something with that in mind.", 600))
        return InterviewOut(answer=f"I don't know {someone} well enough to say.")
    # a question about the world's news is answered from the memories of the very fact asked
    # about (any other news the agent heard is no answer to it), the most relevant first; one
    # about none of the declared facts, from the most relevant memory, if it is news
    if task.asks_about:
        heard = [r for r in task.memories if set(r.facts) & set(task.asks_about)]
        top = max(heard, key=lambda r: (r.score, r.importance, r.id), default=None)
    else:
        top = max(task.memories, key=lambda r: (r.score, r.importance, r.id), default=None)
        top = top if top is not None and top.facts else None
        heard = [r for r in task.memories if top is not None and set(r.facts) & set(top.facts)]
    if YES_NO.match(ql):
        if top is not None:
            return InterviewOut(answer=clip(f"Yes, I think so. I heard {_quote(top, task.now)}.", 600))
        return InterviewOut(answer="Not that I know of.")
    if top is not None:
        return InterviewOut(answer=clip(f"From what I've heard: {_quotes(heard, task.now)}.", 600))
    if re.search(r"inspire", ql):
        work, _, _, _ = _routine_words(task)
        why = f"my work: I {work[0]}, and I like doing it well" if work else "the people around me"
        return InterviewOut(answer=clip(f"What inspires me most right now is {why}.", 600))
    if task.memories:
        return InterviewOut(answer=clip(f"Let me think. I remember {_quotes(task.memories, task.now, 3)}.", 600))
    return InterviewOut(answer="I'm not sure. I don't remember anything about that.")


# the stand-in's answers (scripted/registry.py): the task, the run's seed
answers(Interview)(lambda t, seed: interview(seed, t))
