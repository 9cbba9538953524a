"""The report's pictures as SVG text: no plotting library, so every report has them, and one HTML
file can carry them inline. Diffusion curves, the relationship graph, the spread graph."""

from __future__ import annotations

import math
import zlib
from datetime import datetime, timedelta
from html import escape as html_escape
from typing import Callable

from smalltown.shown import shown

PALETTE = ("#4e79a7", "#f28e2b", "#e15759", "#59a14f", "#b07aa1", "#76b7b2", "#edc948", "#9c755f")
HOW_COLOR = {"start": "#333333", "told": "#4e79a7", "saw": "#f28e2b", "inner voice": "#b07aa1", "own": "#59a14f"}
FONT = 'font-family="Helvetica, Arial, sans-serif"'


def escape(text: str) -> str:
    """Names and facts from a save, as SVG text: a control character is not even valid XML."""
    return html_escape(shown(text))


def _svg(w: int, h: int, body: list[str], title: str) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" '
            f'role="img" aria-label="{escape(title)}">\n<rect width="{w}" height="{h}" fill="white"/>\n'
            f'<text x="{w / 2:.0f}" y="20" text-anchor="middle" font-size="15" font-weight="bold" {FONT}>'
            f'{escape(title)}</text>\n' + "\n".join(body) + "\n</svg>\n")


def _text(x: float, y: float, s: str, size: int = 11, anchor: str = "start", color: str = "#222") -> str:
    return (f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" fill="{color}" {FONT}>'
            f'{escape(s)}</text>')


def _time_axis(start: datetime, end: datetime, x0: float, x1: float, y: float,
               top: float) -> tuple[list[str], Callable[[datetime], float]]:
    """Ticks at round hours, few enough to read; returns the drawing and the time -> x map."""
    span = max((end - start).total_seconds(), 1.0)

    def x(t: datetime) -> float:
        return x0 + (x1 - x0) * min(max((t - start).total_seconds() / span, 0.0), 1.0)

    step = next(h for h in (1, 2, 3, 6, 12, 24, 48, 96, 168, 10**6) if span / 3600 / h <= 8)
    t = start.replace(minute=0, second=0, microsecond=0)
    while t < start or t.hour % min(step, 24):
        t += timedelta(hours=1)
    out = [f'<line x1="{x0}" y1="{y}" x2="{x1}" y2="{y}" stroke="#444"/>']
    while t <= end:
        xt = x(t)
        out.append(f'<line x1="{xt:.1f}" y1="{top}" x2="{xt:.1f}" y2="{y}" stroke="#eee"/>')
        out.append(_text(xt, y + 15, t.strftime("%a %H:%M") if step < 24 else t.strftime("%b %d"), 10, "middle"))
        t += timedelta(hours=step)
    return out, x


def curves(title: str, series: list[tuple[str, list[tuple[datetime, float]]]], start: datetime, end: datetime,
           y_label: str = "share of the town", w: int = 760, h: int = 340) -> str:
    """Step curves of a share (0..1) over game time, one per series."""
    left, right, top, bottom = 60, w - 40, 40, h - 60
    axis, x = _time_axis(start, end, left, right, bottom, top)
    body = axis + [f'<line x1="{left}" y1="{top}" x2="{left}" y2="{bottom}" stroke="#444"/>',
                   f'<text transform="translate(16 {(top + bottom) / 2:.0f}) rotate(-90)" font-size="11" '
                   f'text-anchor="middle" {FONT}>{escape(y_label)}</text>']
    def y(v: float) -> float:
        return bottom - (bottom - top) * v
    for v in (0, 0.25, 0.5, 0.75, 1.0):
        body.append(f'<line x1="{left}" y1="{y(v):.1f}" x2="{right}" y2="{y(v):.1f}" stroke="#eee"/>')
        body.append(_text(left - 6, y(v) + 4, f"{v:.0%}", 10, "end"))
    for i, (label, points) in enumerate(series):
        color = PALETTE[i % len(PALETTE)]
        d, last = [], None
        for t, v in points:
            if last is None:
                d.append(f"M{x(t):.1f},{y(v):.1f}")
            else:
                d.append(f"H{x(t):.1f} V{y(v):.1f}")
            last = v
        body.append(f'<path d="{" ".join(d)}" fill="none" stroke="{color}" stroke-width="2.2"/>')
        lx, ly = left + 12, top + 14 + 17 * i  # early on, the top left is where the curves are not
        body.append(f'<line x1="{lx:.0f}" y1="{ly}" x2="{lx + 18:.0f}" y2="{ly}" stroke="{color}" stroke-width="3"/>')
        end_v = points[-1][1] if points else 0
        body.append(_text(lx + 24, ly + 4, f"{label} ({end_v:.0%} at the end)", 11))
    return _svg(w, h, body, title)


def _circle(names: list[str], cx: float, cy: float, r: float) -> dict[str, tuple[float, float]]:
    n = max(len(names), 1)
    angles = [2 * math.pi * i / n - math.pi / 2 for i in range(len(names))]  # clockwise from the top
    return {a: (cx + r * math.cos(t), cy + r * math.sin(t)) for a, t in zip(names, angles)}


