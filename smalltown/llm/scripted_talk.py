"""Scripted reacting and talking: whether to stop for an observation, template dialogue that
greets, asks after the listener and passes on the speaker's most important news VERBATIM (so a
sentence heard is the sentence told, and news spreads as in the paper), the summary of what was
learned, and interview answers built only from what the agent remembers."""

from __future__ import annotations

import re

from smalltown.llm.scripted_text import (
    CONVERSATION,
    INNER,
    INSIGHT,
    WHEN,
    NEWS,
    PLAN_RECORD,
    clip,
    WORK,
    first_person,
    importance,
    is_activity,
    mentions,
    norm,
    people,
    routine_of,
    sentence,
    topic_label,
    topics_of,
    unsentence,
)
from smalltown.llm.tasks import (
    ConversationOut,
    Interview,
    InterviewOut,
    Persona,
    React,
    ReactOut,
    SummarizeConversation,
    Utterance,
    UtteranceOut,
)
from smalltown.seeded import stable_int

# --- reacting -----------------------------------------------------------------------------------

ALARMS: tuple[tuple[str, str], ...] = (
    # (state word, reaction: {o} is the object)
    (r"burn\w*|fire|smok\w*|flames?", "put out the fire on the {o}"),
    (r"leak\w*", "turn off the leaking {o}"),
    (r"overflow\w*", "turn off the overflowing {o}"),
    (r"flood\w*", "mop up the water around the {o}"),
    (r"broken", "fix the broken {o}"),
)
BUSY = re.compile(r"\b(sleep\w*|asleep|talking|in conversation|conversation with|chatting with)\b")


def alarm(state: str, obj: str) -> str | None:
    low = state.lower()
    for pat, reaction in ALARMS:
        if re.search(rf"\b(?:{pat})\b", low):
            return reaction.format(o=obj)
    return None


def react(seed: int, task: React) -> ReactOut:
    n = task.persona.name
    lines = [c.strip() for c in task.context if c.strip()]
    if not task.observed_is_agent:
        obj = task.observed.split(":")[-1].strip() or task.observation.split(" is ")[0]
        state = task.observation.split(" is ", 1)[1] if " is " in task.observation else task.observation
        about = next((c for c in lines if obj.lower() in c.lower() and c != task.observation), "")
        summary = clip(f"{n} sees that the {task.observation.strip().rstrip('.')}."
                       + (f" {sentence(about)}" if about else ""), 800)
        reaction = alarm(state, obj)
        if reaction:
            return ReactOut(context_summary=summary, react=True, talk=False, reaction=reaction)
        return ReactOut(context_summary=summary, react=False, talk=False, reaction="")

    other = task.observed
    relevant = [c for c in lines if mentions(c, other) and not c.lower().startswith("thought:")]
    if relevant:
        summary = f"{n} knows {other}: {relevant[0].rstrip('.')}."
    elif lines:
        summary = f"{n} does not know {other} well; {n} remembers that {lines[0][:1].lower() + lines[0][1:].rstrip('.')}."
    else:
        summary = f"{n} does not know {other}."
    summary = clip(summary, 800)
    if BUSY.search(task.status.lower()) or BUSY.search(task.observation.lower()):
        return ReactOut(context_summary=summary, react=False, talk=False, reaction="")
    news = any(importance(c) >= NEWS and not mentions(c, other) and not c.lower().startswith("thought:")
               for c in lines)
    chance = 2 + (8 if relevant else 0) + (25 if news else 0)  # per considered encounter; tuned so news spreads about as in the paper
    talk = stable_int(seed, n, other, task.time, "talk") % 100 < chance
    opening = ""
    if talk:  # packed: the first line of the conversation comes with the decision
        first = utterance(seed, Utterance(persona=task.persona, listener=other, time=task.time, place="",
                                          memories=task.context, transcript=[]))
        opening = first.utterance
    return ReactOut(context_summary=summary, react=talk, talk=talk, reaction="", opening=opening)


