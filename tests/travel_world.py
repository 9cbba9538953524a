"""A small world of several towns for the travel tests: generated (`world generate` options),
with its towns declared from where its places were laid out (each town: the centre and extent of
the sectors named after it and its people's homes; its park the square everyone knows)."""

from __future__ import annotations

from pathlib import Path

from smalltown.world.generate import Options, write
from smalltown.world.load import load_world
from smalltown.world.model import Town, World

def towns_world(tmp: Path, towns: int = 3, agents: int = 5, rural: int = 3, seed: int = 1) -> World:
    tmp.mkdir(parents=True, exist_ok=True)
    write(Options(towns=towns, agents=agents, rural=rural, seed=seed), tmp / "towns.toml")
    world = load_world(tmp / "towns.toml")
    world.towns = declared(world)
    return world


def declared(world: World) -> list[Town]:
    """Each town of a generated world: its named sectors' tiles and the homes of the agents who
    know only its places; the town's park is its square."""
    names = sorted({s.split()[0] for s in world.sectors if s.endswith(" Park")})
    spots = []
    for name in names:
        homes = {a.home for a in world.agents if a.knows and all(k.startswith(name + " ") for k in a.knows)}
        tiles = [t for addr, o in world.objects.items()
                 if addr.split(":")[0].startswith(name + " ") or addr.split(":")[0] in homes for t in o.tiles]
        cx, cy = sum(t[0] for t in tiles) / len(tiles), sum(t[1] for t in tiles) / len(tiles)
        spots.append((name, cx, cy, max(((t[0] - cx) ** 2 + (t[1] - cy) ** 2) ** 0.5 for t in tiles)))
    out = []
    for name, cx, cy, r in spots:  # towns apart: none reaches past half the way to another
        apart = min((((cx - x) ** 2 + (cy - y) ** 2) ** 0.5 for n, x, y, _ in spots if n != name), default=r * 2)
        out.append(Town(name, (round(cx), round(cy)), int(min(r + 2, apart / 2 - 1)), f"{name} Park"))
    return out
