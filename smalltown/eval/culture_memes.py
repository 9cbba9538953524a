"""Memes (Project Sid §5.3.1, Figure 11) from a `CultureSave` (eval/culture.py).

A meme is a keyword of a topic of the save's meme summaries (every summary's, of any town, each
keyword once, whatever its case). A use of a meme: a goal the agent took up, or a line it said,
in which the keyword occurs (world/doctrines.py's `keywords_in`: whole words, any case; a text
counts each keyword once). Per group (each town, and the rural area, by the town of an agent's
home): the uses of its agents, per agent (per capita: uses / agents in the group), the distinct
memes an agent used (mean over the group's agents), its uses in goals and in speech, each meme's
count, the leading meme (the most used; ties by name); and per town each meme's uses in each game hour."""

from __future__ import annotations

from collections import Counter, defaultdict

from smalltown.eval.culture_save import CultureSave, hour_of, hours

RURAL = "(rural)"  # the rural area's name in the report (its town is "")


def meme_keywords(s: CultureSave) -> list[str]:
    out, seen = [], set()
    for row in s.memes:
        for topic in row["topics"] if isinstance(row["topics"], list) else []:
            for k in topic.get("keywords", []) if isinstance(topic, dict) else []:
                if isinstance(k, str) and k.strip() and k.strip().lower() not in seen:
                    seen.add(k.strip().lower())
                    out.append(k.strip())
    return out


def uses(s: CultureSave, memes: list[str]) -> list[tuple]:
    """(time, agent, meme, "goal" | "said") of every use, oldest first."""
    from smalltown.world.doctrines import keywords_in

    out = [(t, a, k, "goal") for t, a, text in s.goals for k in keywords_in(memes, text)]
    out += [(x.time, x.speaker, k, "said") for x in s.lines for k in keywords_in(memes, x.text)]
    return sorted(out, key=lambda u: u[0])


def group_of(s: CultureSave, agent: str) -> str:
    return s.town.get(agent) or RURAL


def leading(counts: Counter) -> str | None:
    return min(counts, key=lambda k: (-counts[k], k)) if counts else None


def measure_memes(s: CultureSave) -> dict:
    memes = meme_keywords(s)
    used = uses(s, memes)
    groups = [*s.towns, RURAL]
    members = {g: [a for a in s.agents if group_of(s, a) == g] for g in groups}
    by_agent: dict[str, Counter] = defaultdict(Counter)
    how_by_group: dict[str, Counter] = defaultdict(Counter)  # (group -> "goal" / "said" -> uses)
    for _t, a, k, how in used:
        by_agent[a][k] += 1
        how_by_group[group_of(s, a)][how] += 1
    per_group = {}
    for g in groups:
        n = len(members[g])
        counts = Counter()
        for a in members[g]:
            counts.update(by_agent[a])
        total = sum(counts.values())
        per_group[g] = {"agents": n, "uses": total, "per_capita": total / n if n else None,
                        "from_goals": how_by_group[g]["goal"], "from_speech": how_by_group[g]["said"],
                        "distinct_per_agent": sum(len(by_agent[a]) for a in members[g]) / n if n else None,
                        "counts": dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))),
                        "leading": leading(counts)}
    town_agents = [a for a in s.agents if s.town.get(a)]
    town_uses = sum(per_group[t]["uses"] for t in s.towns)
    h = hours(s)
    over_time: dict[str, dict[str, list]] = {}
    for g in groups:
        grid = {k: [0] * h for k in per_group[g]["counts"]}
        for t, a, k, _how in used:
            if group_of(s, a) == g and h:
                grid[k][min(hour_of(s, t), h) - 1] += 1
        over_time[g] = {k: [(i + 1, v) for i, v in enumerate(row)] for k, row in grid.items()}
    return {"memes": memes, "summaries": [{"time": m["time"], "town": m["town"] or RURAL, "topics": m["topics"]}
                                          for m in s.memes],
            "uses": len(used), "from_goals": sum(1 for u in used if u[3] == "goal"),
            "from_speech": sum(1 for u in used if u[3] == "said"),
            "groups": per_group,
            "towns_per_capita": town_uses / len(town_agents) if town_agents else None,
            "rural_per_capita": per_group[RURAL]["per_capita"],
            "over_time": over_time,
            "per_agent": {a: dict(by_agent[a]) for a in s.agents if by_agent[a]}}
