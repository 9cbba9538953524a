"""The report of `smalltown eval civics` (eval/civics.py): one save, or several side by side (a line
each in the compliance plot): compliance over seasons with its 95% band and the new constitution
marked, each constituent's stance over time, the constitutions, the amendments with their tallies,
the votes by agent, and the conversations that moved each stance."""

from __future__ import annotations

from datetime import datetime

from smalltown.eval.plots import FONT, PALETTE, _svg, _text, _time_axis, escape
from smalltown.eval.report import Doc
from smalltown.store.schema import TIME_FMT

SID = ("Project Sid (§5.2, a model): about 20% of inventories deposited before the vote; anti-tax influencers "
       "lower the voted rate (to 5-10%) and deposits (to about 9%), pro-tax influencers raise deposits, a frozen "
       "constitution changes nothing.")


def _pct(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.1%}"


def ci_text(m: dict) -> str:
    """'31.7% (95% CI 9.2%–54.1%, n 5)'."""
    if m["mean"] is None:
        return "n/a (no constituent held anything)"
    ci = f"95% CI {_pct(m['lo'])}–{_pct(m['hi'])}, " if m["lo"] is not None else ""
    return f"{_pct(m['mean'])} ({ci}n {m['n']})"


def _rate(v: object) -> str:
    return "none" if v is None else f"{v:g}%" if isinstance(v, (int, float)) else str(v)


def label(r: dict) -> str:
    side = r["influencer_side"] or "by default"
    return f"{r['architecture']}, influencers {side}" + (", frozen" if r["frozen"] else "")


def headline(r: dict) -> list[list[str]]:
    first = r["constitutions"][0]["rate"] if r["constitutions"] else None
    return [["setting", label(r)],
            ["constituents", f"{len(r['constituents'])} (election manager {r['election_manager'] or 'none'}; "
                             f"influencers {', '.join(r['influencers']) or 'none'})"],
            ["tax seasons", str(len(r["seasons"]))],
            ["rate in force at the start", _rate(first)],
            ["rate voted", _rate(r["voted_rate"]) if r["voted_rate"] is not None else "no new constitution"],
            ["after begins", f"{r['divider'] or 'never'} ({r['divider_is']})"],
            ["compliance before", ci_text(r["before"])],
            ["compliance after", ci_text(r["after"])]]


def compliance_plot(lines: list[tuple[str, dict]], w: int = 760, h: int = 360) -> str:
    """x: the season; y: mean compliance with its 95% band, a line per save; a dashed mark where each
    save's "after" begins."""
    left, right, top, bottom = 70, w - 40, 40, h - 70
    seasons = [p["season"] for _, r in lines for p in r["seasons"]] or [1]
    x0, x1 = min(seasons) - 0.5, max(seasons) + 0.5
    ys = [v for _, r in lines for p in r["seasons"] for v in (p["compliance"]["hi"], p["compliance"]["mean"])
          if v is not None]
    y1 = 1.0 if max(ys, default=0) > 0.5 else 0.5  # (a band past 100% is cut there: it is a share)

    def X(v: float) -> float:
        return left + (right - left) * (v - x0) / (x1 - x0)

    def Y(v: float) -> float:
        return bottom - (bottom - top) * max(0.0, min(v, y1)) / y1

    body = [f'<line x1="{left}" y1="{bottom}" x2="{right}" y2="{bottom}" stroke="#444"/>',
            f'<line x1="{left}" y1="{top}" x2="{left}" y2="{bottom}" stroke="#444"/>',
            _text((left + right) / 2, bottom + 34, "tax season", 11, "middle"),
            f'<text transform="translate(16 {(top + bottom) / 2:.0f}) rotate(-90)" font-size="11" '
            f'text-anchor="middle" {FONT}>{escape("share of holdings deposited")}</text>']
    for k in range(5):
        v = y1 * k / 4
        body += [f'<line x1="{left}" y1="{Y(v):.1f}" x2="{right}" y2="{Y(v):.1f}" stroke="#eee"/>',
                 _text(left - 6, Y(v) + 4, f"{v:.0%}", 10, "end")]
    for n in sorted(set(seasons)):
        body.append(_text(X(n), bottom + 16, str(n), 10, "middle"))
    for i, (name, r) in enumerate(lines):
        color = PALETTE[i % len(PALETTE)]
        pts = [(p["season"], p["compliance"]) for p in r["seasons"] if p["compliance"]["mean"] is not None]
        band = [(n, c) for n, c in pts if c["lo"] is not None]
        if band:
            d = " ".join(f"{'M' if j == 0 else 'L'}{X(n):.1f},{Y(c['hi']):.1f}" for j, (n, c) in enumerate(band))
            d += " " + " ".join(f"L{X(n):.1f},{Y(c['lo']):.1f}" for n, c in reversed(band)) + " Z"
            body.append(f'<path d="{d}" fill="{color}" fill-opacity="0.15" stroke="none"/>')
        if pts:
            d = " ".join(f"{'M' if j == 0 else 'L'}{X(n):.1f},{Y(c['mean']):.1f}" for j, (n, c) in enumerate(pts))
            body.append(f'<path d="{d}" fill="none" stroke="{color}" stroke-width="2.2"/>')
            body += [f'<circle cx="{X(n):.1f}" cy="{Y(c["mean"]):.1f}" r="3" fill="{color}"/>' for n, c in pts]
        after = [p["season"] for p in r["seasons"] if p["after"]]
        if after:
            xm = X(min(after) - 0.5) + 2 * i
            body += [f'<line x1="{xm:.1f}" y1="{top}" x2="{xm:.1f}" y2="{bottom}" stroke="{color}" '
                     'stroke-dasharray="5,4" stroke-width="1.5"/>',
                     _text(xm + 4, top + 12 + 13 * i, f"new constitution ({r['divider_is'][:40]})", 9, color=color)]
        ly = bottom + 50 if len(lines) == 1 else top + 14 + 17 * i
        lx = left + 12 if len(lines) == 1 else right - 230
        body += [f'<line x1="{lx}" y1="{ly - 4}" x2="{lx + 18}" y2="{ly - 4}" stroke="{color}" stroke-width="3"/>',
                 _text(lx + 24, ly, name, 11)]
    return _svg(w, h + (10 if len(lines) == 1 else 0), body, "Compliance over tax seasons (mean, 95% band)")