# --- dialogue -------------------------------------------------------------------------------------

HEARD = "Did you hear? "
MINE = "Guess what? "
INVITE = "You're invited! "
MARKERS = (HEARD, MINE, INVITE)
_SECRET = re.compile(r"\b(secret|secretly|private|privately)\b", re.I)


def split_line(line: str) -> tuple[str, str]:
    who, sep, text = line.partition(": ")
    return (who.strip(), text.strip()) if sep else ("", line.strip())


def news_in(text: str) -> list[str]:
    """The news sentences a line passes on: what follows a marker, to the end of the line (the
    templates always put the news last), stored form (no final full stop)."""
    out = []
    for marker in MARKERS:
        i = text.find(marker)
        if i >= 0:
            out.append(unsentence(text[i + len(marker):]))
    return out


def news_candidates(memories: list[str], speaker: str, listener: str) -> list[str]:
    """The speaker's news, most important first: memories rated NEWS or more that are worth
    repeating word for word (not about the listener, not a thought, a secret, a plan, a
    conversation record or a routine sight)."""
    scored = []
    for i, m in enumerate(memories):
        t = m.strip()
        k = re.match(r"^[A-Z][a-z]+(?: [A-Z][a-z]+)+ knows that (.+)$", t)
        if k:
            t = k.group(1)  # an insight about a fact: pass on the fact itself
        t = unsentence(t)
        if (not t or not t[:1].isupper() or t.lower().startswith(("thought:", "reaction:"))
                or mentions(t, listener) or _SECRET.search(t) or PLAN_RECORD.search(t)
                or CONVERSATION.search(t.lower()) or INSIGHT.search(t) or is_activity(t) or len(t) > 480):
            continue
        if t.startswith(speaker + " ") and INNER.match(t[len(speaker) + 1:]):
            continue  # one's own feelings are not news
        r = importance(t)
        if r >= NEWS:
            dated = bool(WHEN.search(t))  # of equal weight, the news that says when comes first
            scored.append((-r, not dated, i, t))
    return list(dict.fromkeys(t for *_, t in sorted(scored)))


def _said(text: str, transcript_norm: str) -> bool:
    return norm(text) in transcript_norm


def ask_after(memories: list[str], listener: str) -> str:
    """A question from what the speaker remembers of the listener."""
    first = listener.split()[0]
    for m in memories:
        t = unsentence(m)
        if not t.startswith(listener + " ") or importance(t) >= NEWS:
            continue
        rest = t[len(listener) + 1:]
        g = re.match(r"^is (?:working on|writing|composing|preparing|planning) (.+?)(?: at .+| for .+)?$", rest)
        if g:
            obj = re.sub(r"^(a|an|his|her|their) ", "your ", g.group(1))
            obj = re.sub(r"^(?!your |the )", "your ", obj)
            return f"How is {obj} coming along?"
        g = re.match(r"^is (?:a|an|the) ([\w' -]+?)(?: at ((?:The )?[A-Z][\w' ]+?))?(?: who .*| where .*|,.*)?$", rest)
        if g:
            if g.group(2):
                return f"How are things at {g.group(2).strip()}?"
            return f"How is life as {'an' if g.group(1)[0] in 'aeiou' else 'a'} {g.group(1)}?"
        if is_activity(t):
            what = rest.removeprefix("is ")
            what = re.sub(r"\b(his|her|their)\b", "your", what)
            return f"I saw you {what} earlier. How did it go?" if len(what) < 80 else f"How are you, {first}?"
    for m in memories:  # something the two share
        low = m.lower()
        if not mentions(m, listener) or m.lower().startswith("thought:") or CONVERSATION.search(low):
            continue
        if "politic" in low:
            return "What do you make of the local politics these days?"
        if WORK.search(low):
            return "How is work going?"
        if re.search(r"\b(family|son|daughter|wife|husband|parents)\b", low):
            return "How is the family?"
    return ""


ACKS = ("Really? That's good to know.",)
_ANSWERED = "I'm doing well, thanks."


