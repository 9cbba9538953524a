"""Action awareness (issue 16): opening hours and capacity in world files, the engine stopping
agents at a closed place or a taken object, and mind/awareness.py noticing it (or, off, not)."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest

from helpers import GULLHAVEN, TINY, cli, query, save_info
from piano_worlds import CAFE_HOURS, variant as _variant
from smalltown.world.errors import WorldError
from smalltown.world.load import load_world


def _run(tmp_path: Path, world: Path, until: str, on: bool) -> Path:
    save = tmp_path / f"{world.stem}-{on}.sqlite"
    cli("run", world, "--headless", "--until", until, "--save", save, "--backend", "scripted",
        "--set", f"action_awareness={str(on).lower()}", check=True)
    return save


def test_hours_and_capacity_load_and_are_checked(tmp_path):
    w = load_world(_variant(tmp_path, TINY, "ok", CAFE_HOURS,
                            ('{ name = "piano", tiles = [[33, 6]] }', '{ name = "piano", tiles = [[33, 6]], capacity = 1 }')))
    cafe = w.arena("Hobbs Cafe:cafe")
    assert w.closed_until(cafe, datetime(2023, 2, 13, 7, 30)) == datetime(2023, 2, 13, 8, 0)
    assert w.closed_until(cafe, datetime(2023, 2, 13, 8, 0)) is None
    assert w.closed_until(cafe, datetime(2023, 2, 13, 21, 0)) == datetime(2023, 2, 14, 8, 0)
    assert w.objects["Hobbs Cafe:cafe:piano"].capacity == 1
    assert load_world(TINY).arena("Hobbs Cafe:cafe").hours is None  # absent: always open
    for edit, said in [(('hours = "08:00-20:00"', 'hours = "8:00-20:00"'), "24-hour time"),
                       (('hours = "08:00-20:00"', 'hours = "08:00-08:00"'), "same time")]:
        bad = _variant(tmp_path, _variant(tmp_path, TINY, "base", CAFE_HOURS), "bad", edit)
        with pytest.raises(WorldError) as e:
            load_world(bad)
        assert said in str(e.value) and "bad.toml:33" in str(e.value)
    with pytest.raises(WorldError, match="capacity"):
        load_world(_variant(tmp_path, TINY, "cap0", ('{ name = "piano", tiles = [[33, 6]] }',
                                                     '{ name = "piano", tiles = [[33, 6]], capacity = 0 }')))


def _t(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp)


def _events(save: Path, agent: str, *kinds: str) -> list[tuple[str, str, str]]:
    marks = ",".join("?" * len(kinds))
    return query(save, f"SELECT time, kind, json_extract(data, '$.address') FROM events WHERE agent = ? "
                       f"AND kind IN ({marks}) ORDER BY id", agent, *kinds)


def _check_closed(tmp_path: Path, world: Path, until: str, agent: str, sector: str) -> None:
    on, off = _run(tmp_path, world, until, True), _run(tmp_path, world, until, False)
    # on: noticed at once, a memory of it, and the next action is elsewhere, a tick later
    seen = _events(on, agent, "blocked", "unexpected", "started")
    i = next(k for k, e in enumerate(seen) if e[1] == "unexpected")
    assert seen[i - 1][1] == "blocked" and seen[i - 1][0] == seen[i][0]
    nxt = seen[i + 1]
    assert nxt[1] == "started" and not nxt[2].startswith(sector + ":")
    assert _t(nxt[0]) - _t(seen[i][0]) == timedelta(seconds=10)  # the next tick
    assert len([e for e in seen if e[1] == "blocked" and e[0] < seen[i][0][:11] + "08:00"]) == 1
    memories = query(on, "SELECT description FROM memories WHERE description LIKE ?", f"{agent} found {sector} closed%")
    pending = [s for (s,) in query(on, "SELECT state FROM agents WHERE name = ?", agent) if "found " + sector in s]
    assert memories or pending
    # off: nothing noticed; it stands there and tries again with its next action
    tried = _events(off, agent, "blocked", "unexpected")
    assert not [e for e in tried if e[1] == "unexpected"]
    assert len([e for e in tried if e[0] < tried[0][0][:11] + "08:00"]) >= 2
    assert not query(off, "SELECT 1 FROM memories WHERE description LIKE ?", f"% found {sector} closed%")


def test_closed_cafe_tiny(tmp_path):
    world = _variant(tmp_path, TINY, "tiny-hours", CAFE_HOURS)
    _check_closed(tmp_path, world, "+2h30m", "Isabella Rodriguez", "Hobbs Cafe")


def test_closed_bakery_gullhaven(tmp_path):
    text = GULLHAVEN.read_text()
    head = text.index('[sectors."Gullhaven Bakery"')
    first = text[head:text.index("\n", head)]
    world = _variant(tmp_path, GULLHAVEN, "gull-hours", (first, '[sectors."Gullhaven Bakery"]\nhours = "08:00-18:00"\n\n' + first))
    _check_closed(tmp_path, world, "+2h", "Amara Okafor", "Gullhaven Bakery")
    on = tmp_path / "gull-hours-True.sqlite"
    # nobody noticing it goes back before it opens
    for (agent,) in query(on, "SELECT DISTINCT agent FROM events WHERE kind = 'unexpected'"):
        seen = _events(on, agent, "blocked", "unexpected")
        assert [e[1] for e in seen if e[0] < seen[0][0][:11] + "08:00"] == ["blocked", "unexpected"]


def test_taken_object_tiny(tmp_path):
    world = _variant(tmp_path, TINY, "tiny-taken", ("start = 2023-02-13T06:00:00", "start = 2023-02-13T12:30:00"),
                     ('{ name = "cafe counter", tiles = [[27, 1], [28, 1]] }',
                      '{ name = "cafe counter", tiles = [[27, 1], [28, 1]], capacity = 1 }'))
    on, off = _run(tmp_path, world, "+2h", True), _run(tmp_path, world, "+2h", False)
    agent, counter = "Isabella Rodriguez", "Hobbs Cafe:cafe:cafe counter"
    seen = _events(on, agent, "blocked", "unexpected", "started")
    i = next(k for k, e in enumerate(seen) if e[1] == "unexpected")
    assert seen[i - 1][1:] == ("blocked", counter) and seen[i + 1][1] == "started" and seen[i + 1][2] != counter
    # off: it stands at the counter it cannot use until its action ends
    blocked = [e for e in _events(off, agent, "blocked", "started") if e[0] >= seen[i][0]]
    assert blocked[0][1:] == ("blocked", counter) and _t(blocked[1][0]) - _t(blocked[0][0]) >= timedelta(minutes=5)


def test_off_is_today(tmp_path):
    """With the setting off, or on in a world that declares no hours or capacity, the run is as before."""
    save = tmp_path / "t.sqlite"
    cli("run", TINY, "--headless", "--until", "+6h", "--save", save, "--backend", "scripted", check=True)
    assert save_info(save)["digest"].startswith("447e8537")
    on = _run(tmp_path, TINY, "+6h", True)
    assert save_info(on)["digest"] != "" and not query(on, "SELECT 1 FROM events WHERE kind IN ('blocked', 'unexpected')")
