"""Reacting and talking (SPEC 5): whether to stop for what is seen, the lines of a conversation,
and each side's summary of it.

Decisions come from typed inputs only: whether to talk from how many records name the other,
the untold news, a faith the speaker seeks to spread that the other is not known to share, when
the two last talked and the speaker's extroversion (its traits); a
conversation follows a fixed shape by its line count (greet and ask, answer and ask back, answer,
then news and reactions to news, then goodbye), what a line tells is the speaker's untold news
(`news`, one item a line, never one in `already_told` or already passed in the transcript), and
reactions to news read the typed facts of the last line. Words of the lines come from the world's own text (a fact's text, told in the
first person by its subject), the situation's typed fields (`speaker_doing`, `listener_doing`,
names) and varied templates; no line a speaker wrote is ever read.
"""

from __future__ import annotations

import re
from datetime import datetime

from smalltown.llm.tasks import (
    ConversationOut,
    LastTalk,
    LearnedFact,
    PersonaCard,
    React,
    ReactOut,
    Record,
    SummarizeConversation,
    Utterance,
    UtteranceOut,
)
from smalltown.scripted.belief import faith_line
from smalltown.scripted.goals import phrase
from smalltown.scripted.social import drive, lean
from smalltown.scripted.social import summarize_social
from smalltown.llm.tasks.social import SummarizeConversationSocial
from smalltown.scripted.registry import answers
from smalltown.scripted.words import (
    clip,
    first_name,
    minute_of,
    names_person,
    part_of_day,
    pick,
    sentence,
    when,
    words,
)
from smalltown.seeded import stable_int
from smalltown.world.model import Fact

# chances to start a talk on meeting someone (tuned so news spreads, but not to everyone)
P_STRANGER = 0.02
P_KNOWN = 0.05  # added when records name the other
P_NEWS = 0.15  # added when there is untold news to pass on
P_SEEK = 0.5  # added when the speaker seeks to spread a faith the one seen is not known to share
P_TELL = 0.35  # the chance a speaker brings up a given piece of news with a given listener on a day
TALKED_TODAY = 0.25  # the chance is multiplied by this when the two already talked today
P_GOAL = 0.3  # the chance a line (after the first) brings up what the speaker works toward, when it has a goal
NOT_DOING = ("", "nothing in particular", "idle")

ALARMS: tuple[tuple[frozenset[str], str], ...] = (
    (frozenset("fire burning burnt burned smoke smoking flames flame".split()), "put out the fire on the {o}"),
    (frozenset("leak leaking leaks".split()), "fix the leaking {o}"),
    (frozenset("flood flooded flooding overflowing overflow".split()), "mop up the water by the {o}"),
    (frozenset("broken broke cracked".split()), "fix the broken {o}"),
)
EVENT = frozenset("party celebration gathering festival concert wedding reception picnic dinner ceremony event "
                  "fair show opening meetup performance exhibition parade".split())


def alarm(state: str, obj: str) -> str:
    w = set(words(state))
    for cues, reaction in ALARMS:
        if w & cues:
            return clip(reaction.format(o=obj), 60)
    return ""


def _greeting(seed: int, hour: int, first: str, again: bool, *key: object) -> str:
    if again:
        return pick(seed, (f"Hi again, {first}!", f"Oh, {first}, hello again!", f"Back again, {first}?",
                           f"We keep running into each other, {first}!"), *key, "again")
    daypart = "Good morning" if hour < 12 else "Good afternoon" if hour < 18 else "Good evening"
    return pick(seed, (f"{daypart}, {first}!", f"Hi, {first}!", f"Hello, {first}!", f"Hey, {first}!",
                       f"Oh, hi {first}!", f"{daypart}, {first}."), *key, "greet")


def _doing(d: str) -> str:
    return "" if d.strip() in NOT_DOING else d.strip().rstrip(".")


