"""The measures of SPEC 9 on one town, as plain data (what report.json holds): from memory and
the event log, and, given an Interviewer, from the agents' own answers checked against memory."""

from __future__ import annotations

from collections import Counter

from smalltown.eval.coordination import ATTEND_MINUTES, Turnout, turnout
from smalltown.eval.diffusion import Spread, spread
from smalltown.eval.interview import Interviewer, claims, names_person
from smalltown.eval.questions import questions_for
from smalltown.eval.relationships import Acquaintance, acquaintance, density, mutual
from smalltown.eval.town import Town
from smalltown.store.schema import TIME_FMT

NO_FACTS = ("this save's world declares no facts to follow, so there is no diffusion or coordination to "
            "measure: declare them with [[facts]] and [[gatherings]] in the world file (docs/world-format.md), "
            "or take them from a world file that does with --facts FILE")


def _t(when) -> str:
    return when.strftime(TIME_FMT)


def measure_town(town: Town, interviewer: Interviewer | None = None) -> dict:
    spreads = {f.name: spread(town, f) for f in town.world.facts}
    ac = acquaintance(town)
    out = {
        "world": town.world.name, "agents": town.agents, "start": _t(town.start), "end": _t(town.end),
        "asked": interviewer is not None,
        "diffusion": [diffusion_json(s) for s in spreads.values()],
        "relationships": relationships_json(ac, town),
        "coordination": [turnout_json(turnout(town, g, spreads.get(g.fact or "")))
                         for g in town.world.gatherings],
        "notes": [] if town.world.facts else [NO_FACTS],
    }
    if interviewer is not None:
        for d, s in zip(out["diffusion"], spreads.values()):
            d["interviews"] = ask_fact(interviewer, s)
        out["relationships"]["interviews"] = ask_relationships(interviewer, ac, town)
    return out


def diffusion_json(s: Spread) -> dict:
    n = len(s.agents)
    start, end = s.known_by(s.start), s.known_by(s.end)
    return {
        "fact": s.fact.name, "text": s.fact.text, "keywords": list(s.fact.keywords), "question": s.fact.question,
        "declared": list(s.fact.known_by), "start": start, "end": end,
        "share_start": round(len(start) / n, 4), "share_end": round(len(end) / n, 4),
        "never": [a for a in s.agents if a not in s.learned],
        "how": dict(Counter(l.how for l in s.learned.values())),
        "curve": [[_t(t), c] for t, c in s.curve()],
        "learned": [{"agent": l.agent, "time": _t(l.time), "how": l.how, "from": l.source,
                     "memory": l.memory.id, "kind": l.memory.kind, "text": l.memory.description}
                    for l in s.learned.values()],
        "interviews": None,
    }


def relationships_json(ac: Acquaintance, town: Town) -> dict:
    n = len(town.agents)
    e0, e1 = ac.edges(town.start), ac.edges(town.end)
    return {
        "pairs": n * (n - 1), "knows_start": len(ac.knows(town.start)), "knows_end": len(ac.knows(town.end)),
        "density_start": round(ac.density(town.start), 4), "density_end": round(ac.density(town.end), 4),
        "edges_start": sorted(sorted(e) for e in e0), "edges_end": sorted(sorted(e) for e in e1),
        "interviews": None,
    }


def turnout_json(t: Turnout) -> dict:
    g = t.gathering
    return {
        "gathering": g.name, "place": g.place, "start": _t(g.start), "end": _t(g.end), "host": g.host,
        "fact": g.fact, "invited": t.invited, "planned": t.planned, "attended": t.attended, "came": t.came,
        "minutes": t.minutes, "attend_minutes": ATTEND_MINUTES, "covered": t.covered,
    }


def verdict(claimed: bool, supported: bool) -> str:
    return {(True, True): "knew", (True, False): "hallucinated", (False, True): "missed",
            (False, False): "did not know"}[(claimed, supported)]


def ask_fact(iv: Interviewer, s: Spread) -> dict:
    """"Did you know ...?" to every agent; each yes checked against its memory."""
    answers = []
    for agent in s.agents:
        a = iv.ask(agent, s.fact.question)
        claimed, supported = claims(a.answer, s.fact.about, agent), agent in s.learned
        answers.append({"agent": agent, "answer": a.answer, "claimed": claimed, "supported": supported,
                        "verdict": verdict(claimed, supported)})
    counts = Counter(x["verdict"] for x in answers)
    verdicts = ("knew", "hallucinated", "missed", "did not know")
    return {"question": s.fact.question, **{k: counts.get(k, 0) for k in verdicts}, "answers": answers}


def ask_relationships(iv: Interviewer, ac: Acquaintance, town: Town) -> dict:
    """"Do you know of X?" for every ordered pair, checked against memory (SPEC 9)."""
    knows = ac.knows(town.end)
    claimed: set[tuple[str, str]] = set()
    answers = []
    for a in town.agents:
        for b in town.agents:
            if a == b:
                continue
            ans = iv.ask(a, f"Do you know of {b}?")
            yes = claims(ans.answer, names_person(b))
            if yes:
                claimed.add((a, b))
            answers.append({"agent": a, "about": b, "answer": ans.answer, "claimed": yes,
                            "supported": (a, b) in knows, "verdict": verdict(yes, (a, b) in knows)})
    counts = Counter(x["verdict"] for x in answers)
    return {
        "asked": len(answers), "yes": len(claimed), "hallucinated": counts.get("hallucinated", 0),
        "missed": counts.get("missed", 0),
        "hallucination_rate": round(counts.get("hallucinated", 0) / len(answers), 4) if answers else 0.0,
        "density": round(density(len(town.agents), mutual(claimed)), 4),
        "answers": answers,
    }


def interview_agents(town: Town, iv: Interviewer, agents: list[str], conditions: list[str]) -> dict:
    """The 25 questions to each agent under each condition, side by side."""
    out = []
    for agent in agents:
        qs, notes = questions_for(town, agent)
        rows = []
        for category, q in qs:
            by = {}
            for c in conditions:
                a = iv.ask(agent, q, c)
                by[c] = {"answer": a.answer, "memories": a.memories}
            rows.append({"category": category, "question": q, "by_condition": by})
        out.append({"agent": agent, "notes": notes, "answers": rows})
    return {"world": town.world.name, "time": _t(town.end), "conditions": conditions,
            "interviewer": iv.persona, "agents": out}
