"""Reports: one document model rendered twice, as report.md (plots beside it as SVG files) and as
one self-contained report.html (plots inline), with report.json holding every number."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from html import escape
from pathlib import Path

from smalltown.eval import plots
from smalltown.eval.conditions import DESCRIBE, caveat
from smalltown.shown import json_shown, shown
from smalltown.store.calls import describe_calls, describe_reasons
from smalltown.store.schema import TIME_FMT

CSS = ("body{font-family:Helvetica,Arial,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}"
       "table{border-collapse:collapse;margin:.6em 0 1.2em}td,th{border:1px solid #ccc;padding:4px 8px;"
       "vertical-align:top;text-align:left}th{background:#f3f3f3}figure{margin:1em 0}"
       "figcaption{color:#555;font-size:.9em}details{margin:.3em 0 .8em}summary{cursor:pointer;color:#345}"
       "code{background:#f5f5f5;padding:0 3px}")


@dataclass
class Doc:
    """Its text comes from saves and models: every piece is kept `shown` (control characters
    visible, so `cat report.md` cannot drive the terminal) and escaped for HTML when written."""
    title: str
    blocks: list[tuple] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.title = shown(self.title)

    def heading(self, text: str, level: int = 2) -> None:
        self.blocks.append(("h", level, shown(text)))

    def para(self, text: str) -> None:
        self.blocks.append(("p", shown(text, lines=True)))

    def table(self, head: list[str], rows: list[list[object]]) -> None:
        self.blocks.append(("table", [shown(h) for h in head], [[shown(c, lines=True) for c in r] for r in rows]))

    def figure(self, name: str, svg: str, caption: str) -> None:
        self.blocks.append(("figure", self._file_name(name), svg, shown(caption)))

    def _file_name(self, name: str) -> str:
        """A plot's file name (plots/NAME.svg) from a name that may be a world's (a fact's): ASCII
        letters, digits, - and _ only, so that it stays inside plots/; unique in the report."""
        stem = re.sub(r"[^A-Za-z0-9_-]+", "-", name).strip("-") or "plot"
        taken = {b[1] for b in self.blocks if b[0] == "figure"}
        out, n = stem, 2
        while out in taken:
            out, n = f"{stem}-{n}", n + 1
        return out

    def details(self, summary: str, items: list[str]) -> None:
        self.blocks.append(("details", shown(summary), [shown(i, lines=True) for i in items]))

    def markdown(self) -> str:
        out = [f"# {md(self.title)}", ""]
        for b in self.blocks:
            if b[0] == "h":
                out += ["#" * b[1] + " " + md(b[2]), ""]
            elif b[0] == "p":
                out += [md(b[1]), ""]
            elif b[0] == "table":
                cell = lambda c: md(c).replace("\n", "<br>")  # noqa: E731
                out += ["| " + " | ".join(map(cell, b[1])) + " |", "|" + "---|" * len(b[1])]
                out += ["| " + " | ".join(map(cell, r)) + " |" for r in b[2]] + [""]
            elif b[0] == "figure":
                out += [f"![{md(b[3])}](plots/{b[1]}.svg)", "", f"*{md(b[3])}*", ""]
            elif b[0] == "details":
                out += [f"<details><summary>{escape(b[1])}</summary>", ""]
                out += [f"- {md(i)}" for i in b[2]] + ["", "</details>", ""]
        return "\n".join(out)

    def html(self) -> str:
        out = [f"<!doctype html><html><head><meta charset='utf-8'><title>{escape(self.title)}</title>"
               f"<style>{CSS}</style></head><body><h1>{escape(self.title)}</h1>"]
        for b in self.blocks:
            if b[0] == "h":
                out.append(f"<h{b[1]}>{escape(b[2])}</h{b[1]}>")
            elif b[0] == "p":
                out.append(f"<p>{escape(b[1])}</p>")
            elif b[0] == "table":
                out.append("<table><tr>" + "".join(f"<th>{escape(h)}</th>" for h in b[1]) + "</tr>"
                           + "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in r) + "</tr>" for r in b[2])
                           + "</table>")
            elif b[0] == "figure":
                out.append(f"<figure>{b[2]}<figcaption>{escape(b[3])}</figcaption></figure>")
            elif b[0] == "details":
                out.append(f"<details><summary>{escape(b[1])}</summary><ul>"
                           + "".join(f"<li>{escape(i)}</li>" for i in b[2]) + "</ul></details>")
        return "\n".join(out + ["</body></html>\n"])

    def write(self, out: Path, data: dict) -> list[Path]:
        """report.md, report.html, report.json and plots/*.svg in `out`."""
        out.mkdir(parents=True, exist_ok=True)
        figures = [b for b in self.blocks if b[0] == "figure"]
        if figures:
            (out / "plots").mkdir(exist_ok=True)
        for _, name, svg, _ in figures:
            (out / "plots" / f"{name}.svg").write_text(svg, encoding="utf-8")
        paths = [out / "report.html", out / "report.md", out / "report.json"]
        paths[0].write_text(self.html(), encoding="utf-8")
        paths[1].write_text(self.markdown(), encoding="utf-8")
        paths[2].write_text(json_shown(json.dumps(data, indent=1, ensure_ascii=False)) + "\n", encoding="utf-8")
        return paths


# Markdown read into what a save or a model wrote: emphasis, code, links and images, HTML, table
# cells; escaped with a backslash (CommonMark shows any escaped ASCII punctuation as itself).
_MD_INLINE = re.compile(r"([\\`*_\[\]<>|~&#])")
# and at a line's start: lists, setext underlines, ordered lists ("1." "1)"); indentation (code)
_MD_LINE_START = re.compile(r"^([-+=]|\d{1,9}(?=[.)]))", re.MULTILINE)
_MD_INDENT = re.compile(r"^[ \t]+", re.MULTILINE)


def md(text: str) -> str:
    """`text` as Markdown that any viewer shows as the text itself: no heading, list, link, image,
    HTML tag, code span or table column comes of it (indentation is dropped: it would be code)."""
    text = _MD_INLINE.sub(r"\\\1", _MD_INDENT.sub("", text))
    return _MD_LINE_START.sub(lambda m: m.group(1) + "\\" if m.group(1)[0].isdigit() else "\\" + m.group(1), text)


def _dt(text: str) -> datetime:
    return datetime.strptime(text, TIME_FMT)


def _short(text: str) -> str:
    return _dt(text).strftime("%a %b %d %H:%M")


def _clip(text: str, n: int = 160) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def _share(series: list) -> list[tuple[datetime, float]]:
    return [(_dt(t), c) for t, c in series]


# --- the model calls (every report) ------------------------------------------------------------------


def calls_rows(r: dict) -> list[list[str]]:
    """[measure, value] rows of the model calls: the run's (in the save), and those eval made
    asking the agents (`asked_calls`, when it asked)."""
    rows = []
    if r.get("calls") is not None:
        rows.append(["model calls (the run)", describe_calls(r["calls"])])
    if r.get("asked_calls") is not None:
        rows.append(["model calls (asking)", describe_calls(r["asked_calls"])])
    return rows


def calls_section(doc: Doc, r: dict) -> None:
    """How many calls, how many a fallback answered and why, task by task."""
    parts = [(label, r[key]) for label, key in (("The run", "calls"), ("Asking the agents", "asked_calls"))
             if r.get(key) is not None]
    if not parts:
        return
    doc.heading("Model calls")
    doc.para("A fallback is another backend (the scripted one, by default) answering a question because the "
             "model's answer was unusable (invalid, cut off, failed) or the prompt too long for its window.")
    for label, c in parts:
        doc.para(f"{label}: {describe_calls(c)}.")
        if c["calls"]:
            doc.table(["task", "calls", "answered by a fallback", "why"],
                      [[task, f"{t['calls']:,}", f"{t['fallbacks']:,}", describe_reasons(t["by_reason"])]
                       for task, t in c["by_task"].items()])


# --- eval town ---------------------------------------------------------------------------------------


def headline(r: dict) -> list[list[str]]:
    """The few numbers a reader wants first: measure, value (also the terminal's summary)."""
    n = len(r["agents"])
    rows = []
    for d in r["diffusion"]:
        line = (f"{len(d['start'])} → {len(d['end'])} of {n} agents "
                f"({d['share_start']:.0%} → {d['share_end']:.0%})")
        iv = d.get("interviews")
        if iv:
            line += f"; asked: {iv['knew']} knew, {iv['hallucinated']} hallucinated yes"
        rows.append([f"diffusion: {d['fact']}", line])
    rel = r["relationships"]
    line = f"{rel['density_start']:.3f} → {rel['density_end']:.3f}"
    if rel.get("interviews"):
        iv = rel["interviews"]
        line += (f"; asked: density {iv['density']:.3f}, {iv['hallucinated']} of {iv['asked']} answers "
                 f"hallucinated ({iv['hallucination_rate']:.1%})")
    rows.append(["relationship density", line])
    for c in r["coordination"]:
        planned = f"{len(c['planned'])} planned to"
        if c["covered"] == 0:  # nothing to attend yet: who knew and planned still says something
            invited = f"{len(c['invited'])} invited, " if c["invited"] is not None else ""
            line = f"not reached (the save ends before it begins); {invited}{planned}"
        else:
            invited = f"{len(c['came'])} of {len(c['invited'])} invited came; " if c["invited"] is not None else ""
            line = f"{invited}{planned}, {len(c['attended'])} were there"
            line += " (the save ends during it)" if c["covered"] < 1 else ""
        rows.append([f"coordination: {c['gathering']}", line])
    return rows + calls_rows(r)


def town_doc(r: dict, label: str) -> Doc:
    doc = Doc(f"{r['world']}: how the town did")
    start, end = _dt(r["start"]), _dt(r["end"])
    doc.para(f"{label}: {len(r['agents'])} agents, {_short(r['start'])} → {_short(r['end'])}. Measured from "
             f"memory and the event log" + (", and by asking the agents (answers checked against their memory)."
                                             if r["asked"] else " (no model asked; add --ask for interviews)."))
    doc.table(["measure", "value"], headline(r))
    for note in r["notes"]:
        doc.para(f"Note: {note}")
    if r["diffusion"]:
        doc.heading("Information diffusion")
        doc.figure("diffusion", plots.curves(
            "Who knows it: share of the town over game time",
            [(d["fact"], [(t, c / len(r["agents"])) for t, c in _share(d["curve"])]) for d in r["diffusion"]],
            start, end), "Share of agents with a memory of each fact, by when the memory was made.")
        for d in r["diffusion"]:
            _diffusion_section(doc, d, r["agents"], start, end)
    _relationship_section(doc, r)
    if r["coordination"]:
        doc.heading("Coordination")
        for c in r["coordination"]:
            _coordination_section(doc, c)
    calls_section(doc, r)
    doc.heading("How these were measured")
    doc.para("An agent knows a fact from its first memory whose text has all the fact's keywords; that memory "
             "is traced through its evidence to how it was learned (told in a conversation, seen, known at the "
             "start). An agent knows of another when one of its memories names it; the density counts an edge "
             "when both know of each other: 2|E| / (|V|(|V|-1)). Interview answers come from the interview task "
             "with the agent's own retrieval, asked on a copy of the save; a yes with no memory behind it is "
             "counted as hallucinated. See docs/eval.md.")
    return doc


def _diffusion_section(doc: Doc, d: dict, agents: list[str], start: datetime, end: datetime) -> None:
    doc.heading(f"{d['fact']}: {d['text']}", 3)
    how = ", ".join(f"{k} {v}" for k, v in sorted(d["how"].items(), key=lambda kv: -kv[1]))
    doc.para(f"Known by {len(d['start'])} at the start ({', '.join(d['start']) or 'nobody'}), by {len(d['end'])} "
             f"of {len(agents)} at the end. How they learned it: {how or 'nobody did'}. "
             f"Keywords: {', '.join(d['keywords'])}.")
    doc.figure(f"spread-{d['fact']}", plots.spread_graph(f"{d['fact']}: who first heard it from whom", agents,
                                                         d["learned"], start, end),
               f"The spread of '{d['fact']}': each agent at the time it learned it, with an arrow from whom.")
    doc.table(["agent", "learned", "how", "from", "first memory of it"],
              [[l["agent"], _short(l["time"]), l["how"], l["from"] or "", _clip(l["text"])] for l in d["learned"]])
    iv = d.get("interviews")
    if iv:
        doc.para(f"Asked \"{iv['question']}\": {iv['knew']} knew, {iv['hallucinated']} claimed it with no memory of it "
                 f"(hallucinated), {iv['missed']} had a memory of it but did not say so, "
                 f"{iv['did not know']} did not know.")
        doc.table(["agent", "answer", "said yes", "memory has it", "verdict"],
                  [[a["agent"], _clip(a["answer"], 200), "yes" if a["claimed"] else "no",
                    "yes" if a["supported"] else "no", a["verdict"]] for a in iv["answers"]])


def _relationship_section(doc: Doc, r: dict) -> None:
    rel = r["relationships"]
    doc.heading("Relationships")
    doc.para(f"Network density {rel['density_start']:.3f} at the start → {rel['density_end']:.3f} at the end "
             f"({len(rel['edges_start'])} → {len(rel['edges_end'])} pairs who know each other; "
             f"{rel['knows_start']} → {rel['knows_end']} of {rel['pairs']} ordered pairs know of the other).")
    doc.figure("relationships", plots.networks("Who knows whom (both ways)", r["agents"], [
        (f"start ({_short(r['start'])})", rel["edges_start"]), (f"end ({_short(r['end'])})", rel["edges_end"])]),
        "An edge joins two agents when each has a memory naming the other.")
    iv = rel.get("interviews")
    if iv:
        doc.para(f"Asked \"Do you know of X?\" for every ordered pair: {iv['yes']} of {iv['asked']} said yes "
                 f"(density from the answers {iv['density']:.3f}); {iv['hallucinated']} yes had no memory behind "
                 f"them ({iv['hallucination_rate']:.1%}); {iv['missed']} answers missed someone the agent remembers.")
        wrong = [a for a in iv["answers"] if a["verdict"] == "hallucinated"]
        if wrong:
            doc.table(["agent", "about", "answer (hallucinated)"],
                      [[a["agent"], a["about"], _clip(a["answer"], 200)] for a in wrong])


def _coordination_section(doc: Doc, c: dict) -> None:
    doc.heading(f"{c['gathering']} at {c['place'].replace(':', ': ')}, {_short(c['start'])}–{_dt(c['end']):%H:%M}", 3)
    invited = ", ".join(c["invited"]) if c["invited"] is not None else "n/a (the gathering names no fact)"
    rows = [["invited (knew of it before it began)", invited],
            ["planned to come (a plan of that day names it)", ", ".join(c["planned"]) or "nobody"],
            [f"were there (at least {c['attend_minutes']:.0f} minutes)", ", ".join(c["attended"]) or "nobody"]]
    if c["invited"] is not None:
        rows.append(["invited and came", f"{len(c['came'])} of {len(c['invited'])}: {', '.join(c['came'])}"])
    if c["host"]:
        rows.append(["host", c["host"]])
    if c["covered"] < 1:
        doc.para(f"The save covers {c['covered']:.0%} of the gathering's time: who was there is counted up to "
                 f"the save's end.")
    doc.table(["", "agents"], rows)
    if c["minutes"]:
        doc.table(["agent", "minutes there", "invited", "planned"],
                  [[a, m, "yes" if c["invited"] and a in c["invited"] else "", "yes" if a in c["planned"] else ""]
                   for a, m in c["minutes"].items()])


# --- eval interview ----------------------------------------------------------------------------------


def interview_doc(r: dict, label: str) -> Doc:
    conds = r["conditions"]
    doc = Doc(f"{r['world']}: interviews")
    doc.para(f"{label}, at {_short(r['time'])}: the 25 questions of the paper, asked by {r['interviewer']}, each "
             f"answered from the agent's own retrieval. Conditions: "
             + "; ".join(f"{c} ({DESCRIBE[c]})" for c in conds) + ".")
    for a in r["agents"]:
        doc.heading(a["agent"])
        for note in a["notes"]:
            doc.para(f"Note: {note}")
        for category in dict.fromkeys(row["category"] for row in a["answers"]):
            rows = [row for row in a["answers"] if row["category"] == category]
            doc.heading(category, 3)
            doc.table(["question", *conds], [[row["question"], *(row["by_condition"][c]["answer"] for c in conds)]
                                             for row in rows])
            for row in rows:  # the retrieval behind each answer: its best five records per condition
                doc.details(f"memories behind: {row['question']}", [
                    f"{c}: [{m['kind']} {m['id']}, score {m['score']}] {_clip(m['description'], 220)}"
                    for c in conds for m in row["by_condition"][c]["memories"][:5]] or ["(no memories)"])
    calls_section(doc, r)
    return doc


# --- eval ablate -------------------------------------------------------------------------------------


def ablate_doc(results: dict[str, dict], label: str, backend: str) -> Doc:
    conds = list(results)
    first = results[conds[0]]
    doc = Doc(f"{first['world']}: ablations side by side")
    doc.para(f"{label}: the same world and seed run under each condition, {_short(first['start'])} → "
             f"{_short(first['end'])}, answered by the {backend} backend. "
             + "; ".join(f"{c}: {DESCRIBE[c]}" for c in conds) + ".")
    if note := caveat(backend):
        doc.para(note)
    heads = {c: dict(headline(r)) for c, r in results.items()}
    measures = list(dict.fromkeys(m for h in heads.values() for m in h))
    doc.table(["measure", *conds], [[m, *(heads[c].get(m, "") for c in conds)] for m in measures])
    start, end = _dt(first["start"]), _dt(first["end"])
    n = len(first["agents"])
    for i, d in enumerate(first["diffusion"]):
        doc.figure(f"diffusion-{d['fact']}", plots.curves(
            f"{d['fact']}: share of the town over game time, by condition",
            [(c, [(t, v / n) for t, v in _share(results[c]["diffusion"][i]["curve"])]) for c in conds], start, end),
            f"Diffusion of '{d['fact']}' under each condition.")
    doc.figure("relationships", plots.networks("Who knows whom at the end, by condition", first["agents"],
                                               [(c, results[c]["relationships"]["edges_end"]) for c in conds], 380),
               "An edge joins two agents when each has a memory naming the other.")
    called = {c: r["calls"] for c, r in results.items() if r.get("calls") is not None}
    if called:
        doc.heading("Model calls")
        doc.para("Each condition's run: its model calls, those another backend answered (a fallback) and why, "
                 "and the prompts too long for the model's window.")
        doc.table(["condition", "calls", "answered by a fallback", "why", "prompts too long"],
                  [[c, f"{f['calls']:,}", f"{f['fallbacks']:,}", describe_reasons(f["by_reason"]),
                    f"{f['too_long']:,}"] for c, f in called.items()])
        for c, f in called.items():
            tasks = {task: t for task, t in f["by_task"].items() if t["fallbacks"]}
            if tasks:
                doc.details(f"{c}: fallbacks by task", [f"{task}: {t['fallbacks']:,} of {t['calls']:,} calls "
                                                        f"({describe_reasons(t['by_reason'])})"
                                                        for task, t in tasks.items()])
    return doc
