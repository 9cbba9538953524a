"""The report of `smalltown eval culture` (eval/culture.py): memes per agent for each town and the
rural area, each town's memes over time, and for each doctrine its converts by level over time,
its area of influence over time and its exposure graph; Project Sid's figures beside ours."""

from __future__ import annotations

from datetime import datetime

from smalltown.eval.matrix import plot
from smalltown.eval.plots import bars, spread_graph
from smalltown.eval.report import Doc
from smalltown.store.schema import TIME_FMT

SID_MEMES = ("Project Sid (§5.3.1, Fig. 11; one 500-agent run, a model): rural agents produced significantly fewer "
             "memes than town agents, even per capita; each town discussed several memes at once, with different "
             "favourites per town (eco in Woodhaven, pranking in Clearwater); memes rose and fell over time.")
SID_FAITH = ("Project Sid (§5.3.2, Fig. 12; 20 priests in one town of a 500-agent run, a model): direct and "
             "indirect converts rose steadily and had not saturated after two hours; the area of influence grew "
             "as priests and converts travelled to other towns.")
AREA = ("The area of influence at a level, at hour h, is cumulative: the tiles within the hearing radius of any "
        "tile where an agent at that level or above (a priest from the start, a convert from its rise) stood at a "
        "sampled moment up to h (the start, each game hour's end, the run's end). It never falls: it is where the "
        "faith's words could have been heard so far.")
GRAPH_ROWS = 60  # converts drawn in the exposure graph (a 500-agent run has more: the table has them all)


def _num(v: float | None, digits: int = 2) -> str:
    return "n/a" if v is None else f"{v:.{digits}f}"


def label(r: dict) -> str:
    travel = {True: "travel on", False: "travel off"}.get(r.get("travel"), "travel unset")
    return f"{r['architecture']}, {travel}"


def headline(r: dict) -> list[list[str]]:
    m = r["memes"]
    rows = [["setting", label(r)],
            ["agents", f"{r['agents']} ({', '.join(f'{t} {n}' for t, n in r['towns'].items()) or 'no towns'}; "
                       f"rural {r['rural']})"],
            ["memes", f"{len(m['memes'])} from {len(m['summaries'])} summaries"],
            ["meme uses per agent, towns", _num(m["towns_per_capita"])],
            ["meme uses per agent, rural", _num(m["rural_per_capita"])]]
    for d in r["doctrines"]:
        g = d["graph"]
        rows += [[f"{d['doctrine']}: converts", ", ".join(f"{n} {k}" for k, n in d["converts"].items())
                  + f" (of {r['agents'] - len(d['priests'])}; {len(d['priests'])} priests)"],
                 [f"{d['doctrine']}: area at the end", ", ".join(
                     f"{k} {t} tiles" for k, t in zip(d["level_names"], d["area"][-1]["tiles"])) if d["area"] else "n/a"],
                 [f"{d['doctrine']}: exposure graph", f"{g['nodes']} nodes, {g['critical_edges']} critical and "
                  f"{g['noncritical_edges']} non-critical edges, depth up to {g['max_depth'] if g['max_depth'] is not None else 'n/a'}, "
                  f"{_num(g['mean_converts_per_priest'])} converts per priest"]]
    return rows