def networks(title: str, agents: list[str], panels: list[tuple[str, list[list[str]]]], size: int = 520) -> str:
    """The relationship graph, one panel per moment (edges: both know each other), agents on a circle."""
    r = size / 2 - 115  # room for the names outside the circle
    w, h = size * len(panels), int(2 * r + 120)
    body = []
    for k, (label, edges) in enumerate(panels):
        cx, cy = size * k + size / 2, 75 + r
        pos = _circle(agents, cx, cy, r)
        degree = {a: 0 for a in agents}
        for a, b in edges:
            if a in pos and b in pos:
                degree[a] += 1
                degree[b] += 1
                (x1, y1), (x2, y2) = pos[a], pos[b]
                body.append(f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="#4e79a7" '
                            f'stroke-opacity="0.35" stroke-width="1.2"/>')
        for a, (px, py) in pos.items():
            body.append(f'<circle cx="{px:.1f}" cy="{py:.1f}" r="{4 + min(degree[a], 24) / 4:.1f}" '
                        f'fill="{PALETTE[1] if degree[a] else "#bbb"}" stroke="white"/>')
            ang = math.atan2(py - cy, px - cx)
            tx, ty = cx + (r + 12) * math.cos(ang), cy + (r + 12) * math.sin(ang) + 4
            side = "start" if math.cos(ang) > 0.1 else "end" if math.cos(ang) < -0.1 else "middle"
            body.append(_text(tx, ty, a, 10, side))
        body.append(_text(cx, 52, f"{label}: {len(edges)} edges", 12, "middle", "#444"))
    return _svg(w, h, body, title)


def spread_graph(title: str, agents: list[str], learned: list[dict], start: datetime, end: datetime,
                 w: int = 760) -> str:
    """Who first heard it from whom: each agent who learned it at the time it did (a row each,
    in order), an arrow from whoever it came from, coloured by how; then those who never did."""
    never = [a for a in agents if a not in {l["agent"] for l in learned}]
    row, left, right, top = 22, 150, w - 40, 50
    h = top + row * (len(learned) + len(never)) + 70
    bottom = top + row * max(len(learned), 1)
    axis, x = _time_axis(start, end, left, right, bottom + 10, top - 10)
    body = list(axis)
    arrow = f"arrow{zlib.crc32(title.encode())}"  # ids unique among the SVGs of one HTML page
    at: dict[str, tuple[float, float]] = {}
    for i, l in enumerate(learned):
        at[l["agent"]] = (x(datetime.strptime(l["time"], "%Y-%m-%d %H:%M:%S")), top + row * i + row / 2)
    for l in learned:
        src = at.get(l["from"] or "")
        if src is not None:
            (x1, y1), (x2, y2) = src, at[l["agent"]]
            color = HOW_COLOR.get(l["how"], "#777")
            curve = f"M{x1:.1f},{y1:.1f} C{x1 + 30:.1f},{y1:.1f} {x2 - 30:.1f},{y2:.1f} {x2:.1f},{y2:.1f}"
            body.append(f'<path d="{curve}" fill="none" stroke="{color}" stroke-width="1.4" stroke-opacity="0.8" '
                        f'marker-end="url(#{arrow})"/>')
    for l in learned:
        px, py = at[l["agent"]]
        body.append(f'<circle cx="{px:.1f}" cy="{py:.1f}" r="5" fill="{HOW_COLOR.get(l["how"], "#777")}"/>')
        how = l["how"] + (f" {l['from']}" if l["from"] else "")
        body.append(_text(left - 8, py + 4, l["agent"], 11, "end"))
        body.append(_text(px + 8, py + 4, how, 9, "start", "#666"))
    for j, a in enumerate(never):
        body.append(_text(left - 8, bottom + 40 + row * j, a, 11, "end", "#999"))
    if never:
        body.append(_text(left, bottom + 40, "never heard of it", 10, "start", "#999"))
    legend = " ".join(f'<tspan fill="{c}">● {k}</tspan>' for k, c in HOW_COLOR.items())
    body.append(f'<text x="{left}" y="36" font-size="11" {FONT}>{legend}</text>')
    body.insert(0, f'<defs><marker id="{arrow}" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="6" '
                   'markerHeight="6" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#666"/>'
                   '</marker></defs>')
    return _svg(w, h, body, title)


def bars(title: str, items: list[tuple[str, float | None]], y_label: str, w: int = 760, h: int = 340) -> str:
    """A bar per item (its label under it, its value over it; None drawn as "n/a")."""
    left, right, top, bottom = 70, w - 40, 40, h - 70
    top_v = max([v for _, v in items if v is not None] + [0.0]) or 1.0
    slot = (right - left) / max(len(items), 1)
    body = [f'<line x1="{left}" y1="{bottom}" x2="{right}" y2="{bottom}" stroke="#444"/>',
            f'<line x1="{left}" y1="{top}" x2="{left}" y2="{bottom}" stroke="#444"/>',
            f'<text transform="translate(16 {(top + bottom) / 2:.0f}) rotate(-90)" font-size="11" '
            f'text-anchor="middle" {FONT}>{escape(y_label)}</text>']
    for k in range(5):
        v = top_v * k / 4
        y = bottom - (bottom - top) * k / 4
        body += [f'<line x1="{left}" y1="{y:.1f}" x2="{right}" y2="{y:.1f}" stroke="#eee"/>',
                 _text(left - 6, y + 4, f"{v:.3g}", 10, "end")]
    for i, (label, v) in enumerate(items):
        x = left + slot * i + slot * 0.15
        if v is not None:
            bh = (bottom - top) * v / top_v
            body.append(f'<rect x="{x:.1f}" y="{bottom - bh:.1f}" width="{slot * 0.7:.1f}" height="{bh:.1f}" '
                        f'fill="{PALETTE[i % len(PALETTE)]}"/>')
        body += [_text(x + slot * 0.35, bottom - (bottom - top) * (v or 0) / top_v - 5,
                       "n/a" if v is None else f"{v:.3g}", 10, "middle"),
                 _text(x + slot * 0.35, bottom + 16, label[:24], 10, "middle")]
    return _svg(w, h, body, title)
