"""Spatial memory as data: the places and objects an agent knows (its known tree) and the states
of objects as it last saw them. Choosing a place from it is the mind's (mind/places.py)."""

from __future__ import annotations

from dataclasses import dataclass, field

from smalltown.world.model import World


@dataclass
class KnownTree:
    """sector -> arena -> object names the agent knows (it grows as the agent explores), and
    the states of objects as the agent last saw them."""

    tree: dict[str, dict[str, list[str]]]
    states: dict[str, str] = field(default_factory=dict)  # object address -> state last seen

    @classmethod
    def from_world(cls, world: World, sectors: tuple[str, ...]) -> "KnownTree":
        return cls({
            s: {a.name: list(a.objects) for a in world.sectors[s].arenas.values()}
            for s in sectors if s in world.sectors
        })

    def visit(self, sector: str, arena: str, objects: list[str]) -> bool:
        """The agent is in this arena: it now knows it and what is in it. True if it is new."""
        arenas = self.tree.setdefault(sector, {})
        new = arena not in arenas or set(objects) - set(arenas[arena])
        arenas[arena] = list(dict.fromkeys([*arenas.get(arena, []), *objects]))
        return bool(new)
