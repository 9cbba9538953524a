"""The debugger screens' SaveReader over the store's Reader: what it answers is what the save
holds (checked here with SQL of the test's own), with the screens' conventions: lists newest
first, an empty agent or kinds filter on memories and calls is no filter, an empty set of event
kinds shows no events, and reading in id ranges adds up to reading at once."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import query
from helpers import tiny_sim
from smalltown.store.packing import unpack_text
from smalltown.tui.reader import SaveReader


@pytest.fixture(scope="module")
def path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    sim = tiny_sim(tmp_path_factory.mktemp("reader"), until="09:00")
    sim.close()
    return sim.save.path


@pytest.fixture(scope="module")
def reader(path: Path) -> SaveReader:
    r = SaveReader(path)
    yield r
    r.close()


def test_memories_newest_first_and_an_empty_kinds_filter_is_none(path: Path, reader: SaveReader) -> None:
    agent = reader.agent_names()[0]
    ids = [i for (i,) in query(path, "SELECT id FROM memories WHERE agent = ? ORDER BY id DESC", agent)]
    assert len(ids) > 3
    assert [m.id for m in reader.memories(agent)] == [m.id for m in reader.memories(agent, ())] == ids
    assert [m.id for m in reader.memories(agent, limit=2)] == ids[:2]
    counts = dict(query(path, "SELECT kind, count(*) FROM memories WHERE agent = ? GROUP BY kind", agent))
    assert reader.memory_counts(agent) == counts
    kind = next(iter(counts))
    assert {m.kind for m in reader.memories(agent, (kind,))} == {kind}


def test_calls_in_ranges_add_up_and_an_empty_filter_is_none(path: Path, reader: SaveReader) -> None:
    rows = query(path, "SELECT id, prompt_tokens, cached_tokens, completion_tokens FROM llm_calls ORDER BY id DESC")
    assert len(rows) > 4
    newest = reader.newest_id("llm_calls")
    assert newest == rows[0][0]
    assert [c.id for c in reader.calls("", "", limit=10_000)] == [r[0] for r in rows]
    assert [c.id for c in reader.calls(limit=3)] == [r[0] for r in rows[:3]]
    whole = reader.call_sums()
    assert tuple(whole) == (len(rows), *(sum(r[i] or 0 for r in rows) for i in (1, 2, 3)))
    middle = rows[len(rows) // 2][0]
    older, newer = reader.call_sums(upto=middle), reader.call_sums(after=middle, upto=newest)
    assert tuple(a + b for a, b in zip(older, newer)) == tuple(whole)
    assert [c.id for c in reader.calls(after=middle, upto=newest)] == [r[0] for r in rows if r[0] > middle]
    agent, task = query(path, "SELECT agent, task FROM llm_calls ORDER BY id LIMIT 1")[0]
    mine = reader.calls(agent, task)
    assert mine and {(c.agent, c.task) for c in mine} == {(agent, task)}
    assert reader.call_sums(agent, task).calls == len(mine)
    assert reader.call_tasks() == sorted({t for (t,) in query(path, "SELECT task FROM llm_calls")})


def test_one_call_and_its_detail(path: Path, reader: SaveReader) -> None:
    first = reader.calls(limit=1)[0]
    assert reader.call(first.id) == first and isinstance(first.note, str)
    detail = reader.call_detail(first.id)
    (prompt, model), = query(path, "SELECT prompt, model FROM llm_calls WHERE id = ?", first.id)
    assert (detail["prompt"], detail["model"]) == (unpack_text(prompt), model)
    assert reader.call(10**9) is None and reader.call_detail(10**9) == {}


def test_events_newest_first_and_no_kinds_is_no_events(path: Path, reader: SaveReader) -> None:
    ids = [i for (i,) in query(path, "SELECT id FROM events ORDER BY id DESC")]
    assert reader.newest_id("events") == ids[0]
    assert [e.id for e in reader.events(limit=10_000)] == [e.id for e in reader.events("", limit=10_000)] == ids
    assert reader.events(kinds=()) == []
    middle = ids[len(ids) // 2]
    assert [e.id for e in reader.events(after=middle, upto=ids[0])] == [i for i in ids if i > middle]


def test_the_clock_is_the_saves(path: Path, reader: SaveReader) -> None:
    meta = dict(query(path, "SELECT key, json(value) FROM meta WHERE key IN ('tick', 'game_time')"))
    tick, time = reader.clock()
    assert (str(tick), f'"{time}"') == (meta["tick"], meta["game_time"])
    assert reader.world_text().startswith('"')  # as stored: JSON text, not parsed
