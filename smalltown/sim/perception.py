"""The perception system: what each awake agent newly sees this tick."""

from __future__ import annotations

from smalltown.config import Settings
from smalltown.sim.agent import Agent
from smalltown.sim.changes import Changes
from smalltown.world.perception import Seen
from smalltown.world.sight import Sight


def perceive_all(sight: Sight, agents: list[Agent], objects: dict[str, str], settings: Settings,
                 changes: Changes, whole: bool = True) -> dict[str, list[Seen]]:
    """Per agent, what it sees that is not among its latest percepts (retention). `whole`: `agents`
    are the whole town; else a group of it (sim/groups.py), whose bodies alone are brought up to
    date in the index: no one else is within sight of any of them."""
    s = settings
    seen_as = [a.seen() for a in agents]
    crowd = sight.crowd([body for body, _ in seen_as], 2 * s.vision_radius, whole)  # indexed once for every agent
    new: dict[str, list[Seen]] = {}
    for agent, (body, asleep) in zip(agents, seen_as):
        if asleep:
            agent.look = []
            continue
        look = sight.perceive(body, crowd, objects, s.vision_radius, s.attention_bandwidth)
        agent.look = look
        if look is agent.settled:
            continue  # the same look as last time, all of it still among the latest percepts
        recent, added = agent.recent, False
        for seen in look:
            if seen.description in recent:
                continue  # retention: already among the latest percepts
            recent.append(seen.description)
            while len(recent) > s.retention:
                recent.popleft()
            added = True
            new.setdefault(agent.name, []).append(seen)
            changes.emit(agent.name, "perceived", f"{agent.name} sees: {seen.description}",
                         subject=seen.subject, distance=seen.distance)
            changes.changed.add(agent.name)
        # (a percept added may have pushed out one of the same look seen before it)
        agent.settled = look if not added or all(seen.description in recent for seen in look) else None
    return new