def answer_to(line: str, p: Persona) -> str:
    """A reply to what was asked ("How is work going?", "What do you make of the local politics?")."""
    asked = [q for q in re.findall(r"[^.!?]*\?", line) if q.strip() not in ("Really?", "Did you hear?", "Guess what?")]
    low = " ".join(asked).lower()
    if "politic" in low:
        return f"{_ANSWERED} I've been following the local politics closely, as always."
    if "family" in low:
        return f"{_ANSWERED} The family is doing fine."
    return f"{_ANSWERED} I've been busy with {busy_with(p)}."


def asks(text: str) -> bool:
    """The line asks after the listener (not "Did you hear?", not "Really?")."""
    for marker in MARKERS:
        text = text.split(marker)[0]
    for a in ACKS:
        text = text.replace(a, "")
    return "?" in text


def busy_with(p: Persona) -> str:
    r = routine_of(p.name, p.description, p.home)
    if r.project:
        return re.sub(r"^(the|a|an|his|her|their) ", "my ", r.project)
    w = r.workplace if r.workplace != p.home else ""
    return {"student": f"my classes{' at ' + w if w else ''}", "teacher": f"my teaching{' at ' + w if w else ''}",
            "owner": f"running {w}" if w else "my work", "bartender": f"my shifts{' at ' + w if w else ''}",
            "worker": f"work{' at ' + w if w else ''}", "retired": "things around the house"}.get(r.role, "my work")


def _greeting(time: str, first: str, roll: int) -> str:
    m = re.search(r"(\d{1,2}):\d{2}\s*$", time)
    hour = int(m.group(1)) if m else 12
    part = "Good morning" if hour < 12 else "Good afternoon" if hour < 18 else "Good evening"
    return f"{(part, 'Hi', 'Hello', 'Hey')[roll % 4]}, {first}!"


def rounds_for(seed: int, a: str, b: str, opening: str) -> int:
    """2-4 rounds, the same for both speakers of one conversation."""
    return 2 + stable_int(seed, *sorted((a, b)), opening, "rounds") % 3


def utterance(seed: int, task: Utterance) -> UtteranceOut:
    me, other = task.persona.name, task.listener
    first = other.split()[0]
    lines = [split_line(x) for x in task.transcript]
    mine = [t for w, t in lines if w == me]
    theirs = [t for w, t in lines if w != me]
    said_norm = norm(" ".join(t for _, t in lines))
    last = lines[-1][1] if lines and lines[-1][0] != me else ""
    roll = stable_int(seed, me, other, len(lines), lines[0][1] if lines else task.time)
    parts: list[str] = []

    if not mine:
        parts.append(_greeting(task.time, first, roll))
    # acknowledge what was just passed on
    heard = news_in(last)
    mem_norms = [norm(m) for m in task.memories]
    for h in heard:
        known = any(norm(h) and norm(h) in mn for mn in mem_norms)
        if INVITE in last and not known:
            parts.append("That sounds lovely, I'd love to come!")
        elif known:
            parts.append(("Yes, I heard about that too!", "Oh yes, I know about that.")[roll % 2])
        else:
            parts.append(("Oh, I didn't know that! Thanks for telling me.", "Really? That's good to know.",
                          "Wow, I hadn't heard. Thanks!")[roll % 3])
    # answer a question about oneself
    if asks(last) and not any(_ANSWERED in t for t in mine):
        parts.append(answer_to(last, task.persona))
    # decide whether this line ends the conversation
    rounds_after = min(len(mine) + 1, len(theirs))
    limit = rounds_for(seed, me, other, lines[0][1] if lines else "")
    news = [c for c in news_candidates(task.memories, me, other) if not _said(c, said_norm)]
    last_had_news = bool(heard)
    end = (rounds_after >= limit or len(lines) >= 15
           or (not news and not last_had_news and bool(mine) and bool(theirs)))
    if end:
        parts.append(("Anyway, I should get going.", "Well, I'd better get back to it.",
                      "I should let you go.")[roll % 3] + f" See you later, {first}!")
        return UtteranceOut(utterance=clip(" ".join(parts), 600), end=True)
    if not mine:
        q = ask_after(task.memories, other)
        if q:
            parts.append(q)
        elif not lines:
            parts.append("How are you?")
        else:
            parts.append("How about you?")
    if news:
        item = news[0]
        marker = INVITE if item.startswith(me) and re.search(r"\bpart(y|ies)\b", item, re.I) \
            else MINE if item.startswith(me) else HEARD
        tail = marker + sentence(item)
        head = " ".join(parts)
        if len(head) + 1 + len(tail) > 600:
            head = " ".join(parts[:1])
        parts = [head, tail] if head else [tail]
    elif not parts or parts == [_greeting(task.time, first, roll)]:
        parts.append("It's nice to see you.")
    return UtteranceOut(utterance=clip(" ".join(p for p in parts if p), 600), end=False)


