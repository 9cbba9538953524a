"""The engine's "goals heard" phase (mind/goals.py `hear`): after the tick's talks, each line said by
an agent with a social goal is heard by its listener and overheard by every agent within
`hearing_radius` tiles of the speaker, who keep the need the speaker works toward (typed, from the
speaker's state, never read from the line). Who talks more, and who stands among more people,
hears more: the goal question shows the recent needs heard (mind/goals.py `heard`)."""

from __future__ import annotations

from datetime import datetime
from typing import Iterable

from smalltown.mind import goals
from smalltown.sim.agent import Agent
from smalltown.sim.changes import Changes


def hearers(agents: list[Agent], speaker: Agent, listener: str, by_name: dict[str, Agent],
            radius: int) -> Iterable[Agent]:
    """The listener, then everyone else within `radius` tiles of the speaker (agent order): the
    larger of the x and y distances, as eval culture's area and overhearing count it. The belief
    phase hears lines the same way."""
    if listener in by_name:
        yield by_name[listener]
    x, y = speaker.tile
    for a in agents:
        if a is speaker or a.name == listener:
            continue
        if abs(a.tile[0] - x) <= radius and abs(a.tile[1] - y) <= radius:
            yield a


def step(agents: list[Agent], by_name: dict[str, Agent], radius: int, now: datetime, changes: Changes) -> None:
    names = {a.name for a in agents}
    for conv in changes.conversations:
        if conv.initiator not in names:
            continue  # (another group's talk: its hearers are all in that group)
        for line in conv.lines:
            said = by_name.get(line.speaker)
            if said is None or not said.mind.state.goal or not said.mind.state.goal_need:
                continue
            listener = conv.other if line.speaker == conv.initiator else conv.initiator
            for hearer in hearers(agents, said, listener, by_name, radius):
                if goals.hear(hearer.mind, said.name, said.mind.state.goal_need, now):
                    changes.changed.add(hearer.name)
