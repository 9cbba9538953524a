"""The report of `smalltown eval social` (eval/social.py) for one save or side by side for two
(with and without the social modules): the Doc of eval/report.py, with SVG plots drawn here in
the manner of eval/plots.py."""

from __future__ import annotations

from datetime import datetime

from smalltown.eval.plots import PALETTE, _svg, _text, _time_axis
from smalltown.eval.report import Doc
from smalltown.store.schema import TIME_FMT

SID = {"with": (0.807, 0.373), "without": (0.617, 0.161)}  # Project Sid, 50 agents, 12 game days (r, slope)


def label(r: dict) -> str:
    return "with social modules" if r["social_awareness"] else "without social modules"


def _num(v: float | None, d: int = 3) -> str:
    return "undefined" if v is None else f"{v:.{d}f}"


def fit_line(f: dict | None) -> str:
    """'r 0.81 [95%: ...], slope 0.37 [68%: .., 95%: .., 99%: ..] (n)'."""
    if not f:
        return "too few agents to fit"
    ci = lambda c: ", ".join(f"{k} {lo:.3f}..{hi:.3f}" for k, (lo, hi) in c.items())  # noqa: E731
    r = f"r {_num(f['r'])}" + (f" ({ci(f['r_ci'])})" if f["r_ci"] else "")
    return f"{r}; slope {f['slope']:.3f} ({ci(f['slope_ci'])}); n {f['n']}"


def headline(r: dict) -> list[list[str]]:
    asym = r["asymmetry"]
    kept = r["say_do"]
    rows = [["perceived vs true likeability", fit_line(r["likeability"])],
            ["in-degree vs extroversion", fit_line(r["in_degree"])],
            ["sentiment asymmetry", f"mean {_num(asym['mean'], 2)} over {asym['pairs']} pairs with feelings both ways"
             if asym["pairs"] else "no pair with feelings both ways"],
            ["say–do coherence", f"{kept['kept']} kept, {kept['broken']} broken of {kept['made']} promises"
             + (f" ({kept['rate']:.0%} kept)" if kept["rate"] is not None else "")
             + (f"; {kept['contradicting']} of {kept['checked']} contradicting the speaker's own plan"
                f" ({kept['contradiction_rate']:.0%})" if kept.get("contradiction_rate") is not None else "")]]
    if "ratings_asked" in r:
        rows.append(["ratings asked (rate_person)", f"{r['ratings_asked']:,} of {r['backend']}"])
    return rows


def social_doc(results: list[dict], labels: list[str]) -> Doc:
    first = results[0]
    doc = Doc(f"{first['world']}: social measures")
    doc.para(f"{len(first['agents'])} agents, {first['start']} → {first['end']}. Perceived likeability counts agents "
             f"with at least {first['min_observers']} observers. Project Sid (50 agents, 12 game days, a model): "
             f"r {SID['with'][0]} / slope {SID['with'][1]} with social modules, r {SID['without'][0]} / slope "
             f"{SID['without'][1]} without.")
    heads = [dict(headline(r)) for r in results]
    names = list(dict.fromkeys(m for h in heads for m in h))
    doc.table(["measure", *(f"{lb} ({label(r)})" for lb, r in zip(labels, results))],
              [[m, *(h.get(m, "") for h in heads)] for m in names])
    doc.heading("Perceived against true likeability")
    doc.figure("likeability", scatter(
        "Perceived vs true likeability", [(f"{lb} ({label(r)})", [(a["true"], a["perceived"]) for a in r["agents"]
                                                                 if a["perceived"] is not None], r["likeability"])
                                          for lb, r in zip(labels, results)], "true (from traits)", "perceived (observers' mean)"),
        "Each dot an agent with enough observers; the lines are the least-squares fits.")
    doc.heading("In-degree against extroversion")
    doc.figure("in-degree", scatter(
        "In-degree vs extroversion", [(f"{lb} ({label(r)})", [(a["extroversion"], a["in_degree"]) for a in r["agents"]],
                                       r["in_degree"]) for lb, r in zip(labels, results)],
        "extroversion (from traits)", "in-degree", y_max=None), "In-degree: others with a relationship toward "
        "the agent or who started a talk with it.")
    for lb, r in zip(labels, results):
        doc.heading(f"{lb} ({label(r)})")
        if r["asymmetry"]["pairs"]:
            doc.figure(f"asymmetry-{lb}", histogram(f"Sentiment asymmetry ({lb})", r["asymmetry"]["counts"]),
                       "|s(a→b) − s(b→a)| over the pairs with feelings both ways.")
        if r["pairs"]:
            start, end = datetime.strptime(r["start"], TIME_FMT), datetime.strptime(r["end"], TIME_FMT)
            doc.figure(f"sentiment-{lb}", lines(f"Sentiment over time ({lb})", [
                (f"{p['agent']} → {p['other']}", [(datetime.strptime(t, TIME_FMT), v) for t, v in p["points"]])
                for p in r["pairs"]], start, end), "A feeling toward another, 0 hate .. 10 love, as each talk left it.")
        doc.table(["agent", "true", "perceived", "observers", "extroversion", "in-degree"],
                  [[a["agent"], a["true"], _num(a["perceived"], 2) if a["perceived"] is not None else "",
                    a["observers"], a["extroversion"], a["in_degree"]] for a in r["agents"]])
    doc.heading("How these were measured")
    doc.para("One task, rate_person, rates a person 0..10 for a quality from one text: the agent's innate traits "
             "(true likeability, extroversion) or an observer's view of it, judged as that observer (its "
             "relationship summary when social awareness kept one, else its last talks with the agent). The "
             "scripted stand-in reads traits through a lexicon and, for an observer, only the feeling social "
             "awareness kept (neutral 5 without it): it is not a model. Slope CIs are t-based, r CIs by Fisher's z. "
             "See docs/eval.md.")
    return doc


