"""`eval matrix`'s figures and report: the measures of every run (condition × seed) gathered
into, per condition, the mean and spread over seeds of each figure, and for each series one
plot with a line per condition (the mean over seeds) and each seed's points beside it.

The runs themselves are made by the command line (cli/eval_matrix.py); this module only reads
what they measured, so the report's math can be checked on hand-made figures."""

from __future__ import annotations

import math
from collections import defaultdict

from smalltown.eval.plots import PALETTE, _svg, _text, escape
from smalltown.eval.report import Doc

FONT = 'font-family="Helvetica, Arial, sans-serif"'
SCRIPTED = ("Scripted answers: the figures show the pipeline and the stand-in's rules under each condition "
            "and seed, not how a model behaves; run the matrix with a model (--backend llama or openai) to "
            "measure that.")


def caveat(backend: str) -> str | None:
    return SCRIPTED if backend == "scripted" else None


def summary(values: list[float | None]) -> dict:
    """Mean and spread over seeds of one figure: n (seeds with a value), mean, sd (the sample
    standard deviation, n - 1; None for fewer than two), min, max; None where no seed has one."""
    xs = [float(v) for v in values if v is not None and math.isfinite(v)]
    if not xs:
        return {"n": 0, "mean": None, "sd": None, "min": None, "max": None}
    mean = sum(xs) / len(xs)
    sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / (len(xs) - 1)) if len(xs) > 1 else None
    return {"n": len(xs), "mean": mean, "sd": sd, "min": min(xs), "max": max(xs)}


def mean_series(per_seed: list[list[tuple[float, float]]]) -> list[tuple[float, float]]:
    """The mean over seeds at each x some seed has (the seeds that have it)."""
    at: dict[float, list[float]] = defaultdict(list)
    for points in per_seed:
        for x, y in points:
            at[x].append(y)
    return [(x, sum(ys) / len(ys)) for x, ys in sorted(at.items())]


def gather(runs: dict[str, dict[int, dict]]) -> dict:
    """runs: condition -> seed -> {"measures": {measure: Measured}} (or {"error": ...}) as the
    runner recorded them. Returns condition -> {"figures": {measure: {figure: summary + values}},
    "series": {measure: {series: {"mean": [...], "seeds": {seed: [...]}}}}}."""
    out = {}
    for cond, by_seed in runs.items():
        figures: dict[str, dict[str, dict]] = defaultdict(dict)
        series: dict[str, dict[str, dict]] = defaultdict(dict)
        done = {seed: r["measures"] for seed, r in by_seed.items() if "measures" in r}
        for measure in dict.fromkeys(m for ms in done.values() for m in ms):
            have = {seed: ms[measure] for seed, ms in done.items() if measure in ms}
            for fig in dict.fromkeys(f for m in have.values() for f in m["figures"]):
                values = {seed: m["figures"].get(fig) for seed, m in have.items()}
                figures[measure][fig] = {**summary(list(values.values())), "values": values}
            for name in dict.fromkeys(s for m in have.values() for s in m["series"]):
                seeds = {seed: [tuple(p) for p in m["series"].get(name, [])] for seed, m in have.items()}
                axes = next((m.get("axes", {}).get(name) for m in have.values() if m.get("axes", {}).get(name)),
                            None) or ["game hours", name]
                series[measure][name] = {"mean": mean_series(list(seeds.values())), "seeds": seeds, "axes": axes}
        out[cond] = {"figures": dict(figures), "series": dict(series)}
    return out


def cell(s: dict) -> str:
    """'12.3 ± 1.4 (10.9–13.8, 3 seeds)'."""
    if s["mean"] is None:
        return "n/a"
    spread = f" ± {_num(s['sd'])}" if s["sd"] is not None else ""
    seeds = f"{s['n']} seed{'s' if s['n'] != 1 else ''}"
    return f"{_num(s['mean'])}{spread} ({_num(s['min'])}–{_num(s['max'])}, {seeds})" if s["n"] > 1 \
        else f"{_num(s['mean'])} ({seeds})"


def _num(v: float) -> str:
    return f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.3g}"


