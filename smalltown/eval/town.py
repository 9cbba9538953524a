"""A save read for measuring: its world, every memory (without embeddings) and the parts of the
event log the measures need. Nothing here asks a model or writes to the save."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property

from smalltown.eval import EvalError
from smalltown.store.records import Memory
from smalltown.store.save import Save
from smalltown.store.schema import TIME_FMT
from smalltown.world.load import load_world_text
from smalltown.world.model import World
from smalltown.world.names import agent_named


def _time(text: str) -> datetime:
    return datetime.strptime(text, TIME_FMT)


@dataclass
class Town:
    world: World
    end: datetime  # the save's clock
    memories: list[Memory]  # in (created, id) order; the records interviews left are not here
    partner: dict[int, str | None]  # chat record id -> who the agent talked with (None: not known)
    whispers: set[int]  # ids of the records an inner voice made
    moves: list[tuple[datetime, str, str | None]]  # 'entered' events: (time, agent, arena address)
    by_id: dict[int, Memory] = field(init=False)

    def __post_init__(self) -> None:
        self.by_id = {m.id: m for m in self.memories}

    @property
    def start(self) -> datetime:
        return self.world.start

    @property
    def agents(self) -> list[str]:
        return [a.name for a in self.world.agents]

    @cached_property
    def _names(self) -> re.Pattern[str]:
        return re.compile("|".join(re.escape(n) for n in sorted(self.agents, key=len, reverse=True)))

    @cached_property
    def _named_places(self) -> re.Pattern[str] | None:
        """Places named after people ("Ann Lee's house"): naming them is not naming the person."""
        names = {s for s in self.world.sectors} | {a.name for a in self.world.arenas} | \
                {o.name for o in self.world.objects.values()}
        named = sorted((n for n in names if self._names.search(n)), key=len, reverse=True)
        return re.compile("|".join(re.escape(n) for n in named)) if named else None

    def people_in(self, text: str) -> list[str]:
        """The agents a text names by full name, in order (a place named after one does not count)."""
        if self._named_places is not None:
            text = self._named_places.sub(" ", text)
        return list(dict.fromkeys(self._names.findall(text)))

    def of(self, agent: str) -> list[Memory]:
        return [m for m in self.memories if m.agent == agent]

    def check_agents(self, names: list[str]) -> list[str]:
        """Full names for the names given (full or first, any case); NoSuchAgent says whom a
        misspelt one probably meant, or lists the town."""
        return [agent_named(name, self.agents) for name in names]


def read_town(save: Save, news_from: World | None = None) -> Town:
    """The town in a save. `news_from`: another world whose [[facts]] and [[gatherings]] to use
    (for a save made before its world declared them)."""
    world = load_world_text(save.meta("world_source"), save.meta("world_text"), save.meta("map_source"),
                            save.meta("map_text"))
    if news_from is not None:
        wanted = {n for f in news_from.facts for n in f.known_by} | {g.host for g in news_from.gatherings if g.host}
        missing = sorted(wanted - {a.name for a in world.agents}) + \
            [g.place for g in news_from.gatherings if g.place.split(":")[0] not in world.sectors]
        if missing:
            raise EvalError(f"{news_from.source} names agents or places this save's world does not have: "
                            f"{', '.join(missing)}")
        world.facts, world.gatherings = list(news_from.facts), list(news_from.gatherings)
    reader = save.reader()
    # who a chat was with: the conversation whose summary it is (the conversations table; for an
    # older save read as it is, as its migration would rebuild them); else a line said then
    chatted = reader.chat_partners()
    talked: dict[tuple[str, str], str] = {}  # (agent, time) -> the other side of that tick's conversation
    asked: set[tuple[str, str, str]] = set()  # (agent, time, record text) an interview left
    whispers: set[int] = set()
    moves: list[tuple[datetime, str, str | None]] = []
    for e in reader.events(kinds=("said", "interviewed", "whispered", "entered")):
        time, agent, kind, d = e.time, e.agent, e.kind, e.data
        if kind == "said" and d.get("to"):
            talked[(agent, time)] = d["to"]
            talked[(d["to"], time)] = agent
        elif kind == "interviewed":
            # the record Mind.interview leaves: the question and the answer, as a chat
            asked.add((agent, time, f"{d.get('interviewer')} asked {agent}: {d.get('question')} "
                                    f"{agent} answered: {d.get('answer')}"))
        elif kind == "whispered" and d.get("memory") is not None:
            whispers.add(int(d["memory"]))
        elif kind == "entered":
            moves.append((_time(time), agent, d.get("arena")))
    memories: list[Memory] = []
    partner: dict[int, str | None] = {}
    for m in reader.memories():
        if m.kind == "chat" and (m.agent, m.created.strftime(TIME_FMT), m.description) in asked:
            continue  # the measurement's own footprint, not something the agent learned
        memories.append(m)
    # What an agent noted but has not filed yet (filed, rated, when its memory is next used) is
    # known to it all the same: such records get ids below zero.
    for a in reader.agent_rows():
        agent = a.name
        for kind, text, when, evidence in json.loads(a.state or "{}").get("pending", []):
            at = datetime.fromisoformat(when)
            memories.append(Memory(-len(memories) - 1, agent, kind, text, at, at, None, tuple(evidence)))
    memories.sort(key=lambda m: (m.created, m.id))
    town = Town(world, _time(save.meta("game_time")), memories, partner, whispers, moves)
    for m in memories:
        if m.kind == "chat":
            other = chatted.get(m.id) or talked.get((m.agent, m.created.strftime(TIME_FMT)))
            if other is None:  # no event log (a hand-made save): the first other person it names
                other = next((n for n in town.people_in(m.description) if n != m.agent), None)
            partner[m.id] = other
    return town