def _question(seed: int, listener_doing: str, *key: object) -> str:
    doing = _doing(listener_doing)
    generic = ("How are you today?", "How's your day going?", "What are you up to?", "It's good to see you.",
               "How have you been?", "Got a minute?")
    if not doing:
        return pick(seed, generic, *key, "q")
    return pick(seed, (f"I see you're {doing}.", f"Are you {doing}?", f"How is {doing} going?",
                       f"Busy {doing}?", f"Still {doing}?", *generic[:3]), *key, "q")


def react(seed: int, task: React) -> ReactOut:
    me = task.persona.name
    if not task.observed_is_agent:
        obj = task.observed.split(":")[-1].strip() or task.observed
        state = task.observed_state.strip()
        summary = clip(f"{first_name(me)} sees that the {obj} is {state or 'there'}.", 200)
        reaction = alarm(state, obj)
        return ReactOut(context_summary=summary, react=bool(reaction), talk=False, reaction=reaction)
    other = task.observed
    last = task.last_talk
    known = _ties(task.persona, other, task.context, last)
    today = last is not None and last.time.date() == task.now.date()
    tellable = [r for r in task.news if (f := _news_fact(r, task.facts, me, other)) and
                _minded(seed, me, other, f, task.now)]
    chance = P_STRANGER + (P_KNOWN if known else 0.0) + (P_NEWS if tellable else 0.0) + (P_SEEK if seeks(task) else 0.0)
    if today:
        chance *= TALKED_TODAY
    chance *= lean(task.feeling)  # social awareness: liking leans the decision (1.0 when off)
    chance *= drive(task.persona.traits)  # an outgoing agent starts more talks, a reserved one fewer
    talk = stable_int(seed, "talk", me, other, task.now.isoformat()) % 1000 < chance * 1000
    parts = [_view(me, other, known, None, task.now)]
    if last is not None:
        parts.append(f"they last talked {when(last.time, task.now)}: {last.summary.strip()}")
    if tellable:
        f = _news_fact(tellable[0], task.facts, me, other)
        parts.append(f"{first_name(me)} has news to share: {f.text}")
    summary = clip("; ".join(parts) + ".", 200)
    opening = ""
    if talk:
        key = (me, other, task.now.isoformat())
        first = first_name(other)
        if not known:
            hello = pick(seed, (f"Hello! I don't think we've met. I'm {first_name(me)}.",
                                f"Hi there, I'm {first_name(me)}. I don't think we've met.",
                                f"Hello, I'm {first_name(me)}. Nice to meet you."), *key, "meet")
            opening = f"{hello} {_question(seed, task.observed_state, *key)}"
        else:
            hello = _greeting(seed, task.now.hour, first, today, *key)
            opening = f"{hello} {_question(seed, task.observed_state, *key)}"
    return ReactOut(context_summary=summary, react=talk, talk=talk, reaction="", opening=clip(opening, 200))


def seeks(task: React) -> bool:
    """The speaker seeks to spread a faith (a priest's, `React.faiths`) that
    the one seen is not known to hold at its top level."""
    return any(f.listener_level < len(f.levels) for f in task.faiths)


# --- telling news ---------------------------------------------------------------------------------


def _verb_base(verb: str) -> str:
    special = {"is": "am", "has": "have", "does": "do", "goes": "go", "was": "was", "isn't": "am not",
               "hasn't": "haven't", "doesn't": "don't"}
    if verb in special:
        return special[verb]
    if not verb.isalpha() or not verb.islower() or verb.endswith("ss") or len(verb) < 3:
        return verb
    if verb.endswith("ies"):
        return verb[:-3] + "y"
    if verb.endswith(("ches", "shes", "sses", "xes", "zes", "oes")):
        return verb[:-2]
    return verb[:-1] if verb.endswith("s") else verb


def first_person(text: str, name: str) -> str:
    """A fact's world text as its subject says it: "<Name> is hosting a party at her cafe" ->
    "I'm hosting a party at my cafe"; "<Name>'s shop ..." -> "My shop ...". "" when the text
    does not start with the name, or names the speaker again after the transform."""
    t = " ".join(text.split())
    if t.startswith(name + "'s "):
        out = "My " + t[len(name) + 3:]
    elif t.startswith(name + " "):
        verb, _, tail = t[len(name) + 1:].partition(" ")
        base = _verb_base(verb)
        out = ("I'm" if base == "am" else f"I {base}") + (f" {tail}" if tail else "")
    else:
        return ""
    out = re.sub(r"\b(himself|herself|themselves)\b", "myself", out)
    out = re.sub(r"\b(his|her|their)\b", "my", out)
    return "" if names_person(out, name) else out