# --- plots -------------------------------------------------------------------------------------------


def _frame(left: int, right: int, top: int, bottom: int, x_max: float, y_max: float, x_label: str,
           y_label: str) -> tuple[list[str], callable, callable]:
    def x(v: float) -> float:
        return left + (right - left) * v / x_max

    def y(v: float) -> float:
        return bottom - (bottom - top) * v / y_max
    body = [f'<line x1="{left}" y1="{bottom}" x2="{right}" y2="{bottom}" stroke="#444"/>',
            f'<line x1="{left}" y1="{top}" x2="{left}" y2="{bottom}" stroke="#444"/>',
            _text((left + right) / 2, bottom + 32, x_label, 11, "middle"),
            _text(left - 40, top - 8, y_label, 11, "start")]
    for k in range(0, int(x_max) + 1, max(1, int(x_max) // 10)):
        body.append(_text(x(k), bottom + 15, str(k), 10, "middle"))
    for k in range(0, int(y_max) + 1, max(1, int(y_max) // 10)):
        body += [f'<line x1="{left}" y1="{y(k):.1f}" x2="{right}" y2="{y(k):.1f}" stroke="#eee"/>',
                 _text(left - 6, y(k) + 4, str(k), 10, "end")]
    return body, x, y


def scatter(title: str, series: list[tuple[str, list[tuple[float, float]], dict | None]], x_label: str,
            y_label: str, y_max: float | None = 10, w: int = 620, h: int = 420) -> str:
    top_y = y_max or max([1.0] + [py for _, pts, _ in series for _, py in pts])
    body, x, y = _frame(60, w - 30, 50, h - 60, 10, top_y, x_label, y_label)
    for i, (name, pts, f) in enumerate(series):
        color = PALETTE[i % len(PALETTE)]
        body += [f'<circle cx="{x(px):.1f}" cy="{y(py):.1f}" r="4" fill="{color}" fill-opacity="0.6"/>'
                 for px, py in pts]
        if f:
            a, b = f["intercept"], f["slope"]
            body.append(f'<line x1="{x(0):.1f}" y1="{y(a):.1f}" x2="{x(10):.1f}" y2="{y(a + 10 * b):.1f}" '
                        f'stroke="{color}" stroke-width="2"/>')
        r = f" r {f['r']:.2f}" if f and f["r"] is not None else ""
        body.append(_text(70, 64 + 16 * i, f"{name}: slope {f['slope']:.2f}{r}" if f else name, 11, "start", color))
    return _svg(w, h, body, title)


def histogram(title: str, counts: list[int], w: int = 520, h: int = 300) -> str:
    body, x, y = _frame(60, w - 30, 50, h - 60, 11, max([1] + counts), "|s(a→b) − s(b→a)|", "pairs")
    for k, c in enumerate(counts):
        body.append(f'<rect x="{x(k) + 2:.1f}" y="{y(c):.1f}" width="{x(1) - x(0) - 4:.1f}" '
                    f'height="{y(0) - y(c):.1f}" fill="{PALETTE[0]}"/>')
    return _svg(w, h, body, title)


def lines(title: str, series: list[tuple[str, list[tuple[datetime, int]]]], start: datetime, end: datetime,
          w: int = 760, h: int = 340) -> str:
    """Step curves of a feeling (0..10) over game time."""
    left, right, top, bottom = 60, w - 40, 40, h - 60
    body, x = _time_axis(start, end, left, right, bottom, top)

    def y(v: float) -> float:
        return bottom - (bottom - top) * v / 10
    for v in range(0, 11, 2):
        body.append(_text(left - 6, y(v) + 4, str(v), 10, "end"))
    for i, (name, points) in enumerate(series):
        color = PALETTE[i % len(PALETTE)]
        d = [f"M{x(points[0][0]):.1f},{y(points[0][1]):.1f}"] + \
            [f"H{x(t):.1f} V{y(v):.1f}" for t, v in points[1:]] + [f"H{x(end):.1f}"]
        body.append(f'<path d="{" ".join(d)}" fill="none" stroke="{color}" stroke-width="2.2"/>')
        body.append(_text(left + 12, top + 14 + 16 * i, f"{name} ({points[-1][1]} at the end)", 11, "start", color))
    return _svg(w, h, body, title)