def beside_sid(r: dict) -> list[list[str]]:
    """Sid's findings (§5.3) and this save's figures for each, side by side."""
    m = r["memes"]
    towns, rural = m["towns_per_capita"], m["rural_per_capita"]
    fewer = "n/a" if towns is None or rural is None else \
        f"{'yes' if rural < towns else 'no'} (rural {rural:.2f}, towns {towns:.2f})"
    leads = {g: v["leading"] for g, v in m["groups"].items() if v["leading"]}
    several = sum(1 for g in r["towns"] if len(m["groups"][g]["counts"]) > 1)
    rows = [["rural agents use fewer memes per capita than town agents", "yes, significantly (Fig. 11B)", fewer],
            ["each town discusses several memes, favourites differ by town", "yes (eco in Woodhaven, pranking in "
             "Clearwater; Fig. 11C-E)", f"{several} of {len(r['towns'])} towns use more than one meme; leading: "
             + (", ".join(f"{g} {k}" for g, k in leads.items()) or "none")]]
    for d in r["doctrines"]:
        at2 = d["by_hour"][1] if len(d["by_hour"]) > 1 else None
        end = d["by_hour"][-1] if d["by_hour"] else None
        for n in d["level_names"]:
            ours = "n/a (the run is shorter than 2 h)" if at2 is None else \
                f"{at2[n]} at 2 h, {end[n]} at the end (hour {end['hour']})"
            rows.append([f"{d['doctrine']}: {n} converts keep rising after 2 h", "yes, not saturated (Fig. 12B-C)", ours])
        if d["area"]:
            a0, a1 = d["area"][0]["tiles"][0], d["area"][-1]["tiles"][0]
            rows.append([f"{d['doctrine']}: the area of influence grows", "yes, as priests and converts travel "
                         "(Fig. 12D)", f"{'yes' if a1 > a0 else 'no'} ({a0} → {a1} tiles, {d['level_names'][0]} or above)"])
    return rows


def culture_doc(results: list[dict], labels: list[str]) -> Doc:
    first = results[0]
    doc = Doc(f"{first['world']}: culture")
    doc.para(f"{first['start']} → {first['end']}. Computed from the save alone: the world's towns (an agent's town "
             "is that of its home), the goals the agents took up, the lines they said and who heard them (the "
             f"listener, and anyone within the hearing radius of the speaker, {first['hearing_radius']} tiles), "
             "the meme summaries, and where the agents stood at each game hour's end (the area of influence is "
             "cumulative over those moments).")
    heads = [dict(headline(r)) for r in results]
    doc.table(["measure", *(f"{lb} ({label(r)})" for lb, r in zip(labels, results))],
              [[m, *(h.get(m, "") for h in heads)] for m in dict.fromkeys(m for h in heads for m in h)])
    for lb, r in zip(labels, results):
        pre = f"{lb}: " if len(results) > 1 else ""
        doc.heading(f"{pre}Beside Project Sid")
        doc.table(["finding", "Project Sid (one 500-agent run, a model)", "this save"], beside_sid(r))
        _memes(doc, r["memes"], pre)
        for d in r["doctrines"]:
            _faith(doc, d, r, pre)
        if not r["doctrines"]:
            doc.para("The world has no doctrine: nothing to convert to.")
    return doc


def _memes(doc: Doc, m: dict, pre: str) -> None:
    doc.heading(f"{pre}Memes")
    doc.para("A meme is a keyword of the topics the meme summaries gave; a use, a goal taken up or a line said in "
             "which it occurs (each keyword once a text). Per capita: a group's uses over its agents. " + SID_MEMES)
    if not m["groups"] or len(m["groups"]) == 1:
        doc.para("The world has no towns: every agent counts as rural.")
    if not m["memes"]:
        doc.para("The save has no meme summaries (the memes setting off, or the run too short for one).")
        return
    doc.para(f"{len(m['memes'])} memes: {', '.join(m['memes'])}. {m['uses']} uses ({m['from_goals']} in goals, "
             f"{m['from_speech']} in speech).")
    doc.table(["group", "agents", "uses", "uses per agent", "distinct memes per agent", "leading meme", "top memes"],
              [[g, v["agents"], v["uses"], _num(v["per_capita"]), _num(v["distinct_per_agent"]), v["leading"] or "none",
                ", ".join(f"{k} {n}" for k, n in list(v["counts"].items())[:5])] for g, v in m["groups"].items()])
    doc.figure(f"{pre}memes-per-agent", bars("Meme uses per agent, by group",
                                             [(g, v["per_capita"]) for g, v in m["groups"].items()],
                                             "meme uses per agent"),
               "Meme uses per agent for each town and the rural area (Sid's Fig. 11B).")
    for g, series in m["over_time"].items():
        top = sorted(series, key=lambda k: -m["groups"][g]["counts"].get(k, 0))[:6]
        if top:
            doc.figure(f"{pre}memes-{g}", plot(f"Memes over time: {g}", [(k, series[k], []) for k in top],
                                               "game hours", "uses in the hour"),
                       f"The {len(top)} most used memes in {g}, uses in each game hour (Sid's Fig. 11C-E).")
    doc.details(f"{len(m['summaries'])} meme summaries", [
        f"{s['time']} {s['town']}: " + "; ".join(f"{t.get('topic', '')} ({', '.join(map(str, t.get('keywords', [])))})"
                                                 for t in s["topics"] if isinstance(t, dict)) for s in m["summaries"]])


