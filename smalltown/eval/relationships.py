"""Relationships (SPEC 9): who knows of whom, and the network's density.

A knows of B from the first of A's memories that names B (by full name). The network has an
edge between two agents when both know of each other; its density is 2|E| / (|V| (|V| - 1)).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from smalltown.eval.town import Town


def density(n_agents: int, edges: set[frozenset[str]]) -> float:
    """Edges present over edges possible in an undirected graph of n agents."""
    return 2 * len(edges) / (n_agents * (n_agents - 1)) if n_agents > 1 else 0.0


def mutual(knows: set[tuple[str, str]]) -> set[frozenset[str]]:
    """Undirected edges: pairs where each knows of the other."""
    return {frozenset(p) for p in knows if (p[1], p[0]) in knows and p[0] != p[1]}


@dataclass
class Acquaintance:
    agents: list[str]
    first: dict[tuple[str, str], datetime]  # (a, b): when a's memory first named b

    def knows(self, t: datetime) -> set[tuple[str, str]]:
        return {p for p, when in self.first.items() if when <= t}

    def edges(self, t: datetime) -> set[frozenset[str]]:
        return mutual(self.knows(t))

    def density(self, t: datetime) -> float:
        return density(len(self.agents), self.edges(t))


def acquaintance(town: Town) -> Acquaintance:
    first: dict[tuple[str, str], datetime] = {}
    for m in town.memories:  # in time order: the first naming wins
        for other in town.people_in(m.description):
            if other != m.agent:
                first.setdefault((m.agent, other), m.created)
    return Acquaintance(town.agents, first)
