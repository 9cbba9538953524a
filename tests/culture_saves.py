"""A save with towns, a doctrine and meme summaries, written by hand through the Save API (for
`eval culture`): the tiny town's world with two more agents, two towns and a doctrine of this
file's own; its goals, conversations, positions and meme summaries chosen so that every figure of
the report can be counted by hand (tests/test_eval_culture.py counts them).

Agents and towns: Isabella, Maria and Klaus live in Willow Cottage (town "Cottage"), Ada Brew in
Hobbs Cafe (town "Cafe"; the one priest of "Noodlism"), Ned Park in Johnson Park (rural). The
run is 3 game hours (ticks of 10 s, to tick 1080); hearing radius 2."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

from helpers import ROOT
from smalltown.store.conversations import ConversationRow, Line
from smalltown.store.records import AgentRow, Event, MemeRow, TickChanges
from smalltown.store.save import Save
from smalltown.store.schema import TIME_FMT
from smalltown.world.load import load_world_text

ISABELLA, MARIA, KLAUS, ADA, NED = "Isabella Rodriguez", "Maria Lopez", "Klaus Mueller", "Ada Brew", "Ned Park"

EXTRA = '''
[[agents]]
name = "Ada Brew"
age = 40
traits = "earnest, talkative"
description = "Ada Brew keeps the cafe's kitchen and tells everyone of the Great Noodle"
home = "Hobbs Cafe"
spawn = [28, 3]
knows = ["Hobbs Cafe", "Johnson Park", "Willow Cottage"]

[[agents]]
name = "Ned Park"
age = 60
traits = "quiet"
description = "Ned Park lives by the pond in Johnson Park and fishes"
home = "Johnson Park"
spawn = [10, 10]
knows = ["Johnson Park"]

[[towns]]
name = "Cottage"
centre = [5, 3]
radius = 5
square = "Willow Cottage"

[[towns]]
name = "Cafe"
centre = [32, 3]
radius = 6
square = "Hobbs Cafe"

[[doctrines]]
name = "Noodlism"
levels = [["noodle"], ["Noodlist", "Great Noodle"]]
level_names = ["indirect", "direct"]
priests = ["Ada Brew"]
persona = ["You are a Noodlist who wants everyone to know the Great Noodle."]
'''

END = 1080  # 3 game hours


def world_text() -> str:
    return (ROOT / "worlds" / "tiny.toml").read_text() + EXTRA


def write_culture_save(path: Path, settings: dict | None = None, odd_memes: bool = False) -> Path:
    """The save (`settings` instead of hearing radius 2; `odd_memes`: summaries a stranger's save
    might hold, a topic not an object and keywords not strings, written beside the others)."""
    text = world_text()
    map_path = ROOT / "maps" / "tiny.toml"
    world = load_world_text("culture.toml", text, "tiny.toml", map_path.read_text())

    def time(tick: int) -> str:
        return (world.start + timedelta(seconds=tick * world.step_seconds)).strftime(TIME_FMT)

    save = Save.create(path, {"world": world.name, "world_source": "culture.toml", "world_text": text,
                              "map_source": "tiny.toml", "map_text": map_path.read_text(), "tick": 0,
                              "game_time": time(0), "created_with": "hand", "settings": {"hearing_radius": 2} if settings is None else settings,
                              "embedder": "hand"})

    def at(tick: int, events=(), agents=(), talk=None, memes=(), snapshot=False) -> None:
        stamp = time(tick)
        convs = ()
        if talk:
            a, b, lines = talk
            convs = (ConversationRow(0, tick, stamp, time(tick + 6), "Willow Cottage: kitchen", a, b, "",
                                     [Line(s, t) for s, t in lines]),)
            events = (*events, *((s, "said", {"to": b if s == a else a, "conversation": 0}) for s, _t in lines))
        save.commit(TickChanges(
            tick, stamp, conversations=convs,
            agents=tuple(AgentRow(n, x, y, None, None, None, json.dumps({"plan": []})) for n, x, y in agents),
            events=tuple(Event(tick, stamp, a, k, f"{a}: {k}", d) for a, k, d in events),
            memes=tuple(MemeRow(tick, stamp, town, topics) for town, topics in memes),
            meta={"tick": tick, "game_time": stamp}), snapshot)

    at(0, agents=[(a.name, *a.spawn) for a in world.agents], snapshot=True)
    at(10, events=[(ISABELLA, "goal", {"goal": "plant a garden and start compost", "need": ""})])
    at(20, events=[(MARIA, "goal", {"goal": "study", "need": ""})])
    at(30, events=[(NED, "goal", {"goal": "go fish by the pond", "need": ""})])
    # Ada walks over to the cottage: everyone's tiles at tick 90 (a snapshot)
    at(90, agents=[(ADA, 2, 3), (ISABELLA, 1, 2), (MARIA, 3, 2), (KLAUS, 5, 2)], snapshot=True)
    at(100, talk=(ADA, ISABELLA, [(ADA, "Have you heard of the Great Noodle?"),
                                  (ISABELLA, "A noodle? I love my garden.")]))
    at(360, memes=[("Cottage", [{"topic": "gardening", "keywords": ["garden", "compost"]}]),
                   ("", [{"topic": "fishing", "keywords": ["fish", "Garden"]}])])
    if odd_memes:
        at(370, memes=[("Cafe", ["not a topic", {"topic": "x", "keywords": [3, None, " ", "fish"]}])])
    at(400, events=[(ISABELLA, "goal", {"goal": "water the garden", "need": ""})])
    at(450, events=[(KLAUS, "arrived", {"address": "Willow Cottage: kitchen: stove", "tile": [4, 2]})])
    at(500, talk=(ISABELLA, MARIA, [(ISABELLA, "The noodle is everywhere."),
                                    (MARIA, "I am a Noodlist now, fish aside.")]))
    at(800, events=[(KLAUS, "goal", {"goal": "buy compost", "need": ""})])
    at(850, events=[(ADA, "arrived", {"address": "Johnson Park: park: park bench", "tile": [11, 10]})])
    at(900, talk=(ADA, NED, [(ADA, "Noodlist greetings"), (NED, "No thanks.")]))
    at(END)
    save.close()
    return path
