"""Scripted memory tasks: importance from a keyword lexicon, reflection questions and insights
about the most frequent subjects of the statements, and the three-part summary description."""

from __future__ import annotations

import re

from smalltown.llm.scripted_text import (
    CONVERSATION,
    INSIGHT,
    PLAN_RECORD,
    WORK,
    clip,
    importance,
    is_activity,
    mentions,
    people,
    routine_of,
    top_subjects,
    topic_label,
    topics_of,
)
from smalltown.llm.tasks import (
    Insight,
    Persona,
    RateImportance,
    RateImportanceOut,
    ReflectionInsights,
    ReflectionInsightsOut,
    ReflectionQuestions,
    ReflectionQuestionsOut,
    SummaryDescription,
    SummaryOut,
)
from smalltown.seeded import stable_int

MAX_CITES = 10


def rate_importance(task: RateImportance) -> RateImportanceOut:
    return RateImportanceOut(ratings=[importance(m) for m in task.memories])


# --- what the agent's work is ---------------------------------------------------------------------

def work_label(p: Persona) -> str:
    """The agent's work as a noun phrase without pronouns: "the research paper on ...",
    "the work at Hobbs Cafe"."""
    r = routine_of(p.name, p.description, p.home)
    if r.project:
        proj = re.sub(r"^(a|an|his|her|their) ", "the ", r.project)
        return proj
    sectors = [s for s in re.findall(r"\b(?:at|runs|owns) ((?:The )?[A-Z][\w']*(?: (?:and |of )?[A-Z][\w']*)*)",
                                      p.description) if s not in p.name]
    if sectors:
        return f"the work at {sectors[0]}"
    if r.occupation:
        return f"the work as {'an' if r.occupation[0] in 'aeiou' else 'a'} {r.occupation}"
    return "the daily work"


def work_words(p: Persona) -> set[str]:
    label = work_label(p).lower()
    r = routine_of(p.name, p.description, p.home)
    text = f"{label} {r.occupation}".lower()
    return {w for w in re.findall(r"[a-z]+", text) if len(w) > 3 and w not in ("work", "the", "with", "that")}


def is_work(text: str, words: set[str]) -> bool:
    low = text.lower()
    return bool(WORK.search(low)) or any(w in low for w in words)


# --- reflection -------------------------------------------------------------------------------------

def _ranked_subjects(statements: list[str], persona: str) -> tuple[list[str], list[str]]:
    persons, topics = top_subjects(statements, persona)
    ranked_people = [p for p, _ in sorted(persons.items(), key=lambda kv: (-kv[1], kv[0]))]
    ranked_topics = [t for t, _ in sorted(topics.items(), key=lambda kv: (-kv[1], kv[0]))]
    return ranked_people, ranked_topics


def reflection_questions(task: ReflectionQuestions) -> ReflectionQuestionsOut:
    p = task.persona
    n = p.name
    persons, topics = _ranked_subjects(task.statements, n)
    qs: list[str] = []
    if persons:
        qs.append(f"What is {n}'s relationship with {persons[0]}?")
    for t in topics[:1]:
        qs.append(f"What does {n} think about {topic_label(t, task.statements)}?")
    if not topics:
        qs.append(f"How does {n} feel about {work_label(p)}?")
    qs.append(f"What is {n} most focused on lately?")
    for extra in ([f"What is {n}'s relationship with {x}?" for x in persons[1:3]]
                  + [f"What does {n} think about {topic_label(t, task.statements)}?" for t in topics[1:]]
                  + [f"How does {n} feel about {work_label(p)}?", f"What does {n} care about most?",
                     f"How has {n}'s day been going?"]):
        if len(qs) >= 3:
            break
        if extra not in qs:
            qs.append(extra)
    return ReflectionQuestionsOut(questions=qs[:3])


def _fact(text: str, persona: str) -> str | None:
    """A high-importance statement worth knowing, as a clause ("Isabella Rodriguez is planning
    ..."): not the agent's inner voice, a conversation record or a plan."""
    t = text.strip().rstrip(".")
    if t.lower().startswith(("thought:", "reaction:")) or CONVERSATION.search(t.lower()) or PLAN_RECORD.search(t):
        return None
    m = re.match(rf"^{re.escape(persona)} knows that (.+)$", t)
    if m:
        t = m.group(1)  # an earlier insight: the fact it rests on
    if t.startswith(persona) or not t[:1].isupper() or is_activity(t) or INSIGHT.search(t) or len(t) > 300:
        return None
    return t