def stance_plot(r: dict, w: int = 760, h: int = 360) -> str:
    """Each agent's desired rate over time (a step line from its first stance), the rate in force dashed."""
    left, right, top, bottom = 70, w - 190, 40, h - 60
    start, end = datetime.strptime(r["start"], TIME_FMT), datetime.strptime(r["end"], TIME_FMT)
    axis, x = _time_axis(start, end, left, right, bottom, top)
    vals = [v for trail in r["stances"].values() for s in trail for v in (s["value"], s["previous"])
            if isinstance(v, (int, float))] + [p["rate"] for p in r["seasons"] if isinstance(p["rate"], (int, float))]
    y1 = max([10.0, *vals])

    def Y(v: float) -> float:
        return bottom - (bottom - top) * max(0.0, min(v, y1)) / y1

    body = axis + [f'<line x1="{left}" y1="{top}" x2="{left}" y2="{bottom}" stroke="#444"/>',
                   f'<text transform="translate(16 {(top + bottom) / 2:.0f}) rotate(-90)" font-size="11" '
                   f'text-anchor="middle" {FONT}>desired tax rate (%)</text>']
    for k in range(5):
        v = y1 * k / 4
        body.append(_text(left - 6, Y(v) + 4, f"{v:.0f}", 10, "end"))
    for i, (agent, trail) in enumerate(sorted(r["stances"].items())):
        color = PALETTE[i % len(PALETTE)]
        steps = [(datetime.strptime(s["time"], TIME_FMT), s["value"]) for s in trail if isinstance(s["value"], (int, float))]
        if not steps:
            continue
        first = trail[0]["previous"]
        begin = (start, first) if isinstance(first, (int, float)) else steps[0]
        body.append(f'<path d="{_steps(begin, steps, x, Y)} H{x(end):.1f}" fill="none" stroke="{color}" '
                    'stroke-width="1.6" stroke-opacity="0.85"/>')
        body.append(_text(right + 8, top + 12 * (i + 1), f"{agent} ({steps[-1][1]:g}%)", 9, color=color))
    rates = [(datetime.strptime(p["start"], TIME_FMT), p["rate"]) for p in r["seasons"] if isinstance(p["rate"], (int, float))]
    if rates:
        body.append(f'<path d="{_steps(rates[0], rates, x, Y)} H{x(end):.1f}" fill="none" stroke="#222" '
                    'stroke-dasharray="6,4" stroke-width="2"/>')
        body.append(_text(left + 6, top + 10, "dashed: the rate in force at each season", 9, color="#222"))
    return _svg(w, h, body, "Stances on the tax over time")


