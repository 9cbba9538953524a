"""Role measures (Project Sid §5.1, Figures 8-9), from a save's "role" events.

A role change is (time, agent, role): an agent holds a role from its change until its next one,
or the save's end. Over the agent-hours so held (from each agent's first role on):
- roles: the number K of distinct roles held;
- distribution: each role's share p of the agent-hours held;
- entropy: H = -sum p ln p, and H / ln K (1: the hours spread evenly over the K roles held,
  0: one role; undefined for K < 2) — K is this save's own count of distinct roles;
- effective roles: e^H, the number of equally held roles with the same entropy (K when the hours
  spread evenly, 1 for one role): "more roles" when K is capped, e.g. by a stand-in that names one
  role per need;
- persistence: each agent's role sampled hourly from its first role on; the share of
  consecutive samples that are the same role (mean over agents), and the mean run length in
  hours (agent-hours held / role runs, the last run of each agent ending at the save's end);
- role x action: counts of the actions each role did (an action counted under the role its
  agent held when it began it; actions before an agent's first role are left out).
Actions come from `actions` (the one place a save's actions are read: activities begun, the
"started" events, and with an economy its ledger's ops, e.g. "gather wheat", "craft bread")."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta
from smalltown.config import Settings
from smalltown.store.reader import Reader
from smalltown.store.schema import TIME_FMT
from smalltown.world.model import SLEEPING

Change = tuple[datetime, str, str]  # (time, agent, role)
Act = tuple[str, datetime, str]  # (agent, time, action)
HOUR = timedelta(hours=1)


@dataclass
class RoleSave:
    world: str
    agents: list[str]
    start: datetime
    end: datetime
    settings: dict  # the run's architecture and module switches that matter here
    changes: list[Change]
    actions: list[Act]
    ops: tuple[str, ...] = ()  # the actions that are the economy's ops (ledger_actions' labels)


LEDGER_ACTS = ("gather", "craft", "give", "trade", "deposit", "tax")  # (craft_in: the inputs a craft used up)


def ledger_actions(reader: Reader) -> list[Act]:
    """The economy's ops in the save's ledger, oldest first, as "<kind> <item>", the agent's (the
    giver's, or for what is made from nothing the taker's); a trade counts for both its sides."""
    agents, out = set(reader.agent_names()), []
    for _id, _tick, time, kind, giver, taker, item, _qty, _note in reader.ledger():
        who = giver if giver in agents else taker
        if kind in LEDGER_ACTS and who in agents:
            out.append((who, datetime.strptime(time, TIME_FMT), f"{kind} {item}"))
    return out


def actions(reader: Reader) -> list[Act]:
    """A save's actions, oldest first: each activity an agent began (sleep left out), and with an
    economy each op of its ledger (`ledger_actions`)."""
    out = []
    for e in reader.events(kinds=("started",)):
        activity = str(e.data.get("activity", ""))
        if e.agent and activity and activity != SLEEPING:
            out.append((e.agent, datetime.strptime(e.time, TIME_FMT), activity))
    return sorted(out + ledger_actions(reader), key=lambda a: a[1])  # (stable: a tick's activities first)


def read_roles(reader: Reader) -> RoleSave:
    settings = Settings().saved(reader.meta("settings"))
    changes = [(datetime.strptime(e.time, TIME_FMT), e.agent, str(e.data.get("role", "")))
               for e in reader.events(kinds=("role",)) if e.agent]
    end = datetime.strptime(reader.meta("game_time"), TIME_FMT)
    acts = actions(reader)
    ops = tuple(sorted({a for _, _, a in ledger_actions(reader)}))
    start = min([t for t, _, _ in changes] + [t for _, t, _ in acts] + [end])  # (the first thing done)
    return RoleSave(str(reader.meta("world") or ""), reader.agent_names(), start, end,
                    {"architecture": settings.architecture, "social_awareness": settings.social_awareness,
                     "goal_generation": settings.goal_generation, "roles": settings.roles},
                    changes, acts, ops)


def runs(changes: list[Change], end: datetime) -> dict[str, list[tuple[datetime, datetime, str]]]:
    """Each agent's role runs (from, to, role), a change to the same role merged into its run."""
    out: dict[str, list[tuple[datetime, datetime, str]]] = defaultdict(list)
    for t, agent, role in sorted(changes):
        mine = out[agent]
        if mine and mine[-1][2] == role:
            continue
        if mine:
            mine[-1] = (mine[-1][0], t, mine[-1][2])
        mine.append((t, end, role))
    return dict(out)