def _news_fact(r: Record, facts: list[Fact], me: str, listener: str) -> Fact | None:
    """The declared fact a news record lets the speaker tell this listener, if any: never a fact
    to its subject or naming the listener; one naming the speaker only if the speaker is its
    subject and can say it in the first person."""
    by_name = {f.name: f for f in facts}
    for name in r.facts:
        f = by_name.get(name)
        if f is None or f.subject == listener or names_person(f.text, listener):
            continue
        if (f.subject == me or names_person(f.text, me)) and not first_person(f.text, me):
            continue
        return f
    return None


def _minded(seed: int, me: str, other: str, f: Fact, now) -> bool:
    """Whether the speaker brings this news up with this listener today: always its own news (it is
    the fact's subject), others' at a seeded chance (not every conversation turns to every piece of
    news one has heard); the same answer all day."""
    if f.subject == me:
        return True
    return stable_int(seed, "tell", me, other, f.name, now.date().isoformat()) % 1000 < P_TELL * 1000


def _tell(seed: int, f: Fact, me: str, *key: object) -> str:
    eventful = bool(EVENT & set(words(f.text)))
    mine = first_person(f.text, me) if (f.subject == me or names_person(f.text, me)) else ""
    if mine:
        lead = pick(seed, ("Guess what? ", "I have some news: ", "Can I tell you something? ", "By the way, ", ""),
                    *key, "lead")
        line = lead + sentence(mine)
        if eventful:
            line += " " + pick(seed, ("You should come!", "I'd love for you to come.", "I hope you can make it!"),
                               *key, "invite")
        return line
    lead = pick(seed, ("Did you hear? ", "Have you heard? ", "Oh, by the way: ", "I heard some news: ",
                       "You know what? "), *key, "lead")
    line = lead + sentence(f.text)
    if eventful:
        line += " " + pick(seed, ("Are you going?", "Want to come along?", "Will you be there?"), *key, "go")
    return line


# --- a line of the conversation --------------------------------------------------------------------


def _ties(persona: PersonaCard, other: str, records: list[Record], last: LastTalk | None) -> int:
    """How well `persona` knows `other`: 2 well (the world's description of the person names them,
    or many records do), 1 a little (a record names them, or they have talked), 0 not at all."""
    n = sum(other in r.about for r in records)
    if other in persona.description or n > 2:
        return 2
    return 1 if n or last is not None else 0


def _view(me: str, other: str, ties: int, last: LastTalk | None, now: datetime) -> str:
    """One side's view of the other, in the third person as the paper's relationship summaries."""
    view = (f"{me} does not know {other} yet", f"{me} knows {other} a little", f"{me} knows {other} well")[ties]
    return view + (f"; they last talked {when(last.time, now)}" if last is not None else "")


def _relationship(task: Utterance) -> str:
    last = task.last_talk
    ties = _ties(task.persona, task.listener, [*task.memories, *task.news, *task.already_told], last)
    return clip(_view(task.persona.name, task.listener, ties, last, task.now) + ".", 200)