def reflection_insights(task: ReflectionInsights) -> ReflectionInsightsOut:
    p = task.persona
    n = p.name
    st = task.statements
    ql = " ".join(task.questions)
    persons, topics = _ranked_subjects(st, n)
    wwords = work_words(p)

    def cites(pred) -> list[int]:
        return [i for i, s in enumerate(st, 1) if pred(s)][:MAX_CITES]

    cands: list[tuple[float, str, list[int]]] = []  # (priority, insight, because)
    for rank, person in enumerate(persons[:3]):
        because = cites(lambda s, q=person: mentions(s, q))
        if not because:
            continue
        texts = " ".join(st[i - 1] for i in because).lower()
        if re.search(r"\b(married|wife|husband)\b", texts):
            text = f"{n} shares a life with {person}"
        elif re.search(r"\b(son|daughter|mother|father|parents?)\b", texts):
            text = f"{n} and {person} are family"
        elif "friend" in texts:
            text = f"{n} is good friends with {person}"
        elif len(because) >= 2:
            text = f"{n} often spends time with {person}"
        else:
            text = f"{n} knows {person}"
        cands.append((len(because) + (5 if person in ql else 0) - rank, text, because))
    because = cites(lambda s: is_work(s, wwords))
    if because:
        cands.append((len(because) + (5 if "work" in ql.lower() or "focused" in ql else 0),
                      f"{n} is dedicated to {work_label(p)}", because))
    for t in topics:
        because = cites(lambda s, t=t: t in topics_of(s))
        label = topic_label(t, st)
        cands.append((len(because) + 6 + (5 if label in ql else 0), f"{n} cares about {label}", because))
    facts = sorted(((importance(s), i, f) for i, s in enumerate(st, 1) if (f := _fact(s, n))),
                   key=lambda x: (-x[0], x[1]))
    seen_facts: set[str] = set()
    for imp, i, f in facts:
        if imp < 7 or f in seen_facts or len(seen_facts) >= 2:
            continue
        seen_facts.add(f)
        same = [j for j, s in enumerate(st, 1) if f in s][:MAX_CITES] or [i]
        cands.append((imp + 4, f"{n} knows that {f}", same))
    if persons or topics:
        top = topic_label(topics[0], st) if topics else persons[0]
        because = cites(lambda s: mentions(s, top) if not topics else topics[0] in topics_of(s))
        if because:
            cands.append((1, f"{n} has been thinking a lot about {top} lately", because))
    routine = cites(lambda s: importance(s) <= 2 and s.startswith(n))
    if routine:
        cands.append((0, f"{n} keeps a steady daily routine", routine))
    own = cites(lambda s: s.startswith(n) and not is_activity(s))
    if own:
        cands.append((-1, f"{n} knows well what matters to them", own))
    picked: list[Insight] = []
    for _, text, because in sorted(cands, key=lambda c: -c[0]):
        text = clip(text, 400)
        if because and all(x.insight != text for x in picked):
            picked.append(Insight(insight=text, because=because, importance=importance(text)))
        if len(picked) == 5:
            break
    fillers = [f"{n} pays attention to what happens around them", f"{n} takes each day as it comes",
               f"{n} notices the small things in daily life", f"{n} likes to keep busy",
               f"{n} is getting used to the rhythm of the town"]
    k = 0
    while len(picked) < 5:
        text = fillers[k % len(fillers)]
        k += 1
        if any(x.insight == text for x in picked):
            continue
        start = 1 + (k * 7) % max(1, len(st))
        picked.append(Insight(insight=text, because=[min(start, max(1, len(st)))], importance=importance(text)))
    return ReflectionInsightsOut(insights=picked)


# --- the summary description (SPEC 6) ---------------------------------------------------------------

def _traits(traits: str) -> str:
    parts = [t.strip() for t in re.split(r",|;", traits) if t.strip()]
    if len(parts) > 1:
        return ", ".join(parts[:-1]) + " and " + parts[-1]
    return parts[0] if parts else "thoughtful"


def _about(records: list[str], name: str) -> list[str]:
    return [r.strip().rstrip(".") for r in records
            if r.strip().startswith(name + " ") and not is_activity(r) and not PLAN_RECORD.search(r)
            and not CONVERSATION.search(r.lower())]


def summary_description(seed: int, task: SummaryDescription) -> SummaryOut:
    p = task.persona
    n = p.name
    r = routine_of(n, p.description, p.home)
    occ_recs = _about(task.occupation, n)
    job_cue = re.compile(r"\b(is an? |is the |works?|runs|owns|studies|teaches|student|professor)\b")
    job = [x for x in occ_recs if job_cue.search(x)]
    if r.occupation:
        job = [x for x in job if r.occupation.lower() in x.lower()] or job
    if job:
        occupation = job[0]
    else:
        w1, w2 = r.work(p.home, False), r.work(p.home, True)
        occupation = f"On most days {n} will {w1}" + (f", then {w2}" if w2 != w1 else "")
    occupation = clip(occupation + ".", 600)

    core_recs = [x for x in _about(task.core, n) if x + "." != occupation]
    liked = [x for x in core_recs if re.search(r"\b(loves?|likes?|enjoys?|cares?|believes?|values?|is a good|"
                                               r"always|often)\b", x) and not job_cue.search(x)]
    core = f"{n} is {_traits(p.traits)}"
    liked.sort(key=lambda x: bool(INSIGHT.search(x)))  # what the agent was told it is, before reflections
    pick = (liked or [x for x in core_recs if not job_cue.search(x)] or [""])[0]
    if pick:
        core += ", and " + pick[len(n) + 1:]
    core = clip(core + ".", 600)

    everything = task.feeling + task.core + task.occupation
    _, topics = top_subjects(everything, n)
    mood = ("good", "hopeful", "content", "optimistic")[stable_int(seed, n, "mood") % 4]
    if topics:
        t = max(sorted(topics), key=lambda k: topics[k])
        label = topic_label(t, everything)
        tail = (f"is looking forward to {label}" if t == "party" else f"is following {label} closely")
        feeling = f"{n} feels {mood} about recent progress in life and {tail}"
    elif any(is_work(x, work_words(p)) for x in task.feeling):
        feeling = f"{n} feels {mood} about recent progress in life, especially with {work_label(p)}"
    else:
        feeling = f"{n} feels {mood} about how life has been going lately"
    who = [x for x in people(" ".join(task.feeling)) if x != n]
    if who:
        feeling += f", and is glad to have {who[0]} around"
    return SummaryOut(core=core, occupation=occupation, feeling=clip(feeling + ".", 600))
