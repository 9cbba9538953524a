"""The paper's interview: 5 categories x 5 questions (SPEC 9). Bracketed names come from the
agent's own memory: {met1}/{met2} someone it met, {most} the agent it talked with most; the
questions about the town's news, {news1}/{news2}, are the world's own: its declared facts'
questions (the paper asked about its own town's news)."""

from __future__ import annotations

from collections import Counter

from smalltown.eval.town import Town

QUESTIONS: list[tuple[str, list[str]]] = [
    ("self-knowledge", [
        "Give an introduction of yourself.",
        "What's your occupation?",
        "What is your interest?",
        "Who do you live with?",
        "Describe your typical weekday schedule in broad strokes.",
    ]),
    ("memory", [
        "Who is {met1}?",
        "Who is Kane Martinez?",  # nobody: the right answer is not knowing
        "{news1}",
        "{news2}",
        "Who is {met2}?",
    ]),
    ("plans", [
        "What will you be doing at 6am today?",
        "What will you be doing at 6pm today?",
        "What will you be doing at 10pm today?",
        "What will you have just finished doing at 1pm today?",
        "What will you have just finished doing at 12pm today?",
    ]),
    ("reactions", [
        "Your breakfast is burning! What would you do?",
        "The bathroom is occupied. What would you do?",
        "You need to cook dinner but your refrigerator is empty. What would you do?",
        "You see your friend walking by the street. What would you do?",
        "You see fire on the street. What would you do?",
    ]),
    ("reflections", [
        "What inspires you in life the most right now, and why?",
        "Given what you know about {most}, what book do you think they will like?",
        "What would you get {most} for their birthday?",
        "What would you say to {most} to compliment them?",
        "If you could spend time with someone you talked to recently, who would it be and why?",
    ]),
]


# asked when the world declares fewer than two facts
NO_NEWS = ("Has anything new happened in town lately?", "Is anything special happening in town soon?")


def acquaintances(town: Town, agent: str) -> list[str]:
    """Others in the agent's memory: those it talked with (most first), then those it only
    remembers otherwise (most named first)."""
    talks: Counter[str] = Counter()
    named: Counter[str] = Counter()
    for m in town.of(agent):
        if m.kind == "chat" and town.partner.get(m.id):
            talks[town.partner[m.id]] += 1
        named.update(n for n in town.people_in(m.description) if n != agent)
    return [n for n, _ in talks.most_common()] + [n for n, _ in named.most_common() if n not in talks]


def fill(town: Town, agent: str) -> tuple[dict[str, str], list[str]]:
    """Names for the brackets, and notes where memory had too few (the town's others stand in)."""
    known = acquaintances(town, agent)
    others = [a for a in town.agents if a != agent and a not in known]
    picks = (known + others + ["nobody"] * 2)[:2]
    notes = []
    if len(known) < 2:
        notes.append(f"{agent} remembers {len(known)} other agent(s); the rest of the questions name "
                     f"{', '.join(picks[len(known):]) or 'nobody'}")
    news = [f.question for f in town.world.facts] + list(NO_NEWS)
    return {"met1": picks[0], "met2": picks[1], "most": picks[0], "news1": news[0], "news2": news[1]}, notes


def questions_for(town: Town, agent: str) -> tuple[list[tuple[str, str]], list[str]]:
    """(category, question) for one agent, brackets filled, and notes."""
    names, notes = fill(town, agent)
    return [(cat, q.format(**names)) for cat, qs in QUESTIONS for q in qs], notes