def summarize_conversation(task: SummarizeConversation) -> ConversationOut:
    me, other = task.persona.name, task.other
    lines = [split_line(x) for x in task.transcript]
    mine_norm = norm(" ".join(t for w, t in lines if w == me))
    learned: list[str] = []
    for who, text in lines:
        if who == me:
            continue
        found = news_in(text)
        if not found:  # a transcript not in the templates' words: its declarative news sentences
            for s in re.split(r"(?<=[.!])\s+(?=[A-Z])", text):
                s = s.strip()
                if (s and not s.endswith("?") and importance(s) >= NEWS
                        and not re.search(r"\b(I|I'm|I'd|I've|you|your|we|my|me)\b", s)):
                    found.append(unsentence(s))
        for f in found:
            if f and not (norm(f) and norm(f) in mine_norm) and f not in learned:
                learned.append(f)
    everything = [t for _, t in lines]
    topics: list[str] = []
    for t in everything:
        for k in topics_of(t):
            if k not in topics:
                topics.append(k)
    if topics:
        about = " and ".join(topic_label(k, everything) for k in topics[:2])
    elif any("politic" in t.lower() for t in everything):
        about = "the local politics"
    elif any("?" in t for t in everything):
        about = "how they have been"
    else:
        about = "their day"
    summary = clip(f"{me} talked with {other} about {about}", 400)
    facts = [clip(x, 600) for x in learned[:5]]
    chat = f"{summary} (" + " / ".join(task.transcript) + ")"
    return ConversationOut(summary=summary, importance=importance(chat), learned=facts,
                           learned_importance=[importance(f) for f in facts])


# --- interviews -------------------------------------------------------------------------------------

_QSTOP = {
    "a", "an", "the", "is", "are", "was", "were", "be", "been", "do", "does", "did", "you", "your", "yourself",
    "i", "me", "my", "what", "who", "whom", "when", "where", "why", "how", "which", "would", "will", "could",
    "can", "should", "of", "to", "in", "on", "at", "for", "with", "about", "and", "or", "it", "that", "this",
    "there", "any", "tell", "know", "think", "give", "some", "have", "has", "had", "if", "most", "right",
    "now", "today", "doing", "they", "them", "their", "he", "she", "his", "her", "from", "so", "describe",
}
_SYNONYMS = {
    "election": {"election", "mayor", "mayoral", "candidate", "campaign", "running"},
    "running": {"running", "election", "mayor", "candidate", "campaign"},
    "mayor": {"mayor", "election", "campaign", "running"},
    "party": {"party", "valentine", "invite", "invited"},
    "valentine": {"valentine", "party"},
    "occupation": {"work", "job", "student", "professor", "owner", "runs", "shopkeeper", "clerk",
                   "bartender", "writer", "painter", "engineer", "lawyer", "poet", "philosopher",
                   "photographer", "artist", "mathematician", "retired", "bookkeeper", "author", "actor"},
    "job": {"work", "job", "occupation"},
    "work": {"work", "job", "works"},
    "live": {"live", "lives", "share", "shares", "dorm", "house", "apartment", "married"},
    "interest": {"love", "loves", "like", "likes", "enjoy", "enjoys", "interest"},
    "inspire": {"inspiration", "inspire", "love", "loves", "passion", "proud"},
}
REACTIONS = (
    (r"burn\w*|fire|smok\w*", "I would stop what I'm doing and put out the fire right away."),
    (r"leak\w*|overflow\w*|flood\w*", "I would turn off the water and clean up the mess."),
    (r"occupied", "I would wait a little until it is free."),
    (r"empty", "I would go out and buy what I need."),
    (r"friend", "I would say hello and ask how they are doing."),
)


