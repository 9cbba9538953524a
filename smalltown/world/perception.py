"""What an agent sees (SPEC 1): things in its arena within the vision radius, nearest first,
at most `bandwidth` of them."""

from __future__ import annotations

from dataclasses import dataclass

from smalltown.world.model import Tile, World


@dataclass(frozen=True)
class Seen:
    subject: str  # an agent's name or an object's address
    description: str  # "Ann Lee is having a coffee", "stove is idle"
    distance: int
    idle: bool = False  # an object in its initial state: seen, and not worth remembering


@dataclass(frozen=True)
class Body:
    """What others can see of an agent."""

    name: str
    tile: Tile
    arena: int  # -1 outdoors
    doing: str


def perceive(world: World, me: Body, bodies: list[Body], object_states: dict[str, str],
             radius: int, bandwidth: int) -> list[Seen]:
    """Agents and objects in the same arena (outdoors counts as one place) within `radius`
    tiles (Chebyshev distance), the `bandwidth` nearest. Attention goes first to people and to
    objects doing something (a state other than their initial one: a burning stove, a running
    shower), then to idle things: bandwidth never hides a fire behind the furniture."""
    x, y = me.tile
    seen: list[Seen] = []
    idle: set[str] = set()
    for b in bodies:
        if b.name == me.name or b.arena != me.arena:
            continue
        d = max(abs(b.tile[0] - x), abs(b.tile[1] - y))
        if d <= radius:
            seen.append(Seen(b.name, f"{b.name} is {b.doing}", d))
    if me.arena >= 0:
        for obj in world.arenas[me.arena].objects.values():
            d = min(max(abs(tx - x), abs(ty - y)) for tx, ty in obj.tiles)
            if d <= radius:
                state = object_states[obj.address]
                seen.append(Seen(obj.address, f"{obj.name} is {state}", d))
                if state == obj.initial_state:
                    idle.add(obj.address)
    return attend(seen, idle, bandwidth)


def attend(seen: list[Seen], idle: set[str], bandwidth: int) -> list[Seen]:
    """The `bandwidth` first of what is in sight: people and busy objects, then idle ones, each
    nearest first (ties by subject, so the order never depends on how they were found)."""
    seen = [Seen(s.subject, s.description, s.distance, s.subject in idle) for s in seen]
    seen.sort(key=lambda s: (s.idle, s.distance, s.subject))
    return seen[:bandwidth]
