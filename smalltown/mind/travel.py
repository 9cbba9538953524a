"""Where the towns of a world lie (a world of several towns), as its minds share it (`Lore.atlas`):
each sector's town, how far a town's square is from a home, the places travel off keeps an agent
to. What an agent is told of them each day is mind/trips.py's."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from smalltown.world.model import Town, World

MARKET_HOURS = (9 * 60, 18 * 60)  # a square with no hours of its own: when its market is held
BUSY_SPAN = 180  # minutes: the busiest part of a square's day, as `busy_hours` finds it


@dataclass
class Atlas:
    """Where the towns and sectors of a world lie, computed once for all its minds (`Lore.atlas`)."""

    world: World
    _allowed: dict[tuple, frozenset[str]] = field(default_factory=dict, repr=False)

    @property
    def towns(self) -> list[Town]:
        return self.world.towns

    @property
    def many(self) -> bool:
        """The world has several towns: travel means something."""
        return len(self.towns) > 1

    @cached_property
    def _centres(self) -> dict[str, tuple[float, float]]:
        """Each sector's centre: the mean of its objects' tiles."""
        acc: dict[str, list[tuple[int, int]]] = {}
        for addr, obj in self.world.objects.items():
            acc.setdefault(addr.split(":")[0], []).extend(obj.tiles)
        return {s: (sum(t[0] for t in ts) / len(ts), sum(t[1] for t in ts) / len(ts)) for s, ts in acc.items() if ts}

    def town_at(self, x: float, y: float) -> str:
        """The town a tile is in ("": the land between towns)."""
        return self.world.town_at(int(round(x)), int(round(y)))

    @cached_property
    def sector_town(self) -> dict[str, str]:
        """Each sector's town ("" between towns)."""
        return {s: self.town_at(*c) for s, c in self._centres.items()}

    def home_town(self, agent: str) -> str:
        """The town of an agent's home ("" = rural)."""
        return self.world.town_of(agent)

    def minutes(self, sector: str, to: str) -> int:
        """The walk between two sectors' centres, in minutes (a street grid: no diagonals; at
        least 5 for two places apart)."""
        a, b = self._centres.get(sector), self._centres.get(to)
        if a is None or b is None:
            return 0
        tiles = abs(a[0] - b[0]) + abs(a[1] - b[1])
        return 0 if tiles == 0 else max(5, int(round(tiles * self.world.step_seconds / 60 / 5)) * 5)

    def nearest(self, home: str) -> str:
        """The town whose square is the shortest walk from a home."""
        return min(self.towns, key=lambda t: (self.minutes(home, t.square), t.name)).name if self.towns else ""

    def square_hours(self, square: str) -> tuple[int, int]:
        sector = self.world.sectors.get(square)
        return sector.hours if sector is not None and sector.hours else MARKET_HOURS

    def allowed(self, agent: str, home: str, usual: frozenset[str] = frozenset()) -> frozenset[str] | None:
        """With travel off: the sectors an agent may go to: its own town's and those between towns
        (a rural agent's nearest town's), and the places of its usual day (`usual`: world data).
        None: anywhere (a world of one town, or none)."""
        if not self.many:
            return None
        key = (agent, home, usual)
        if key not in self._allowed:  # (asked at every place chosen: kept, the world does not move)
            own = self.home_town(agent) or self.nearest(home)
            self._allowed[key] = frozenset(s for s, t in self.sector_town.items() if t in ("", own)) | {home} | usual
        return self._allowed[key]

    @cached_property
    def _at_square(self) -> dict[str, list[tuple[int, int]]]:
        """Each town square's visits in the world's usual days: (start, end) minutes of every
        routine item held at it (world data: where people are, not what a mind was told)."""
        squares = {t.square for t in self.towns}
        out: dict[str, list[tuple[int, int]]] = {s: [] for s in squares}
        for a in self.world.agents:
            for it in a.routine:
                if it.place in squares and it.minutes > 0:
                    start = int(it.start[:2]) * 60 + int(it.start[3:5])
                    out[it.place].append((start, start + it.minutes))
        return out

    def busy_hours(self, square: str, span: int = BUSY_SPAN) -> tuple[int, int]:
        """The `span` minutes within the square's hours when most people's usual days bring them
        there (most person-minutes; the earliest such span): when one who seeks people out finds
        them. The square's hours when no one's day comes there (or they are shorter than `span`)."""
        s, e = self.square_hours(square)
        visits = self._at_square.get(square, [])
        if not visits or e - s <= span:
            return s, e

        def crowd(a: int) -> int:
            return sum(max(0, min(b, a + span) - max(v, a)) for v, b in visits)

        best = max(range(s, e - span + 1, 15), key=lambda a: (crowd(a), -a))
        return best, best + span