def utterance(seed: int, task: Utterance) -> UtteranceOut:
    me, other = task.persona.name, task.listener
    first = first_name(other)
    lines = task.transcript
    k = len(lines)
    mine = [x for x in lines if x.speaker == me]
    last = lines[-1] if lines and lines[-1].speaker != me else None
    key = (me, other, task.now.isoformat(), k)
    today = task.last_talk is not None and task.last_talk.time.date() == task.now.date()
    rounds = 2 + stable_int(seed, "rounds", *sorted((me, other)), task.now.isoformat()) % 3
    parts: list[str] = []

    # what was just told: thanks, or "I knew that"
    known_facts = {f for r in (*task.news, *task.already_told, *task.memories) for f in r.facts}
    heard = [f for f in (last.facts if last else ()) if f]
    if heard:
        if all(f in known_facts for f in heard):
            parts.append(pick(seed, ("Yes, I heard about that too.", "Oh, I knew that already.",
                                     "I know, I heard that as well.", "Right, someone told me."), *key, "knew"))
        elif any(g.fact in heard and g.end > task.now and g.host != me for g in task.gatherings):
            parts.append(pick(seed, ("That sounds lovely, I'd love to come!", "Oh, wonderful! I'll be there.",
                                     "How fun! Count me in.", "I'd like that very much, thank you!"), *key, "invited"))
        else:
            parts.append(pick(seed, ("Oh, I didn't know that! Thanks for telling me.",
                                     "Really? I hadn't heard. Thanks!", "Wow, that's news to me. Thank you!",
                                     "That sounds exciting, thanks for letting me know!"), *key, "new"))

    # the small talk's shape by line count
    doing = _doing(task.speaker_doing)
    ask_back = ""  # asked after the news, so the question is the last thing said
    if k == 0:
        parts.append(f"{_greeting(seed, minute_of(task.now) // 60, first, today, *key)} "
                     f"{_question(seed, task.listener_doing, *key)}")
    elif not mine:
        parts.insert(0, _greeting(seed, minute_of(task.now) // 60, first, today, *key))
        if doing:
            parts.append(pick(seed, (f"I'm {doing}.", f"Just {doing}.", f"Oh, I'm {doing} right now.",
                                     f"I'm {doing} at the moment."), *key, "doing"))
        else:
            parts.append(pick(seed, ("Not much, really.", "Oh, nothing much.", "Just taking it easy."), *key, "idle"))
        ask_back = pick(seed, ("How about you?", "And you?", f"What are you up to, {first}?",
                               "How has your day been?", "What brings you here?"), *key, "back")
    elif k == 2 and len(mine) == 1:
        if doing:
            answers = (f"Oh, I'm {doing}.", f"Me? {sentence(doing)}", f"I'm {doing}, as it happens.",
                       f"Same as always, {first}: {doing}.", f"Just {doing}, {first}.", f"I'm {doing} today.")
        else:
            answers = ("Oh, nothing much.", "Just keeping busy.", f"Not much, {first}.", "I'm taking a little break.")
        parts.append(pick(seed, answers, *key, "answer"))

    # news: the first untold item this listener may hear, one a line
    passed = {f for x in lines for f in x.facts} | {f for r in task.already_told for f in r.facts}
    tells: list[int] = []
    told = ""
    for i, r in enumerate(task.news, 1):
        f = _news_fact(r, task.facts, me, other)
        if f is None or f.name in passed or not _minded(seed, me, other, f, task.now):
            continue
        told = _tell(seed, f, me, *key)
        parts.append(told)
        tells = [i]
        break

    goal = goal_line(seed, task, *key)  # goal generation: what the speaker works toward, at a seeded chance
    if goal:
        parts.append(goal)

    faith = faith_line(seed, task)  # belief: the doctrine's words, at a seeded chance (scripted/belief.py)
    if faith:
        parts.append(faith)

    # the end: after 2-4 rounds, or when there is nothing left to say
    end = k + 1 >= 2 * rounds or k >= 7 or (k >= 3 and not tells and not heard)
    if ask_back and not end:
        parts.append(ask_back)
    if end:
        parts.append(pick(seed, (f"Anyway, I should get going. See you later, {first}!",
                                 f"Well, I'd better get back to it. Bye, {first}!",
                                 f"It was good to see you, {first}. Take care!",
                                 f"I'll let you get on with your day. See you, {first}!",
                                 f"Talk to you later, {first}!", f"See you around, {first}!",
                                 f"I should get back to {doing}. See you, {first}!" if doing
                                 else f"Bye for now, {first}!",
                                 f"Nice talking to you, {first}. Have a good {part_of_day(minute_of(task.now))}!",
                                 f"Take care, {first}!", f"Catch you later, {first}!"), *key, "bye"))
    elif not parts:
        parts.append(pick(seed, ("That's good to hear.", "Nice.", "I see.", "Sounds good.",
                                 "Glad to hear it."), *key, "filler"))
    text = " ".join(p for p in parts if p)
    while len(text) > 300 and len(parts) > 1:
        # small talk gives way to the news (and the goodbye, which comes last)
        drop = next((i for i, p in enumerate(parts)
                     if p not in (told, faith, goal) and (i < len(parts) - 1 or not end)), None)
        if drop is None:
            break
        parts.pop(drop)
        text = " ".join(p for p in parts if p)
    return UtteranceOut(relationship=_relationship(task) if not task.relationship.strip() else "",
                        utterance=clip(text, 300) or "Hello.", end=end, tells=tells)


def goal_line(seed: int, task: Utterance, *key: object) -> str:
    """The speaker's social goal brought up, in the words of the stand-in's own phrase for its
    typed need (scripted/goals.py; the goal's text is never read): at a seeded chance P_GOAL on a
    line after the first, only when the question gives a goal with its need."""
    if not task.goal or not task.goal_need or not task.transcript:
        return ""
    if stable_int(seed, "goal", *key) % 1000 >= P_GOAL * 1000:
        return ""
    return sentence(pick(seed, ("I've been meaning to {p}.", "Today I'm trying to {p}.", "I'd like to {p}.",
                                "I'm hoping to {p} soon.", "What I want is to {p}."), *key, "goal")
                    .format(p=phrase(task.goal_need)))


# --- afterwards ------------------------------------------------------------------------------------


def summarize(seed: int, task: SummarizeConversation) -> ConversationOut:
    """"X talked with Y about ...": the news learned (the fact's own text), else the news both
    knew, else small talk; `learned` are the facts new to this agent, verbatim."""
    me, other = task.persona.name, task.other
    by_name = {f.name: f for f in task.facts}
    theirs = list(dict.fromkeys(f for x in task.lines if x.speaker == other for f in x.facts if f in by_name))
    learned = [by_name[f] for f in theirs if f not in task.known_facts and by_name[f].subject != me][:3]
    known = [by_name[f] for f in theirs if f in task.known_facts]
    told = any(x.facts for x in task.lines if x.speaker == me)
    announced = {g.fact: g for g in task.gatherings if g.fact}
    base = f"{me} talked with {other} about "

    def topic(f: Fact) -> str:
        g = announced.get(f.name)
        if g is not None:
            name = g.name if g.name.lower().startswith(("the ", "a ")) else f"the {g.name}"
            return f"{name}: {f.text}"
        return f"the news that {f.text}"

    if learned:
        summary = base + topic(learned[0])
    elif known:
        summary = base + topic(known[0]) + f", which {first_name(me)} already knew"
    elif told:
        summary = f"{me} talked with {other} and passed on some news"
    else:
        about = pick(seed, ("how their day was going", "what they were each up to", "everyday things",
                            "their plans for the day", "how things have been lately"),
                     me, other, task.now.isoformat())
        summary = base + about
    if len(summary) > 200:
        g = announced.get((learned or known or [None])[0].name) if (learned or known) else None
        summary = base + (g.name if g else "some news")
    importance = 6 if (learned or known or told) else 5 if len(task.lines) >= 6 else 4
    changes = any(g.fact in {f.name for f in learned} and g.start.date() == task.now.date() and g.end > task.now
                  for g in task.gatherings)
    return ConversationOut(summary=clip(summary, 200), importance=importance,
                           learned=[LearnedFact(fact=clip(f.text, 200), importance=8) for f in learned],
                           plan_changes=changes)


# the stand-in's answers (scripted/registry.py): the task, the run's seed
answers(Utterance)(lambda t, seed: utterance(seed, t))
answers(SummarizeConversation)(lambda t, seed: summarize(seed, t))
answers(SummarizeConversationSocial)(lambda t, seed: summarize_social(t, summarize(seed, t)))
