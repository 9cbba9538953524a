"""What a mind keeps over a long run stays bounded by what it must: a text's embedding once per
stream, and its rating in the state only while a record of it waits (the stream holds the rest)."""

from __future__ import annotations

import itertools
from datetime import datetime, timedelta

import numpy as np
import pytest

from helpers import TINY
from smalltown.config import Settings
from smalltown.llm.asker import Asker
from smalltown.llm.embed import HashEmbedder
from smalltown.mind import importance
from smalltown.mind.agent import Mind
from smalltown.mind.memory import MemoryStream
from smalltown.scripted import ScriptedBackend
from smalltown.sim.open import create
from smalltown.world.load import load_world

NOW = datetime(2023, 2, 13, 9, 0)


@pytest.fixture(scope="module")
def tiny():
    return load_world(TINY)


def test_a_text_stored_many_times_keeps_one_embedding():
    embedder = HashEmbedder()
    stream = MemoryStream("Ann", embedder, itertools.count(1).__next__)
    texts = [f"Ann sees bench {i} in the park" for i in range(150)]  # past the first 64 rows: it grows
    mems = [stream.add("observation", texts[i % 150], NOW + timedelta(minutes=i), 3) for i in range(600)]
    assert len(stream._vecs) == 150  # by text, not by record (600)
    for m in mems[::7]:  # every record reads its own text's vector
        assert np.array_equal(stream.embedding(m.id), embedder.embed([m.description])[0])
    assert stream.has(texts[3], "observation") and not stream.has(texts[3], "chat") and not stream.has("x")
    # a text's records score alike; the newest of equals wins
    got = stream.retrieve(texts[5], NOW + timedelta(days=1), 3)
    assert got.results[0].memory.description == texts[5] and got.results[0].memory.id == mems[455].id
    assert stream.rating(texts[5]) == 3 and stream.rating("never noted") is None


def _mind(world) -> tuple[Mind, list]:
    calls: list = []
    spec = world.agents[0]
    stream = MemoryStream(spec.name, HashEmbedder(), itertools.count(1).__next__)
    return Mind(spec, world, Asker(ScriptedBackend(1), calls.append), stream, {}, Settings()), calls


def test_a_filed_text_is_rated_once_and_its_rating_is_kept_by_the_stream(tiny):
    mind, calls = _mind(tiny)
    text = f"{mind.name} sees the kettle boiling"
    importance.note(mind, "observation", text, NOW)
    mind.settle()
    rated = [c for c in calls if c.task == "rate_importance"]
    assert len(rated) == 1 and mind.state.ratings == {}  # nothing waits: the state keeps no rating
    first = mind.memory.recent(1)[0]
    importance.note(mind, "observation", text, NOW + timedelta(hours=1))
    # while it waits, its rating is known (the save keeps it, as for any rated waiting record)
    assert mind.state.to_json()["pending_ratings"] == {text: first.importance}
    mind.settle()
    again = mind.memory.recent(1)[0]
    assert [c for c in calls if c.task == "rate_importance"] == rated  # not asked again
    assert again.id != first.id and again.importance == first.importance and mind.state.ratings == {}


def test_over_a_run_the_state_keeps_ratings_only_of_what_waits(tmp_path, tiny):
    sim = create(tiny, tmp_path / "t.sqlite", ScriptedBackend(tiny.seed))
    sim.run_until(sim.now + timedelta(hours=8))
    filed = 0
    for agent in sim.agents:
        mind = agent.mind
        assert set(mind.state.ratings) <= {p.text for p in mind.state.pending}
        for m in mind.memory:  # every record carries its text's one rating
            assert mind.memory.rating(m.description) == m.importance
            filed += 1
    assert filed > 50
    sim.close()