def _faith(doc: Doc, d: dict, r: dict, pre: str) -> None:
    name, names, g = d["doctrine"], d["level_names"], d["graph"]
    doc.heading(f"{pre}{name}")
    doc.para("An agent's level is the highest level of the doctrine's keywords in the lines it said so far, never "
             "down; the priests hold the top level from the start. Converts: agents other than the priests above "
             "level 0. " + AREA + " " + SID_FAITH)
    doc.table(["level", "converts at the end", "area at the end (tiles)"],
              [[n, d["converts"][n], d["area"][-1]["tiles"][i] if d["area"] else "n/a"] for i, n in enumerate(names)])
    towns = ", ".join(f"{t or 'rural'} {n}" for t, n in d["converts_by_town"].items()) or "none"
    held = ", ".join(t or "the rural area" for t in d["priest_towns"]) or "no town"
    doc.para(f"Priests: {', '.join(d['priests']) or 'none'} (of {held}). Converts by town: {towns}; "
             f"{d['converts_outside_priests_towns']} outside the priests' towns.")
    if d["by_hour"]:
        doc.figure(f"{pre}{name}-converts", plot(f"{name}: converts by level", [
            (n, [(row["hour"], row[n]) for row in d["by_hour"]], []) for n in names], "game hours",
            "converts at the hour's end"), "Converts at each level at each game hour's end (Sid's Fig. 12C).")
    if d["area"]:
        doc.figure(f"{pre}{name}-area", plot(f"{name}: area of influence", [
            (f"{n} or above", [(a["hour"], a["tiles"][i]) for a in d["area"]], []) for i, n in enumerate(names)],
            "game hours", "tiles within hearing"),
            "Tiles within hearing of where an agent at each level or above stood at any game hour's end so far "
            "(cumulative; Sid's Fig. 12D).")
    doc.heading("Exposure graph", 3)
    doc.table(["nodes", "critical edges", "non-critical edges", "converts with no exposure before",
               "depth (max, mean)", "converts per priest (mean)"],
              [[g["nodes"], g["critical_edges"], g["noncritical_edges"], len(g["unexposed_converts"]),
                f"{g['max_depth'] if g['max_depth'] is not None else 'n/a'}, {_num(g['mean_depth'])}",
                _num(g["mean_converts_per_priest"])]])
    if g["critical"]:
        learned = [{"agent": p, "time": r["start"], "from": None, "how": "start"} for p in d["priests"]]
        learned += [{"agent": e["to"], "time": e["time"], "from": e["from"], "how": e["how"]}
                    for e in g["critical"][:GRAPH_ROWS]]
        start, end = (datetime.strptime(r[k], TIME_FMT) for k in ("start", "end"))
        doc.figure(f"{pre}{name}-exposures", spread_graph(f"{name}: critical exposures", [], learned, start, end),
                   "Each convert at the time of its critical exposure (its first before it converted), an arrow from "
                   "the speaker (Sid's Fig. 12E)" + (f"; the first {GRAPH_ROWS} converts" if len(g["critical"]) > GRAPH_ROWS
                                                      else "") + ".")
        doc.details(f"{len(g['critical'])} critical exposures", [
            f"{e['time']} {e['from']} → {e['to']} ({names[e['level'] - 1]}, {e['how']}; depth "
            f"{g['depth'].get(e['to'])})" for e in g["critical"]])
    doc.details(f"{len(d['rises'])} rises of level", [
        f"{x['time']} {x['agent']}: {names[x['was'] - 1] if x['was'] else 'none'} → {names[x['level'] - 1]}"
        for x in d["rises"]])
