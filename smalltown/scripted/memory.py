"""Memory answers: importance ratings (SPEC 2), reflection questions and insights (SPEC 3), and
the summary description (SPEC 6).

Importance comes from a record's typed fields first: its kind, whether it concerns one of the
world's declared facts, whom it names. A small generic lexicon of danger and strong emotion
lifts a rating; it is the only reading of a memory's words, and it is about the words' weight,
not their meaning. Reflections are built from whom the statements name (`about`) and which
news they concern (`facts`), citing the statements they rest on.
"""

from __future__ import annotations

from collections import Counter
from functools import lru_cache

from smalltown.lang import gerund
from smalltown.llm.tasks import (
    SLEEPING,
    Decompose,
    Insight,
    PersonaCard,
    RateImportance,
    RateImportanceOut,
    Record,
    ReflectionInsights,
    ReflectionInsightsOut,
    ReflectionQuestions,
    ReflectionQuestionsOut,
    SummaryDescription,
    SummaryOut,
)
from smalltown.scripted import day
import smalltown.scripted.steps as steps
from smalltown.scripted.registry import answers
from smalltown.scripted.steps import routine_sights
from smalltown.scripted.words import clip, first_name, fit, ing, pick, words
from smalltown.world.model import RoutineItem

DANGER = frozenset("fire fires burning burnt burned smoke smoking flames flame flood flooded flooding leak leaking "
                   "overflowing broken emergency explosion accident injured bleeding collapsed".split())
STRONG = frozenset("died death dead dying funeral divorce breakup heartbroken pregnant wedding married engaged "
                   "proposal crush fired promoted hospital cancer grief terrified furious crying cried".split())
WARM = frozenset("love loves loved romance romantic kiss dating date".split())
AT_REST = frozenset({"idle"})


def _sights(p: PersonaCard) -> frozenset[str]:
    """What the agent is seen doing on an ordinary day, worded as the engine words a sight."""
    return _sights_of(p.name, p.home, p.routine)


# keyed by what the sights read, not the persona, whose summary changes every day: a town of
# 500 keeps all its agents' sights
@lru_cache(maxsize=4096)
def _sights_of(name: str, home: str, routine: tuple[RoutineItem, ...]) -> frozenset[str]:
    return frozenset(f"{name} is {gerund(s)}" for s in routine_sights(day.routine_of(routine), home))


def rate(r: Record, p: PersonaCard) -> int:
    """1 (mundane) .. 10 (poignant) from typed fields, lifted by the danger/emotion lexicon."""
    w = set(words(r.text))
    if w & DANGER:
        return 9
    others = [a for a in r.about if a != p.name]
    if r.kind == "reflection":
        base = 8  # asked to be rated, a reflection is an inner voice (insights carry their own rating)
    elif r.kind == "chat":
        base = 6 if r.facts else 5 if others else 4
    elif r.kind == "plan":
        base = 5 if r.facts else 3
    elif r.facts:
        base = 8  # news the world declares
    elif not r.about and w & AT_REST:
        base = 1  # an object at rest
    elif others:
        base = 3  # someone else seen, or a phrase about them
    elif r.text in _sights(p):
        base = 2  # one's own routine
    else:
        base = 3 if r.about else 2
    if w & STRONG:
        base = max(base, 7)
    elif w & WARM:
        base = max(base, 5)
    return base


def rate_importance(task: RateImportance) -> RateImportanceOut:
    return RateImportanceOut(ratings=[rate(r, task.persona) for r in task.memories])


# --- reflection -----------------------------------------------------------------------------------


def _people(statements: list[Record], me: str) -> list[str]:
    """Others the statements name, most often named first (ties: first named first)."""
    count: Counter[str] = Counter()
    first: dict[str, int] = {}
    for i, r in enumerate(statements):
        for a in r.about:
            if a != me:
                count[a] += 1
                first.setdefault(a, i)
    return sorted(count, key=lambda a: (-count[a], first[a]))


def _work(p: PersonaCard) -> list[str]:
    return [day.act(it.activity) for it in sorted(day.routine(p), key=lambda it: it.start) if it.kind == "work"]


def reflection_questions(task: ReflectionQuestions) -> ReflectionQuestionsOut:
    me = task.persona.name
    statements = [*task.statements, *task.rate]  # the newest are statements too
    people = _people(statements, me)
    qs: list[str] = []
    if people:
        qs.append(f"What is {me}'s relationship with {people[0]}?")
    if any(r.facts for r in statements):
        qs.append(f"What news has {me} heard lately, and from whom?")
    work = _work(task.persona)
    if work:
        qs.append(f"How does {me} feel about {ing(work[0])}?")
    qs += [f"What is {me}'s relationship with {x}?" for x in people[1:3]]
    qs += [f"What is {me} most focused on lately?", f"How has {me}'s day been going?",
           f"What does {me} care about most?"]
    out = list(dict.fromkeys(fit(q, 120) for q in qs))[:3]
    return ReflectionQuestionsOut(questions=out, ratings=[rate(r, task.persona) for r in task.rate])


