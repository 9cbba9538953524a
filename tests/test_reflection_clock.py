"""Reflection's clock (`reflection_every_minutes`, mind/reflect.py): the piano preset's way of keeping
the first paper's "two or three times a day" in a crowded town (benchmarks/RESULTS.md, "Issue 17's
cost, session 8")."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from helpers import ROOT, TINY, query
from piano_worlds import scripted_digest
from smalltown.config import Settings, SettingsError
from smalltown.llm.asker import Asker
from smalltown.llm.embed import HashEmbedder
from smalltown.mind.agent import Mind
from smalltown.mind.memory import MemoryStream
from smalltown.scripted import ScriptedBackend
from smalltown.world.load import load_world

SID_TAX = ROOT / "worlds" / "sid-tax.toml"
NOW = datetime(2023, 2, 13, 9, 0)


def test_the_piano_preset_sets_the_clock_and_0_is_the_papers_loop():
    assert Settings().reflection_every_minutes == 0
    assert Settings().override(architecture="generative_agents").reflection_every_minutes == 0
    assert Settings().override(architecture="piano").reflection_every_minutes == 480
    assert Settings().override(architecture="piano", reflection_every_minutes=60).reflection_every_minutes == 60
    for bad in ("-1", "1441", "often"):
        with pytest.raises(SettingsError, match="setting reflection_every_minutes"):
            Settings().override(reflection_every_minutes=bad)


def _over_the_threshold(settings: Settings):
    tiny = load_world(TINY)
    spec = next(s for s in tiny.agents if s.name == "Klaus Mueller")
    ratings: dict[str, int] = {}
    ids = iter(range(1, 10**9))
    klaus = Mind(spec, tiny, Asker(ScriptedBackend(1), lambda call: None),
                 MemoryStream(spec.name, HashEmbedder(), lambda: next(ids)), ratings, settings)
    first = klaus.remember("observation", ["Klaus Mueller finds a rare book"], NOW - timedelta(hours=3), ratings=[6])
    klaus.remember("reflection", ["Klaus Mueller cares about old books"], NOW - timedelta(hours=2),
                   evidence=[first[0].id], ratings=[5])
    texts = [f"Klaus Mueller reads page {i} of a book on gentrification" for i in range(31)]
    ratings.update(dict.fromkeys(texts, 5))
    klaus.remember("observation", texts, NOW)
    assert klaus.state.since_reflection > settings.reflection_threshold
    return klaus


def test_over_the_threshold_a_reflection_waits_for_the_clock():
    klaus = _over_the_threshold(Settings().override(reflection_every_minutes=180))
    assert not klaus.should_reflect(NOW)  # the newest reflection is 2 hours old
    assert not klaus.should_reflect(NOW + timedelta(minutes=59))
    assert klaus.should_reflect(NOW + timedelta(minutes=60))
    assert _over_the_threshold(Settings()).should_reflect(NOW)  # 0: the paper's loop


def _reflections(path: Path) -> dict[str, list[datetime]]:
    """Each agent's reflections, as the times its insights were filed (one per reflection)."""
    out: dict[str, set[datetime]] = defaultdict(set)
    for agent, created in query(path, "SELECT agent, created FROM memories WHERE kind = 'reflection'"):
        out[agent].add(datetime.fromisoformat(created))
    return {a: sorted(ts) for a, ts in out.items()}


def _gaps(reflections: dict[str, list[datetime]]) -> list[timedelta]:
    return [b - a for ts in reflections.values() for a, b in zip(ts, ts[1:])]


def test_in_the_tax_town_no_agent_reflects_twice_within_the_clock(tmp_path):
    world = load_world(SID_TAX)
    scripted_digest(world, tmp_path / "on.sqlite", 24, ["architecture=piano"])
    scripted_digest(world, tmp_path / "off.sqlite", 24, ["architecture=piano", "reflection_every_minutes=0"])
    on, off = _reflections(tmp_path / "on.sqlite"), _reflections(tmp_path / "off.sqlite")
    assert sum(map(len, on.values())) >= 20  # the town still reflects
    assert min(_gaps(on)) >= timedelta(minutes=480)
    assert min(_gaps(off)) < timedelta(minutes=480)  # without it the crowd's news brings them closer
    assert sum(map(len, on.values())) < sum(map(len, off.values()))
