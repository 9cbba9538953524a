"""Saves with civics written by hand through the Save API (issue 17, `eval civics`): a world with an
economy, its agents on their spawn tiles, then the events and ledger rows a test writes, tick by
tick, in the shapes the civics engine emits ("season", "feedback", "proposal", "vote", "tally",
"constitution", "stance"; ledger kind "tax" into the chest). No engine code runs: the figures
a test expects are worked out by hand from the rows it wrote."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

from smalltown.store.conversations import ConversationRow, Line
from smalltown.store.records import AgentRow, Event, TickChanges, Transfer
from smalltown.store.save import Save
from smalltown.store.schema import TIME_FMT
from smalltown.world.load import load_world_text

CHEST = "chest"


class CivicHand:
    def __init__(self, path: Path, world_path: Path, extra: str = "", settings: dict | None = None):
        text = world_path.read_text() + extra
        map_path = Path(world_path.parent / load_toml_map(text)).resolve()
        self.world = world = load_world_text(world_path.name, text, map_path.name, map_path.read_text())
        self.save = Save.create(path, {
            "world": world.name, "world_source": world.source, "world_text": world.text,
            "map_source": world.map_source, "map_text": world.map_text,
            "tick": 0, "game_time": self.time(0), "created_with": "hand", "settings": settings or {},
            "embedder": "hand"})
        self.save.commit(TickChanges(0, self.time(0), agents=tuple(
            AgentRow(a.name, a.spawn[0], a.spawn[1], None, None, None, json.dumps({"plan": []}))
            for a in world.agents)), snapshot=True)

    def time(self, tick: int) -> str:
        return (self.world.start + timedelta(seconds=tick * self.world.step_seconds)).strftime(TIME_FMT)

    def at(self, tick: int, events=(), ledger=(), talk: tuple[str, str] | None = None) -> int | None:
        """Commit tick `tick`: events (agent, kind, data), ledger rows (kind, giver, taker, item,
        qty) and a conversation between `talk`'s two; returns the conversation's id."""
        stamp = self.time(tick)
        convs = (ConversationRow(0, tick, stamp, self.time(tick + 6), "a place", talk[0], talk[1], "",
                              [Line(talk[0], "about the tax")]),) if talk else ()
        ids = self.save.commit(TickChanges(
            tick, stamp, conversations=convs,
            events=tuple(Event(tick, stamp, a, k, f"{a or 'the town'}: {k}", d) for a, k, d in events),
            ledger=tuple(Transfer(tick, stamp, *row) for row in ledger),
            meta={"tick": tick, "game_time": stamp}))
        return ids[0] if ids else None

    def close(self) -> None:
        self.save.close()


def load_toml_map(text: str) -> str:
    """The world file's `map = "..."` (the map beside it)."""
    import tomllib
    return tomllib.loads(text)["map"]