def role_at(agent_runs: list[tuple[datetime, datetime, str]], t: datetime) -> str | None:
    """The role held at `t` (the last run's to the end, inclusive); None before the first."""
    for a, b, role in agent_runs:
        if a <= t < b or (a <= t and (a, b, role) == agent_runs[-1]):
            return role
    return None


def entropy(hours: dict[str, float]) -> tuple[float, float | None]:
    """(H in nats, H / ln K) of the shares of `hours`; the second None when K < 2."""
    total = sum(hours.values())
    ps = [h / total for h in hours.values() if h > 0] if total > 0 else []
    h = -sum(p * math.log(p) for p in ps)
    return h, (h / math.log(len(ps)) if len(ps) >= 2 else None)


def measure(changes: list[Change], acts: list[Act], end: datetime) -> dict:
    by_agent = runs(changes, end)
    hours: Counter[str] = Counter()
    same = pairs = 0
    persist: list[float] = []
    n_runs = 0
    for agent, rs in by_agent.items():
        n_runs += len(rs)
        for a, b, role in rs:
            hours[role] += (b - a) / HOUR
        samples = []
        t = rs[0][0]
        while t <= end:
            samples.append(role_at(rs, t))
            t += HOUR
        if len(samples) >= 2:
            kept = sum(x == y for x, y in zip(samples, samples[1:]))
            persist.append(kept / (len(samples) - 1))
            same, pairs = same + kept, pairs + len(samples) - 1
    h, norm = entropy(dict(hours))
    matrix: dict[str, Counter[str]] = defaultdict(Counter)
    for agent, t, action in acts:
        role = role_at(by_agent.get(agent, []), t)
        if role is not None:
            matrix[role][action] += 1
    held = sum(hours.values())
    return {"agents_with_roles": len(by_agent), "roles": len(hours), "changes": len(changes),
            "hours": {r: round(v, 3) for r, v in hours.most_common()},
            "shares": {r: round(v / held, 4) for r, v in hours.most_common()} if held else {},
            "entropy": round(h, 4), "entropy_normalised": None if norm is None else round(norm, 4),
            "effective_roles": round(math.exp(h), 3) if hours else 0.0,
            "persistence": round(sum(persist) / len(persist), 4) if persist else None,
            "run_hours": round(held / n_runs, 3) if n_runs else None,
            "matrix": {r: dict(c.most_common()) for r, c in sorted(matrix.items())}}


def measure_roles(s: RoleSave) -> dict:
    return {"world": s.world, "agents": len(s.agents), "start": s.start.strftime(TIME_FMT),
            "end": s.end.strftime(TIME_FMT), **s.settings, **measure(s.changes, s.actions, s.end), "ops": list(s.ops)}


def distinct_by_hour(changes: list[Change], start: datetime, end: datetime) -> list[tuple[int, int]]:
    """At the end of each game hour from `start` (1 = the first), how many distinct roles are
    held then (each agent's latest change by then)."""
    held: dict[str, str] = {}
    ordered = sorted(changes)
    out, i = [], 0
    hours = int(-(-(end - start).total_seconds() // 3600))
    for h in range(1, hours + 1):
        cut = start + h * HOUR
        while i < len(ordered) and ordered[i][0] <= cut:
            held[ordered[i][1]] = ordered[i][2]
            i += 1
        out.append((h, len(set(held.values()))))
    return out
