"""The save's one writer: `Save.commit` takes a tick's changes as typed records (store/records.py)
and writes them in one transaction; the reader gives the same records back."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from handmade import ISABELLA, KLAUS, MARIA, HandSave
from smalltown.store.conversations import ConversationRow, Line
from smalltown.store.reader import Reader
from smalltown.store.records import (Access, AgentRow, Call, CallRecord, Embedding, Event, Memory, Move, ObjectState, Retrieval,
                                     Scored, TickChanges)
from smalltown.store.save import Save, SaveError

T = "2023-02-13 06:00:10"
NOW = datetime(2023, 2, 13, 6, 0, 10)


@pytest.fixture
def hand(tmp_path: Path):
    h = HandSave(tmp_path / "w.sqlite")
    yield h
    h.close()


def test_what_commit_writes_the_reader_reads_back_as_the_same_records(hand: HandSave):
    told = Memory(1, MARIA, "observation", "Isabella is making coffee", NOW, NOW, 3)
    thought = Memory(2, MARIA, "reflection", "Isabella is kind", NOW, NOW, 6, (1,))
    agent = AgentRow(MARIA, 4, 5, "[6, 7]", "making coffee", "Hobbs Cafe:cafe:counter", '{"plan": []}')
    said = Event(1, T, MARIA, "said", f"{MARIA}: Hello", {"to": ISABELLA, "conversation": 0})
    talk = ConversationRow(0, 1, T, "2023-02-13 06:02:10", "Hobbs Cafe: cafe", MARIA, ISABELLA, "she is there",
                        [Line(MARIA, "Hello", (1,), ("coffee",))], {MARIA: 2}, {MARIA: "a friend"})
    call = Call(1, T, CallRecord(MARIA, "plan", "prompt", "raw", "{}", 10, 2, 1, 5.0, "scripted", "", "", "k", ""))
    ids = hand.save.commit(TickChanges(
        1, T, conversations=(talk,), agents=(agent,), moves=(Move(KLAUS, 2, 3),),
        objects=(ObjectState("Hobbs Cafe:cafe:stove", "heating"),), events=(said,),
        memories=((told, b"\0" * 4), (thought, b"\1" * 4)), calls=(call,),
        retrievals=(Retrieval(MARIA, "coffee", NOW, "react", [Scored(told, 1.0, 0.5, 0.25, 1.75)]),),
        embeddings=(Embedding("coffee", b"\2" * 4),), meta={"tick": 1, "game_time": T}), snapshot=True)

    reader = Reader(hand.save.conn)
    assert ids == [1]
    assert reader.memories(agent=MARIA) == [told, thought]  # the mind's own Memory, as it was made
    rows = {a.name: a for a in reader.agent_rows()}
    assert rows[MARIA] == agent and (rows[KLAUS].x, rows[KLAUS].y) == (2, 3)
    assert ("Hobbs Cafe:cafe:stove", "heating") in reader.object_rows()
    (e,) = reader.events(kinds=("said",))
    assert (e.tick, e.time, e.agent, e.text, e.data) == (1, T, MARIA, said.text, {"to": ISABELLA, "conversation": 1})
    (c,) = hand.save.conversations()
    assert (c.id, c.lines, c.chats, c.relationships, c.reason) == (1, talk.lines, {MARIA: 2}, {MARIA: "a friend"},
                                                                   "she is there")
    (r,) = reader.retrievals(MARIA)
    assert (r["time"], r["query"], [x["id"] for x in r["results"]]) == (T, "coffee", [1])
    assert reader.call_sums(agent=MARIA).calls == 1
    assert (reader.meta("tick"), reader.meta("game_time")) == (1, T)
    assert 1 in [t for t, _ in hand.save.snapshots()]


def test_accesses_and_completions_update_memories_already_saved(hand: HandSave):
    m = Memory(1, KLAUS, "observation", "the bed is idle", NOW, NOW, 1)
    hand.save.commit(TickChanges(1, T, memories=((m, b"\0" * 4),)))
    later = datetime(2023, 2, 13, 9)
    rated = Memory(1, KLAUS, "observation", "the bed is idle", NOW, NOW, 4)
    hand.save.commit(TickChanges(2, T, accessed=(Access(1, later),), completed=((rated, b"\3" * 4),)))
    (back,) = Reader(hand.save.conn).memories()
    assert (back.last_accessed, back.importance) == (later, 4)
    assert next(hand.save.memories())[7].tobytes() == b"\3" * 4  # the completed vector, read as float32


def test_a_commit_that_fails_writes_nothing(hand: HandSave):
    m = Memory(1, KLAUS, "observation", "the bed is idle", NOW, NOW, 1)
    hand.save.commit(TickChanges(1, T, memories=((m, b""),), meta={"tick": 1}))
    again = TickChanges(2, T, events=(Event(2, T, KLAUS, "moved", "moves"),), memories=((m, b""),),
                        meta={"tick": 2})
    with pytest.raises(SaveError, match="UNIQUE constraint failed") as e:  # the same memory id twice
        hand.save.commit(again)
    assert str(hand.save.path) in str(e.value)
    assert hand.save.count("events") == 0 and hand.save.meta("tick") == 1


def test_the_save_has_one_writer_taking_records_and_no_row_tuple_methods():
    tuple_writers = [n for n in dir(Save) if n.startswith(("add_", "upsert_", "move_", "touch_", "complete_",
                                                            "set_objects", "write_"))]
    assert tuple_writers == []
    assert callable(Save.commit)
