"""The day at a glance, as the store builds it (store/day.py): each agent's spans of one game day
from the event log and the conversations table, on a save written by hand (tests/handmade.py)."""

from __future__ import annotations

import json
import time
from datetime import date, datetime
from pathlib import Path

import pytest

from handmade import ISABELLA, KLAUS, MARIA, HandSave
from smalltown.lang import activity_kind
from smalltown.store.save import open_reader
from smalltown.world.model import Gathering

BED, KITCHEN, COUNTER, TABLE = ("Willow Cottage:bedroom:bed", "Willow Cottage:kitchen:kitchen table",
                                "Hobbs Cafe:cafe:counter", "Hobbs Cafe:cafe:cafe table")
HOUR = 360  # ticks of 10 s
PARTY = Gathering("the party", "Hobbs Cafe", datetime(2023, 2, 13, 8, 30), datetime(2023, 2, 13, 9))


def started(agent: str, activity: str, address: str) -> tuple:
    return agent, "started", f"{agent}: {activity}", json.dumps({"activity": activity, "address": address})


def event(agent: str, kind: str, **data) -> tuple:
    return agent, kind, f"{agent} {kind}", json.dumps(data)


@pytest.fixture
def save(tmp_path: Path) -> Path:
    """Isabella sleeps, walks to the cafe at 07:00 and serves there; Klaus eats breakfast, talks
    with her at 08:00 for two minutes and reads at the cafe; Maria sleeps; a second day begins."""
    h = HandSave(tmp_path / "day.sqlite")
    h.at(1, events=[started(ISABELLA, "sleeping", BED), started(MARIA, "sleeping", BED),
                    started(KLAUS, "eat breakfast", KITCHEN)])
    h.at(HOUR, events=[started(ISABELLA, "clean the counter", COUNTER), event(ISABELLA, "moved", src=[1, 1], dst=[9, 2])])
    h.at(HOUR + 60, events=[event(ISABELLA, "arrived", address=COUNTER, tile=[9, 2])])
    talk = 2 * HOUR
    h.at(talk, events=[started(ISABELLA, f"talking with {KLAUS}", COUNTER), started(KLAUS, f"talking with {ISABELLA}", KITCHEN)])
    h.talk(talk, ISABELLA, KLAUS, [(ISABELLA, "Hello"), (KLAUS, "Hi")], place="Hobbs Cafe: cafe", minutes=2)
    h.at(talk + 12, events=[started(ISABELLA, "clean the counter", COUNTER), started(KLAUS, "read a book", TABLE)])
    h.at(int(3.5 * HOUR))  # the clock: 09:30
    h.close()
    return h.path


def spans(path: Path, day: date | None = None, gatherings=()) -> dict[str, list[tuple]]:
    reader = open_reader(path)
    try:
        d = reader.day(day, gatherings)
    finally:
        reader.close()
    return {a: [(f"{s.start:%H:%M}", f"{s.end:%H:%M}", s.category, s.place, s.others) for s in v]
            for a, v in d.spans.items()}


def test_spans_say_what_each_agent_did_where_and_with_whom(save: Path) -> None:
    got = spans(save)
    assert got[ISABELLA] == [
        ("06:00", "07:00", "sleeping", "Willow Cottage:bedroom", (MARIA,)),
        ("07:00", "07:10", "walking", "Hobbs Cafe:cafe", ()),
        ("07:10", "08:00", "working", "Hobbs Cafe:cafe", ()),
        ("08:00", "08:02", "talking", "Hobbs Cafe:cafe", (KLAUS,)),
        ("08:02", "09:30", "working", "Hobbs Cafe:cafe", (KLAUS,)),
    ]
    assert got[KLAUS] == [
        ("06:00", "08:00", "eating", "Willow Cottage:kitchen", ()),
        ("08:00", "08:02", "talking", "Hobbs Cafe:cafe", (ISABELLA,)),
        ("08:02", "09:30", "studying", "Hobbs Cafe:cafe", (ISABELLA,)),
    ]
    assert got[MARIA] == [("06:00", "09:30", "sleeping", "Willow Cottage:bedroom", (ISABELLA,))]


def test_time_at_a_gathering_with_others_there_is_a_span_of_its_own(save: Path) -> None:
    got = spans(save, gatherings=[PARTY])
    assert [s for s in got[KLAUS] if s[2] == "gathering"] == [("08:30", "09:00", "gathering", "Hobbs Cafe:cafe", (ISABELLA,))]
    assert [s[:3] for s in got[ISABELLA][-3:]] == [("08:02", "08:30", "working"), ("08:30", "09:00", "gathering"),
                                                   ("09:00", "09:30", "working")]
    assert all(s[2] != "gathering" for s in got[MARIA])  # asleep at home: not at the party


def test_a_gathering_with_one_agent_there_is_none(save: Path) -> None:
    alone = Gathering("the reading", "Willow Cottage:kitchen", datetime(2023, 2, 13, 6, 30), datetime(2023, 2, 13, 7))
    assert all(s[2] != "gathering" for v in spans(save, gatherings=[alone]).values() for s in v)


def test_a_day_begins_with_what_each_agent_was_doing_at_midnight(save: Path) -> None:
    h = HandSave.reopen(save)
    h.at(19 * HOUR)  # 2023-02-14 01:00
    h.close()
    got = spans(save)  # the save's last day
    assert got[MARIA] == [("00:00", "01:00", "sleeping", "Willow Cottage:bedroom", ())]  # Isabella is at work
    assert got[KLAUS] == [("00:00", "01:00", "studying", "Hobbs Cafe:cafe", (ISABELLA,))]
    assert spans(save, date(2023, 2, 13))[MARIA][-1][:2] == ("06:00", "00:00")  # the first day runs to midnight


def test_the_day_knows_the_days_the_save_holds(save: Path) -> None:
    reader = open_reader(save)
    try:
        d = reader.day()
        assert (d.day, d.first, d.last) == (date(2023, 2, 13),) * 3
        assert (d.start, d.end) == (datetime(2023, 2, 13), datetime(2023, 2, 13, 9, 30))
    finally:
        reader.close()


def test_activity_kinds_come_from_the_activitys_words_not_its_place() -> None:
    assert activity_kind("sleeping") == "sleeping"
    assert activity_kind("get out of bed and stretch") == "exercising"  # a bed is not sleep
    assert activity_kind("eat toast") == "eating"
    assert activity_kind("stare at the wall") is None


def test_a_day_of_a_big_save_reads_quickly(tmp_path: Path) -> None:
    """Many agents and a busy day: well under a second (the view reloads as the town runs)."""
    h = HandSave(tmp_path / "busy.sqlite")
    for tick in range(1, 6 * HOUR, 60):  # every 10 minutes, each agent starts something and walks
        h.at(tick, events=[e for a in (ISABELLA, MARIA, KLAUS) for e in
                           (started(a, "clean the counter" if tick % 120 else "read", COUNTER),
                            event(a, "moved", src=[1, 1], dst=[9, 2]))])
        h.at(tick + 6, events=[event(a, "arrived", tile=[9, 2]) for a in (ISABELLA, MARIA, KLAUS)])
    h.close()
    start = time.perf_counter()
    got = spans(h.path)
    assert time.perf_counter() - start < 0.5
    assert len(got[ISABELLA]) > 50