def _steps(begin: tuple, steps: list[tuple], x, Y) -> str:
    """An SVG path of a step curve: from `begin`, each (time, value) a step."""
    return f"M{x(begin[0]):.1f},{Y(begin[1]):.1f} " + " ".join(f"H{x(t):.1f} V{Y(v):.1f}" for t, v in steps)


def _talk(s: dict) -> str:
    t = s.get("talk")
    if not t:
        return f"conversation {s['conversation']}" if s.get("conversation") is not None else "no conversation named"
    return f"conversation {s['conversation']}: {' and '.join(t['participants'])}, {t['time']} at {t['place']}"


def civics_doc(results: list[dict], labels: list[str]) -> Doc:
    first = results[0]
    doc = Doc(f"{first['world']}: civics")
    doc.para(f"{first['start']} → {first['end']}. Compliance: the items a constituent deposited into the town chest "
             "(ledger rows \"tax\" and \"deposit\") within a season's window, over the items it held at the season's "
             "start (the world's starting inventories plus the ledger before it; all kinds of item counted alike). "
             "Per season the mean over constituents who held something, with a 95% confidence interval "
             "(Student's t). Before / after: each constituent's mean over the seasons before / from the new "
             "constitution's time in force, then the mean over constituents. " + SID)
    heads = [dict(headline(r)) for r in results]
    doc.table(["measure", *(f"{lb} ({label(r)})" for lb, r in zip(labels, results))],
              [[m, *(h.get(m, "") for h in heads)] for m in dict.fromkeys(m for h in heads for m in h)])
    doc.figure("compliance", compliance_plot(list(zip(labels, results))),
               "Mean compliance per season, a line per save, the band its 95% CI; dashed: where \"after\" begins.")
    for lb, r in zip(labels, results):
        doc.heading(f"{lb}: seasons" if len(results) > 1 else "Seasons")
        doc.table(["season", "start", "until", "rate", "period", "items held", "deposited", "holding", "compliance"],
                  [[p["season"], p["start"], p["until"], _rate(p["rate"]), "after" if p["after"] else "before",
                    p["held"], p["deposited"], p["holding"], ci_text(p["compliance"])] for p in r["seasons"]])
        doc.heading("Constitutions", 3)
        doc.table(["version", "rate", "in force", "text"],
                  [[v["version"], _rate(v["rate"]), v["in_force"], v["text"]] for v in r["constitutions"]])
        doc.heading("Amendments", 3)
        if r["amendments"]:
            doc.table(["#", "text", "rate", "yes", "no", "abstain", "passed"],
                      [[a["amendment"], a["text"], _rate(a["rate"]), *(("" if a[k] is None else a[k])
                                                                        for k in ("yes", "no", "abstain")),
                        {True: "yes", False: "no", None: "not tallied"}.get(a["passed"], str(a["passed"]))]
                       for a in r["amendments"]])
            if r["amendments"][0]["frozen"]:
                doc.para("The constitution was frozen: the vote was held and tallied, nothing changed.")
        else:
            doc.para("No amendment was proposed.")
        doc.heading("Votes by agent", 3)
        n = max((len(v) for v in r["votes"].values()), default=0)
        doc.table(["agent", *(f"amendment {i + 1}" for i in range(n))],
                  [[a, *(v + [""] * (n - len(v)))] for a, v in sorted(r["votes"].items())]) if r["votes"] \
            else doc.para("No vote was cast.")
        doc.heading("Stances", 3)
        if r["stances"]:
            doc.figure(f"stances-{lb}", stance_plot(r), "Each agent's desired rate from its first stance on; "
                       "the dashed line is the rate in force.")
            doc.details(f"{len(r['stances'])} agents' stances and the conversations that moved them", [
                f"{a}: " + "; ".join(f"{s['time']} {_rate(s['previous'])} → {_rate(s['value'])} (with {s['other']}, "
                                     f"{_talk(s)})" for s in trail) for a, trail in sorted(r["stances"].items())])
        else:
            doc.para("No stance was formed (the social modules off, or no talk touched the tax).")
        if r["feedback"]:
            doc.details(f"{len(r['feedback'])} feedback answers", [f"{f['agent']} ({_rate(f['rate'])}): {f['text']}"
                                                                  for f in r["feedback"]])
    return doc