def reflection_insights(task: ReflectionInsights) -> ReflectionInsightsOut:
    """Five insights, each citing the statements (1..N) it rests on: whom the agent spends time
    with, the news it knows (quoted), its routine and plans; general ones cite the statements
    that weigh most."""
    p, st = task.persona, task.statements
    me = p.name
    n = len(st)
    cands: list[tuple[float, str, list[int], int]] = []  # (priority, insight, because, importance)

    def cite(pred) -> list[int]:
        return [i for i, r in enumerate(st, 1) if pred(r)][:5]

    for rank, person in enumerate(_people(st, me)[:3]):
        because = cite(lambda r, x=person: x in r.about)
        chats = [i for i in because if st[i - 1].kind == "chat"]
        if chats:
            text, imp = f"{me} enjoys talking with {person}", 6
        elif len(because) >= 3:
            text, imp = f"{me} spends a lot of time around {person}", 5
        elif len(because) == 2:
            text, imp = f"{me} often crosses paths with {person}", 5
        else:
            text, imp = f"{me} knows {person}", 5
        cands.append((10 + len(because) - rank, text, because, imp))
    facts = list(dict.fromkeys(f for r in st for f in r.facts))
    for lead, f in zip(("knows the news", "has also heard"), facts):  # distinct leads: distinct insights
        because = cite(lambda r, f=f: f in r.facts)
        best = max(because, key=lambda i: (st[i - 1].importance, st[i - 1].score, -i))
        quote = st[best - 1].text.strip()
        text = clip(f'{me} {lead}: "{quote}"', 160) if quote else f"{me} {lead} some news"
        cands.append((20 + len(because), text, because, 6))
    sights = _sights(p)
    own = cite(lambda r: r.kind == "observation" and (r.text in sights or r.about == (me,)))
    if own:
        cands.append((5, f"{me} keeps to a steady daily routine", own, 5))
    plans = cite(lambda r: r.kind == "plan")
    if plans:
        cands.append((4, f"{me} plans the days ahead with care", plans, 5))
    thoughts = cite(lambda r: r.kind == "reflection")
    if thoughts:
        cands.append((3, f"{me} has been thinking things over lately", thoughts, 5))
    weighty = sorted(range(1, n + 1), key=lambda i: (-st[i - 1].importance, -st[i - 1].score, i))
    fillers = (f"{me} pays attention to what happens around them", f"{me} takes each day as it comes",
               f"{me} notices the small things in daily life", f"{me} likes to keep busy",
               f"{me} is settling into the rhythm of the town", f"{me} values the people nearby")
    for k, text in enumerate(fillers):
        because = [weighty[k % n]] if n else [1]
        cands.append((-k, text, because, 5))
    # every candidate is distinct by construction (names, leads, fixed phrases), so the choice of
    # five never depends on what the quoted memories say
    best5 = sorted(cands, key=lambda c: -c[0])[:5]
    return ReflectionInsightsOut(insights=[Insight(insight=clip(text, 160), because=list(dict.fromkeys(because))[:5],
                                                   importance=imp) for _, text, because, imp in best5])


# --- the summary description ------------------------------------------------------------------------


def traits(traits: str) -> str:
    parts = [t.strip() for t in traits.replace(";", ",").split(",") if t.strip()]
    if len(parts) > 1:
        return ", ".join(parts[:-1]) + " and " + parts[-1]
    return parts[0] if parts else "easy-going"


def summary_description(seed: int, task: SummaryDescription) -> SummaryOut:
    """Traits (and the most telling memory about oneself, quoted), the routine's work, a mood."""
    p = task.persona
    me, first = p.name, first_name(p.name)
    sights = _sights(p)
    core = f"{me} is {traits(p.traits)}."
    telling = [r for r in task.core if me in r.about and r.text not in sights and r.kind != "plan"
               and (r.importance == 0 or r.importance >= 3)]
    if telling:
        best = max(telling, key=lambda r: (r.score, r.importance, -r.id))
        core = clip(f"{core} {best.text.strip()}", 150)
    items = sorted(day.routine(p), key=lambda it: it.start)
    work = [it for it in items if it.kind == "work"]
    if work:
        where = work[0].place or "home"
        doing = ing(day.act(work[0].activity))
        said = where.lower() in doing.lower() or (where == "home" and "home" in doing)  # "in the park at the park"
        at = "" if said else f" at {where}"
        occupation = f"On most days {first} is {doing}{at}"
        if len(work) > 1 and day.act(work[1].activity) != day.act(work[0].activity):
            occupation += f", and later {ing(day.act(work[1].activity))}"
    else:
        awake = [it for it in items if it.kind != "sleep" and it.activity != SLEEPING]
        longest = max(awake, key=lambda it: it.minutes) if awake else None
        occupation = (f"{first} has no regular job and spends much of the day {ing(day.act(longest.activity))}"
                      if longest else f"{first} has no regular job")
    mood = pick(seed, ("content", "hopeful", "cheerful", "optimistic", "calm", "busy but happy"),
                me, task.now.date().isoformat(), "mood")
    feeling = f"{first} feels {mood} about how life is going"
    recent = task.feeling + task.core + task.occupation
    if any(r.facts for r in recent):
        feeling += " and is excited about the latest news in town"
    people = _people(recent, me)
    if people:
        feeling += f", and is glad to have {people[0]} around"
    return SummaryOut(core=clip(core, 150), occupation=clip(occupation + ".", 150), feeling=clip(feeling + ".", 150))


# the stand-in's answers (scripted/registry.py): the task, the run's seed
answers(RateImportance)(lambda t, seed: rate_importance(t))
answers(ReflectionQuestions)(lambda t, seed: reflection_questions(t))
answers(ReflectionInsights)(lambda t, seed: reflection_insights(t))
answers(SummaryDescription)(lambda t, seed: summary_description(seed, t))
answers(Decompose)(lambda t, seed: steps.decompose(t, rate))  # (steps is below memory: the rating is handed in)
