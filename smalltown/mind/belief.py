"""Belief (Project Sid §5.3): each agent's level in each of the world's doctrines, model-free.

An agent's level is what its own speech shows: the highest level (world/doctrines.py `level_in`)
of any line it has said, never down; a doctrine's priests hold its top level from the start. The
lines an agent hears (as the listener, or overheard within `hearing_radius` tiles of the speaker)
that name a doctrine are its exposures, kept with their level. When a level rises the module emits
`converted`, naming the critical exposure: the first kept exposure above the old level (else the
first at all) heard before the rise.

Its own saved state (`AgentState.modules["belief"]`): {doctrine: {"level", "since", "exposures":
[{"tick", "time", "from", "level"}, ...]}}. The engine's "belief" phase (sim/belief.py) feeds it
the tick's lines; the talk question reads it (`talk_inputs`) so the speaker's faith is in its prompt.

A priest seeks out those not known to share its doctrine (`seeking`): the priests carry the doctrine's
persona lines ("convert everyone you meet"); a convert uses its words but does not campaign (at 500
agents converts who did so tripled the town's talks, and their cost, in two game days). A priest's
react question carries that faith and the level it has heard the one seen speak at
(`react_inputs`), so the decision to start a talk can lean toward them, and it weighs each new face
it sees (mind/react.py `attending`) as a campaigning influencer does.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from smalltown.llm.tasks.belief import Faith
from smalltown.mind.module import Clock, Emit, Module, Panel
from smalltown.store.schema import TIME_FMT
from smalltown.world.doctrines import level_in, level_name
from smalltown.world.model import Doctrine

if TYPE_CHECKING:
    from smalltown.mind.core import MindCore

NAME = "belief"
MAX_EXPOSURES = 24  # kept per doctrine: the earliest (the critical ones stay), then only a higher level's


def held(mind: "MindCore") -> dict[str, dict]:
    """The agent's belief state (its module state), made when first needed."""
    return mind.state.modules.setdefault(NAME, {})


def level(mind: "MindCore", doctrine: str) -> int:
    return int(mind.state.modules.get(NAME, {}).get(doctrine, {}).get("level", 0))


def ordain(mind: "MindCore", doctrines: list[Doctrine], now: datetime) -> bool:
    """A priest holds its doctrines' top level from the start (no event: it was not converted).
    True when the state changed."""
    changed = False
    for d in doctrines:
        if mind.name in d.priests and level(mind, d.name) < len(d.levels):
            held(mind)[d.name] = {"level": len(d.levels), "since": now.strftime(TIME_FMT), "exposures": [],
                                  "priest": True}
            changed = True
    return changed


def hear(mind: "MindCore", doctrine: Doctrine, speaker: str, lvl: int, tick: int, now: datetime) -> bool:
    """A line at level `lvl` of `doctrine` heard from `speaker`; True when it was kept."""
    if lvl <= 0:
        return False
    entry = held(mind).setdefault(doctrine.name, {"level": 0, "since": "", "exposures": []})
    kept = entry["exposures"]
    if len(kept) >= MAX_EXPOSURES and lvl <= max(e["level"] for e in kept):
        return False
    kept.append({"tick": tick, "time": now.strftime(TIME_FMT), "from": speaker, "level": lvl})
    return True


def say(mind: "MindCore", doctrine: Doctrine, text: str, now: datetime) -> Emit | None:
    """A line the agent said: its level rises to the line's (never down); the `converted` event then."""
    lvl = level_in(doctrine, text)
    was = level(mind, doctrine.name)
    if lvl <= was:
        return None
    entry = held(mind).setdefault(doctrine.name, {"level": 0, "since": "", "exposures": []})
    kept = entry["exposures"]
    critical = next((e for e in kept if e["level"] > was), kept[0] if kept else None)
    entry.update(level=lvl, since=now.strftime(TIME_FMT))
    exposure = {"from": critical["from"], "tick": critical["tick"], "level": critical["level"]} if critical else None
    name = level_name(doctrine, lvl) or f"level {lvl}"
    return Emit("converted", f"{mind.name} became {_a(name)} {name} convert of {doctrine.name}",
                {"doctrine": doctrine.name, "level": lvl, "was": was, "exposure": exposure})


