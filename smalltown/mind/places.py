"""Spatial memory used (the known tree is state/known.py): the recursive choice of where to do an
activity, and the gatherings an agent knows of."""

from __future__ import annotations

from datetime import date, datetime
from typing import TYPE_CHECKING

from smalltown.llm.asker import Asker
from smalltown.llm.tasks import ChoosePlace, PersonaCard
from smalltown.llm.coherence import SLEEP
from smalltown.state.known import KnownTree
from smalltown.world.model import Gathering, address, pretty

if TYPE_CHECKING:
    from smalltown.mind.core import MindCore


def choose_place(asker: Asker, agent: str, persona: PersonaCard, tree: KnownTree, activity: str,
                 current: str, answers: dict[str, str] | None = None, sector: str = "",
                 levels: tuple[str, ...] = ("sector", "arena", "object"), now: datetime | None = None,
                 unavailable: frozenset[str] = frozenset(), beds: tuple[str, ...] = (),
                 allowed: frozenset[str] | None = None) -> str:
    """Sector, then arena, then object: each level one task over what the agent knows there
    (`sector` given: from the arena on). With `levels=("sector",)` only the sector is chosen.

    An answer outside the options is not trusted: the fallback (stay in the current area if it
    is known, else home, else the first option) is used and noted in the call log.
    `unavailable`: addresses found closed or taken (mind/awareness.py); the options wholly inside
    them are given to the task as such (the choice is the chooser's: elsewhere, or there later).
    `allowed`: the sectors the agent may go to (travel off in a world of several towns, mind/trips.py).
    """

    def pick(level: str, within: str, options: list[str], prefer: str, parts: tuple[str, ...] = ()) -> str:
        if len(options) == 1:
            return options[0]  # nothing to choose: no question asked
        # the same question (activity, options, and where the agent stands when that is an
        # option) gets the answer it got before: routines repeat every day
        here = prefer if prefer in options else ""
        out = [o for o in options if covered(tree, unavailable, *parts, o)] if unavailable else []
        key = "\x1f".join([level, within, activity, here, *options] + (["\x1e", *out] if out else []))
        if answers is not None and key in answers:
            return answers[key]
        choice = ask(level, within, options, prefer, out)
        if answers is not None:
            answers[key] = choice
        return choice

    def ask(level: str, within: str, options: list[str], prefer: str, out: list[str]) -> str:
        task = ChoosePlace(persona=persona, now=now or datetime(2000, 1, 1), activity=activity, level=level,
                           within=within, current=pretty(current) or "the street", options=options, unavailable=out,
                           beds=_sleep_options(beds, level, within, options) if beds and SLEEP.search(activity) else None)
        choice = asker.ask(agent, task).choice.strip()
        if choice in options:
            return choice
        fallback = prefer if prefer in options else options[0]
        asker.note(f"fallback: {choice!r} is not a known {level}; used {fallback!r}")
        return fallback

    cur = current.split(":") + ["", ""]
    if not sector:
        options = [s for s in tree.tree if any(tree.tree[s].values())]  # somewhere to act on
        if allowed is not None:
            options = [s for s in options if s in allowed] or [persona.home]
        sector = pick("sector", "", options, cur[0] if cur[0] in options else persona.home, ())
    if levels == ("sector",):
        return sector
    arenas = [a for a, objs in tree.tree[sector].items() if objs]
    arena = pick("arena", f"in {sector}", arenas, cur[1] if cur[0] == sector else "", (sector,))
    obj = pick("object", f"in {sector}: {arena}", tree.tree[sector][arena], "", (sector, arena))
    return address(sector, arena, obj)


def _sleep_options(beds: tuple[str, ...], level: str, within: str, options: list[str]) -> list[str]:
    """Of a sleep's `options` at `level`, those holding one of the agent's `beds` (addresses)."""
    inside = within.removeprefix("in ").split(": ") if within else []
    depth = {"sector": 0, "arena": 1, "object": 2}[level]
    return [o for o in options if any(b.split(":")[:depth] == inside and b.split(":")[depth] == o for b in beds)]


def covered(tree: KnownTree, unavailable: frozenset[str], *parts: str) -> bool:
    """The place (sector, arena or object, by its parts) is unavailable: every object the agent
    knows in it is inside an unavailable address (an arena found closed, an object taken)."""
    def out(addr: str) -> bool:
        return any(addr == u or addr.startswith(u + ":") for u in unavailable)

    if len(parts) == 3:
        return out(address(*parts))
    arenas = tree.tree.get(parts[0], {})
    inside = {a: arenas.get(a, []) for a in (parts[1:] or arenas)}
    objects = [address(parts[0], a, o) for a, objs in inside.items() for o in objs]
    return bool(objects) and all(out(o) for o in objects)


def gatherings_on(mind: "MindCore", day: date) -> list[Gathering]:
    """The gatherings of that day the agent knows of: it hosts them, they are public (no fact
    announces them), or it knows the fact that announces them. Knowing of one is knowing where
    it is: its sector joins the agent's known tree."""
    known, tree = mind.facts, mind.state.known
    out = [g for g in mind.lore.gatherings if g.start.date() == day
           and (g.host == mind.name or g.fact is None or g.fact in known)]
    for g in out:
        sector = g.place.split(":")[0]
        if sector not in tree.tree and sector in mind.lore.sectors:
            for arena, objects in mind.lore.sectors[sector].items():
                tree.visit(sector, arena, objects)
    return out
