"""The save's `memes` table (schema 11): what a tick's commit writes the reader gives back, a
schema-10 save gains the table empty (its digest unchanged), `save check` judges its rows, and a
rewind cuts it by tick."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from handmade import HandSave
from smalltown.store import validate
from smalltown.store.reader import Reader
from smalltown.store.records import MemeRow, TickChanges
from smalltown.store.save import Save
from smalltown.store.schema import SCHEMA_VERSION

TOPICS = [{"topic": "gardens", "keywords": ["eco", "garden"]}, {"topic": "jokes", "keywords": ["pranking"]}]


@pytest.fixture
def hand(tmp_path: Path):
    h = HandSave(tmp_path / "w.sqlite")
    yield h
    h.close()


def _commit(h: HandSave, tick: int, *rows: MemeRow) -> None:
    h.save.commit(TickChanges(tick, h.time(tick), memes=rows, meta={"tick": tick, "game_time": h.time(tick)}),
                  snapshot=tick % 2 == 0)


def test_meme_rows_read_back_by_town_and_tick(hand: HandSave):
    _commit(hand, 1, MemeRow(1, hand.time(1), "Woodhaven", TOPICS, "k1"), MemeRow(1, hand.time(1), "", [], "k2"))
    _commit(hand, 3, MemeRow(3, hand.time(3), "Woodhaven", TOPICS[:1], "k3"))
    reader = Reader(hand.save.conn)
    assert SCHEMA_VERSION == 11 and reader.meta("schema_version") == 11
    assert [(m.tick, m.town, m.call) for m in reader.memes()] == [(1, "Woodhaven", "k1"), (1, "", "k2"),
                                                                 (3, "Woodhaven", "k3")]
    assert reader.memes()[0].topics == TOPICS
    assert [m.tick for m in reader.memes(town="Woodhaven")] == [1, 3]
    assert [m.town for m in reader.memes(town="")] == [""]
    assert [m.tick for m in reader.memes(until=2)] == [1, 1]
    assert list(validate.problems(hand.save.conn, SCHEMA_VERSION)) == []


def test_a_rewind_cuts_the_memes_after_its_tick(hand: HandSave):
    _commit(hand, 2, MemeRow(2, hand.time(2), "A", TOPICS, ""))
    _commit(hand, 3, MemeRow(3, hand.time(3), "A", TOPICS, ""))
    hand.save.rewind(2)
    assert [m.tick for m in Reader(hand.save.conn).memes()] == [2]


def test_save_check_names_a_topics_value_that_is_not_a_list_of_topics(hand: HandSave):
    _commit(hand, 1, MemeRow(1, hand.time(1), "A", TOPICS, ""))
    hand.save.conn.execute("""UPDATE memes SET topics = '[{"name": "x"}]'""")
    (p,) = [p for p in validate.problems(hand.save.conn, SCHEMA_VERSION) if not isinstance(p, str)]
    assert p.table == "memes" and "not a list of topics" in str(p)


def test_a_schema_10_save_opens_with_an_empty_memes_table_and_the_same_digest(hand: HandSave):
    path, digest = hand.path, hand.save.digest()
    hand.close()
    conn = sqlite3.connect(path)
    conn.execute("DROP TABLE memes")
    conn.execute("UPDATE meta SET value = '10' WHERE key = 'schema_version'")
    conn.commit()
    conn.close()
    save = Save.open(path)
    try:
        assert save.meta("schema_version") == SCHEMA_VERSION and save.memes() == [] and save.digest() == digest
        assert "memes" in Reader(save.conn).tables()
    finally:
        save.close()