def _a(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


def known_level(mind: "MindCore", doctrine: str, other: str) -> int:
    """The level the agent has heard `other` speak at (0: none it kept)."""
    kept = mind.state.modules.get(NAME, {}).get(doctrine, {}).get("exposures", [])
    return max((e["level"] for e in kept if e["from"] == other), default=0)


def known_to_hold(mind: "MindCore", d: Doctrine, other: str) -> int:
    """The level the agent knows `other` holds: as heard (`known_level`), and a priest knows its
    fellow priests (world data: they hold the top level from the start)."""
    if mind.name in d.priests and other in d.priests:
        return len(d.levels)
    return known_level(mind, d.name, other)


def seeker(mind: "MindCore", d: Doctrine) -> bool:
    """The agent wants to win others over to `d`: a priest of it (whose persona says so)."""
    return mind.name in d.priests and len(d.levels) > 0


def seeks_out(mind: "MindCore") -> bool:
    """The agent seeks people out for some doctrine (False with `belief` off): the encounters look
    again, among those in sight, for one it did not get to (sim/encounters.py `candidates`)."""
    return mind.settings.belief and any(seeker(mind, d) for d in mind.lore.doctrines)


def seeking(mind: "MindCore", other: str) -> bool:
    """The agent seeks out `other` for a doctrine: it is a seeker of one that `other` is not known
    (heard speaking at its top level) to hold (False with `belief` off)."""
    if not mind.settings.belief:
        return False
    return any(seeker(mind, d) and known_to_hold(mind, d, other) < len(d.levels) for d in mind.lore.doctrines)


def react_inputs(mind: "MindCore", other: str) -> dict:
    """The react question's belief inputs about stopping for `other`: each doctrine the agent seeks
    to spread, with its own level and the level it has heard `other` speak at ({} with `belief`
    off, or for an agent that seeks none: the question is as before). No persona lines and no
    exposures: whether to stop for someone is not what was heard before."""
    if not mind.settings.belief:
        return {}
    faiths = [Faith(doctrine=d.name, level=max(level(mind, d.name), len(d.levels) if mind.name in d.priests else 0),
                    levels=[list(k) for k in d.levels], level_names=list(d.level_names), priest=mind.name in d.priests,
                    listener_level=known_to_hold(mind, d, other))
              for d in mind.lore.doctrines if seeker(mind, d)]
    return {"faiths": faiths} if faiths else {}


def talk_inputs(mind: "MindCore", listener: str, heard: list[str] = ()) -> dict:
    """The talk question's belief inputs ({} with `belief` off or no doctrine the speaker holds or
    has heard: the question is as before). `heard`: the listener's lines so far in this talk (the
    engine's phase keeps them as exposures once the talk is over)."""
    if not mind.settings.belief:
        return {}
    faiths = []
    for d in mind.lore.doctrines:
        now_heard = [lvl for text in heard if (lvl := level_in(d, text))]
        entry = mind.state.modules.get(NAME, {}).get(d.name) or ({"level": 0} if now_heard else None)
        if not entry:
            continue
        kept = [e["level"] for e in entry.get("exposures", [])] + now_heard
        priest = mind.name in d.priests
        faiths.append(Faith(
            doctrine=d.name, level=int(entry.get("level", 0)), levels=[list(k) for k in d.levels],
            level_names=list(d.level_names), priest=priest, persona=list(d.persona) if priest else [],
            exposures=len(kept), heard_level=max(kept, default=0),
            listener_level=max([known_to_hold(mind, d, listener), *now_heard])))
    return {"faiths": faiths} if faiths else {}


def _rows(state: dict) -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []
    for doctrine, entry in state.items():
        if not isinstance(entry, dict):
            continue
        lvl = entry.get("level", 0)
        since = f" since {entry['since']}" if lvl and entry.get("since") else ""
        rows.append((doctrine, f"level {lvl}{' (priest)' if entry.get('priest') else ''}{since}"))
        for e in entry.get("exposures", []):
            rows.append(("", f"{e['time']}  heard {e['from']} at level {e['level']}"))
    return rows or [("", "no doctrine heard yet")]


MODULE = Module(
    NAME, "mind/belief.py", Clock("on an event", "each line said or heard (model-free)"), "belief",
    "the lines said and heard this tick, the world's doctrines", "the level per doctrine, exposures",
    events={"converted": "an agent's level in a doctrine rises"},
    panel=Panel("Belief", _rows))
