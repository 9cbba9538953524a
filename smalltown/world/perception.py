"""What an agent sees (SPEC 1): things in its arena within the vision radius, nearest first,
at most `bandwidth` of them."""

from __future__ import annotations

from dataclasses import dataclass

from smalltown.world.model import Tile, World


@dataclass(frozen=True)
class Seen:
    subject: str  # an agent's name or an object's address
    description: str  # "Maria Lopez is having a coffee", "stove is idle"
    distance: int


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
    tiles (Chebyshev distance), the `bandwidth` nearest."""
    x, y = me.tile
    seen: list[Seen] = []
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
                seen.append(Seen(obj.address, f"{obj.name} is {object_states[obj.address]}", d))
    seen.sort(key=lambda s: (s.distance, s.subject))
    return seen[:bandwidth]