def _stem(w: str) -> str:
    w = w.removesuffix("'s")
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
        return w[:-1]
    return w


def _qwords(text: str) -> set[str]:
    return {_stem(w) for w in re.findall(r"[a-z0-9']+", text.lower()) if w not in _QSTOP}


def _in_words(memory: str, name: str) -> str:
    """A memory as the agent would say it: first person about itself, "I saw ..." for a sight."""
    if is_activity(memory):
        who, act = memory.split(" is ", 1)
        act = re.sub(r"\b(his|her|their)\b", "my", act) if who == name else act
        if who == name:
            return sentence(f"Earlier I was {act}" if act.split(" ")[0].endswith("ing") else f"Earlier I set out to {act}")
        return sentence(f"I saw {who} {act}")
    if memory.startswith(name) or memory.lower().startswith("thought:"):
        return first_person(memory, name)
    return sentence(memory)


def interview(task: Interview) -> InterviewOut:
    p = task.persona
    n = p.name
    q = task.question.strip()
    ql = q.lower()
    named = [x for x in people(q) if x != n]
    mems = [m.strip() for m in task.memories if m.strip() and not PLAN_RECORD.search(m)]

    if re.search(r"\bintroduc\w*|about yourself|who are you", ql):
        mine = [first_person(m, n) for m in mems if m.startswith(n + " ") and not is_activity(m)][:3]
        intro = [f"I'm {n}, and I'm {p.age}."]
        return InterviewOut(answer=clip(" ".join(intro + mine), 1500))

    for pat, answer in REACTIONS:
        if re.search(rf"\b(?:{pat})\b", ql) and re.search(r"\bwhat would you do\b|\byou see\b|!", ql):
            return InterviewOut(answer=answer)

    if named:
        who = named[0]
        about = [m for m in mems if who in m]
        if not about:
            return InterviewOut(answer=f"I'm sorry, I don't know who {who} is.")
        ranked = about
    else:
        qw = _qwords(q)
        expanded = set(qw)
        for w in qw:
            expanded |= _SYNONYMS.get(w, set())
        names = {_stem(w.lower()) for w in n.split()} if re.search(r"\byou(r|rself)?\b", ql) else set()
        expanded -= names
        scored = []
        for i, m in enumerate(mems):
            mw = _qwords(m)
            s = len(mw & expanded) + 0.1 * bool(mw & names)
            if s:
                scored.append((-s, -importance(m), i, m))
        if any(s <= -1 for s, *_ in scored):
            scored = [x for x in scored if x[0] <= -1]  # on the topic, not merely about oneself
        ranked = [m for *_, m in sorted(scored)]
        if not ranked:
            if re.match(r"^(was|were|is|are|did|do|does|has|have)\b", ql):
                return InterviewOut(answer="I don't know anything about that.")
            return InterviewOut(answer="I'm not sure. I don't remember anything about that.")
    picked = list(dict.fromkeys(ranked))[:3]
    said = [_in_words(m, n) for m in picked]
    said = [re.sub(r"\s*\(at .+\)\.$", ".", s) for s in said]  # a chat record's transcript
    lead = "Yes. " if re.match(r"^(was|were|is|are|did|has|have)\b", ql) and not named else ""
    return InterviewOut(answer=clip(lead + " ".join(said), 1500))