def matrix_doc(r: dict) -> Doc:
    """r: the report's data (cli/eval_matrix.py: world, until, backend, seeds, conditions,
    measures, runs, gathered)."""
    doc = Doc(f"{r['world']}: {len(r['conditions'])} conditions × {len(r['seeds'])} seeds to {r['until']}")
    doc.para(f"Backend {r['backend']}; seeds {', '.join(map(str, r['seeds']))}; each run its own save in runs/. "
             "Each figure: the mean over seeds ± the sample standard deviation (min–max).")
    if r.get("note"):
        doc.para(r["note"])
    doc.table(["condition", "settings", "runs"],
              [[c, ", ".join(f"{k}={v}" for k, v in sets.items()) or "(the world's own)",
                _runs_line(r["runs"][c])] for c, sets in r["conditions"].items()])
    failed = [(c, seed, run) for c, by_seed in r["runs"].items() for seed, run in by_seed.items() if "error" in run]
    if failed:
        doc.heading("Runs that failed")
        doc.details(f"{len(failed)} run(s) failed; the rest are measured",
                    [f"{c} seed {seed}: {run['error']}" for c, seed, run in failed])
    gathered, conds = r["gathered"], list(r["conditions"])
    for measure, about in r["measures"].items():
        doc.heading(f"Measure: {measure}")
        doc.para(about)
        figs = list(dict.fromkeys(f for c in conds for f in gathered[c]["figures"].get(measure, {})))
        if figs:
            doc.table(["figure", *conds], [[f, *(cell(gathered[c]["figures"][measure][f])
                                                  if f in gathered[c]["figures"].get(measure, {}) else "n/a"
                                                  for c in conds)] for f in figs])
        names = list(dict.fromkeys(s for c in conds for s in gathered[c]["series"].get(measure, {})))
        for name in names:
            lines = [(c, gathered[c]["series"][measure][name]) for c in conds if name in gathered[c]["series"].get(measure, {})]
            axes = lines[0][1]["axes"]
            doc.figure(f"{measure}-{name}", plot(f"{name} ({measure})", [(c, s["mean"], list(s["seeds"].values()))
                                                                        for c, s in lines], *axes),
                       f"{name}: a line per condition, the mean over seeds; the dots are each seed's.")
    return doc


def _runs_line(by_seed: dict) -> str:
    done = [str(s) for s, run in by_seed.items() if "measures" in run]
    bad = [str(s) for s, run in by_seed.items() if "error" in run]
    return f"seeds {', '.join(done) or 'none'} measured" + (f"; seeds {', '.join(bad)} failed" if bad else "")


def plot(title: str, lines: list[tuple[str, list, list[list]]], x_label: str, y_label: str,
         w: int = 760, h: int = 360) -> str:
    """Numeric x and y: per line a mean curve and its seeds' points (small, same colour)."""
    left, right, top, bottom = 70, w - 40, 40, h - 70
    pts = [p for _, mean, seeds in lines for p in [*mean, *(q for s in seeds for q in s)]]
    xs, ys = [p[0] for p in pts] or [0.0, 1.0], [p[1] for p in pts] or [0.0, 1.0]
    x0, x1 = min(xs), max(xs) if max(xs) > min(xs) else min(xs) + 1
    y0, y1 = min(0.0, min(ys)), max(ys) if max(ys) > min(0.0, min(ys)) else min(0.0, min(ys)) + 1

    def X(v: float) -> float:
        return left + (right - left) * (v - x0) / (x1 - x0)

    def Y(v: float) -> float:
        return bottom - (bottom - top) * (v - y0) / (y1 - y0)

    body = [f'<line x1="{left}" y1="{bottom}" x2="{right}" y2="{bottom}" stroke="#444"/>',
            f'<line x1="{left}" y1="{top}" x2="{left}" y2="{bottom}" stroke="#444"/>',
            _text((left + right) / 2, bottom + 34, x_label, 11, "middle"),
            f'<text transform="translate(16 {(top + bottom) / 2:.0f}) rotate(-90)" font-size="11" '
            f'text-anchor="middle" {FONT}>{escape(y_label)}</text>']
    for k in range(5):
        vy, vx = y0 + (y1 - y0) * k / 4, x0 + (x1 - x0) * k / 4
        body += [f'<line x1="{left}" y1="{Y(vy):.1f}" x2="{right}" y2="{Y(vy):.1f}" stroke="#eee"/>',
                 _text(left - 6, Y(vy) + 4, f"{vy:.3g}", 10, "end"), _text(X(vx), bottom + 16, f"{vx:.3g}", 10, "middle")]
    for i, (label, mean, seeds) in enumerate(lines):
        color = PALETTE[i % len(PALETTE)]
        for s in seeds:
            body += [f'<circle cx="{X(x):.1f}" cy="{Y(y):.1f}" r="2.2" fill="{color}" fill-opacity="0.45"/>' for x, y in s]
        if mean:
            d = " ".join(f"{'M' if j == 0 else 'L'}{X(x):.1f},{Y(y):.1f}" for j, (x, y) in enumerate(mean))
            body.append(f'<path d="{d}" fill="none" stroke="{color}" stroke-width="2.2"/>')
        ly = top + 14 + 17 * i
        body += [f'<line x1="{right - 200}" y1="{ly}" x2="{right - 182}" y2="{ly}" stroke="{color}" stroke-width="3"/>',
                 _text(right - 176, ly + 4, label, 11)]
    return _svg(w, h, body, title)
