"""The report of `smalltown eval civics --roles` (eval/roles.py): saves side by side, with a bar
chart of each save's role shares, a chart of entropy and persistence per save, and each save's
role x action matrix (its most frequent actions)."""

from __future__ import annotations

from smalltown.eval.plots import PALETTE, _svg, _text
from smalltown.eval.report import Doc

ACTIONS_SHOWN = 12  # columns of a matrix table: the actions done most over all roles


def label(r: dict) -> str:
    return "with social modules" if r["social_awareness"] else "without social modules"


def _num(v: float | None, d: int = 3) -> str:
    return "undefined" if v is None else f"{v:.{d}f}"


def headline(r: dict) -> list[list[str]]:
    return [["setting", f"{r['architecture']}, social awareness {'on' if r['social_awareness'] else 'off'}"],
            ["agents with a role", f"{r['agents_with_roles']} of {r['agents']}"],
            ["distinct roles (K)", str(r["roles"])],
            ["entropy H (nats)", _num(r["entropy"])],
            ["normalised entropy H / ln K", _num(r["entropy_normalised"])],
            ["effective roles e^H", _num(r["effective_roles"], 2)],
            ["persistence (hourly samples unchanged)", _num(r["persistence"])],
            ["mean run length (hours)", _num(r["run_hours"], 2)],
            ["role changes (first roles included)", str(r["changes"])],
            ["roles by share of agent-hours", ", ".join(f"{k} {v:.0%}" for k, v in r["shares"].items())]]


def bars(title: str, groups: list[tuple[str, dict[str, float]]], w: int = 760) -> str:
    """One row of horizontal bars per (save, role): each role's share."""
    rows = [(g, k, v) for g, shares in groups for k, v in shares.items()]
    h = 60 + 18 * len(rows) + 14 * len(groups)
    left, right = 260, w - 60
    body, y = [], 40
    for i, (g, shares) in enumerate(groups):
        body.append(_text(10, y + 10, g, 11, color=PALETTE[i % len(PALETTE)]))
        y += 14
        for k, v in shares.items():
            body.append(_text(left - 6, y + 11, k, 10, "end"))
            body.append(f'<rect x="{left}" y="{y}" width="{(right - left) * v:.1f}" height="13" '
                        f'fill="{PALETTE[i % len(PALETTE)]}"/>')
            body.append(_text(left + (right - left) * v + 4, y + 11, f"{v:.0%}", 10))
            y += 18
    return _svg(w, h, body, title)


def dots(title: str, names: list[str], series: list[tuple[str, list[float | None]]], w: int = 760) -> str:
    """Values in 0..1 per save, one colour per measure."""
    h = 300
    left, right, top, bottom = 60, w - 160, 40, h - 70
    body = [f'<line x1="{left}" y1="{bottom}" x2="{right}" y2="{bottom}" stroke="#444"/>',
            f'<line x1="{left}" y1="{top}" x2="{left}" y2="{bottom}" stroke="#444"/>']
    for v in (0, 0.5, 1):
        y = bottom - (bottom - top) * v
        body.append(_text(left - 6, y + 4, f"{v:.1f}", 10, "end"))
    step = (right - left) / max(len(names), 1)
    for j, n in enumerate(names):
        body.append(_text(left + step * (j + 0.5), bottom + 16, n, 10, "middle"))
    for i, (m, vals) in enumerate(series):
        c = PALETTE[i % len(PALETTE)]
        body.append(_text(right + 10, top + 16 * i + 10, m, 10, color=c))
        for j, v in enumerate(vals):
            if v is not None:
                body.append(f'<circle cx="{left + step * (j + 0.5) + 6 * i:.1f}" '
                            f'cy="{bottom - (bottom - top) * v:.1f}" r="4" fill="{c}"/>')
    return _svg(w, h, body, title)


def roles_doc(results: list[dict], labels: list[str]) -> Doc:
    first = results[0]
    doc = Doc(f"{first['world']}: roles")
    doc.para(f"{first['agents']} agents, {first['start']} → {first['end']}. A role is held from its \"role\" event "
             "to the agent's next one (or the save's end). K: the distinct roles held in that save; entropy over "
             "each role's share of the agent-hours held, H / ln K normalised by that save's own K. Persistence: "
             "each agent's role sampled hourly from its first one, the share of consecutive samples unchanged "
             "(mean over agents); run length: agent-hours held / role runs. Project Sid (30 agents, a model): "
             "more roles, more persistent, with social awareness than without.")
    heads = [dict(headline(r)) for r in results]
    doc.table(["measure", *(f"{lb} ({label(r)})" for lb, r in zip(labels, results))],
              [[m, *(h.get(m, "") for h in heads)] for m in dict.fromkeys(m for h in heads for m in h)])
    doc.figure("role-shares", bars("Role shares of agent-hours", [(f"{lb} ({label(r)})", r["shares"])
                                                                 for lb, r in zip(labels, results)]),
               "Each role's share of the agent-hours held, per save.")
    doc.figure("entropy-persistence", dots("Normalised entropy and persistence", labels, [
        ("H / ln K", [r["entropy_normalised"] for r in results]),
        ("persistence", [r["persistence"] for r in results])]), "Per save; undefined values are left out.")
    for lb, r in zip(labels, results):
        doc.heading(f"Role × action: {lb} ({label(r)})")
        totals: dict[str, int] = {}
        for row in r["matrix"].values():
            for a, n in row.items():
                totals[a] = totals.get(a, 0) + n
        cols = sorted(totals, key=lambda a: (-totals[a], a))[:ACTIONS_SHOWN]
        if not cols:
            doc.para("No action done while holding a role.")
            continue
        doc.table(["role", *cols, "all actions"],
                  [[role, *(row.get(a, 0) for a in cols), sum(row.values())] for role, row in r["matrix"].items()])
        ops = sorted((a for a in r.get("ops", []) if a in totals), key=lambda a: (-totals[a], a))[:ACTIONS_SHOWN]
        if ops:
            doc.para("The economy's ops (from the ledger) by role:")
            doc.table(["role", *ops], [[role, *(row.get(a, 0) for a in ops)] for role, row in r["matrix"].items()])
    return doc
