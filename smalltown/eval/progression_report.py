"""The report of `smalltown eval progression` (eval/progression.py): saves side by side (with and
without action awareness), with Project Sid's figures beside, a plot of the mean distinct item
kinds over game time per save and one of each agent's in each save."""

from __future__ import annotations

from datetime import datetime

from smalltown.eval.plots import PALETTE, _svg, _text, _time_axis
from smalltown.eval.progression import SID_AGENTS, SID_ITEMS, SID_MINUTES
from smalltown.eval.report import Doc
from smalltown.store.schema import TIME_FMT


def label(r: dict) -> str:
    return "with action awareness" if r["action_awareness"] else "without action awareness"


def _num(v: float | None, d: int = 2) -> str:
    return "undefined" if v is None else f"{v:.{d}f}"


def headline(r: dict) -> list[list[str]]:
    kinds = len(r["items"])
    return [["setting", f"{r['architecture']}, action awareness {'on' if r['action_awareness'] else 'off'}"],
            ["agents; item kinds in the world", f"{r['agents']}; {kinds} ({', '.join(r['items'])})"],
            ["distinct items held, mean at the end", f"{_num(r['mean'])} of {kinds}"],
            ["min / max at the end", f"{r['min']} / {r['max']}"],
            ["agents who held every kind", f"{r['all_kinds']} of {r['agents']}"],
            ["gives and trades done / refused", f"{r['offers_done']} / {r['offers_refused']}"],
            [f"mean at {SID_MINUTES} game minutes", _num(r["mean_at_30_minutes"])]]


def _dt(s: str) -> datetime:
    return datetime.strptime(s, TIME_FMT)


def steps(title: str, series: list[tuple[str, list[tuple[datetime, float]]]], start: datetime, end: datetime,
          y_max: int, y_label: str = "distinct item kinds held", w: int = 760, h: int = 340,
          width: float = 2.2, legend: bool = True) -> str:
    """Step curves of a count (0..y_max) over game time, each held to the end."""
    left, right, top, bottom = 60, w - 40, 40, h - 60
    body, x = _time_axis(start, end, left, right, bottom, top)
    y_max = max(1, y_max)

    def y(v: float) -> float:
        return bottom - (bottom - top) * v / y_max
    body.append(f'<line x1="{left}" y1="{top}" x2="{left}" y2="{bottom}" stroke="#444"/>')
    body.append(_text(left - 40, top - 8, y_label, 11))
    for v in range(0, y_max + 1, max(1, y_max // 8)):
        body.append(f'<line x1="{left}" y1="{y(v):.1f}" x2="{right}" y2="{y(v):.1f}" stroke="#eee"/>')
        body.append(_text(left - 6, y(v) + 4, str(v), 10, "end"))
    for i, (name, points) in enumerate(series):
        if not points:
            continue
        color = PALETTE[i % len(PALETTE)]
        d = [f"M{x(points[0][0]):.1f},{y(points[0][1]):.1f}"] + \
            [f"H{x(t):.1f} V{y(v):.1f}" for t, v in points[1:]] + [f"H{x(end):.1f}"]
        body.append(f'<path d="{" ".join(d)}" fill="none" stroke="{color}" stroke-width="{width}"/>')
        if legend:
            body.append(_text(left + 12, top + 14 + 16 * i, f"{name} ({points[-1][1]:.2f} at the end)", 11,
                              "start", color))
    return _svg(w, h, body, title)


def progression_doc(results: list[dict], labels: list[str]) -> Doc:
    first = results[0]
    doc = Doc(f"{first['world']}: item progression")
    doc.para(f"Distinct kinds of item each agent has come to hold (its starting inventory, then every ledger row "
             f"it took: a gather, a craft's output, a give or trade received), counted from the first time it held "
             f"one. Project Sid §3 (Minecraft, a model): {SID_AGENTS} agents reach about {SID_ITEMS} distinct items "
             f"each in {SID_MINUTES} minutes, fewer without action awareness; its world has hundreds of item kinds, "
             f"this one {len(first['items'])}.")
    heads = [dict(headline(r)) for r in results]
    names = list(dict.fromkeys(m for h in heads for m in h))
    doc.table(["measure", *(f"{lb} ({label(r)})" for lb, r in zip(labels, results))],
              [[m, *(h.get(m, "") for h in heads)] for m in names])
    start = min(_dt(r["start"]) for r in results)
    end = max(_dt(r["end"]) for r in results)
    kinds = max(len(r["items"]) for r in results)
    doc.heading("Mean distinct items over game time")
    doc.figure("progression", steps("Distinct items held (mean over agents)", [
        (f"{lb} ({label(r)})", [(_dt(t), v) for t, v in r["mean_curve"]]) for lb, r in zip(labels, results)],
        start, end, kinds), "The mean over agents of the distinct item kinds each has come to hold.")
    for lb, r in zip(labels, results):
        doc.heading(f"{lb} ({label(r)})")
        per = [(a["agent"], sorted((_dt(t), i) for i, t in a["first"].items())) for a in r["per_agent"]]
        doc.figure(f"agents-{lb}", steps(f"Distinct items held by each agent ({lb})", [
            (name, [(start, 0)] + [(t, k + 1) for k, (t, _) in enumerate(firsts)]) for name, firsts in per],
            start, end, kinds, width=1.4, legend=len(per) <= 12), "One line an agent.")
        doc.table(["agent", "distinct items", "first held (item at time)"],
                  [[a["agent"], a["distinct"], ", ".join(f"{i} {t[5:16]}" for i, t in a["first"].items())]
                   for a in r["per_agent"]])
    return doc
