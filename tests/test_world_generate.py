"""Towns made to order: `smalltown world generate` writes worlds that pass `world check`, load,
run, and come out the same for the same seed."""

from __future__ import annotations

import tomllib

import pytest

from helpers import cli
from smalltown.world.load import load_world


def generate(tmp_path, name: str, *args: object) -> tuple:
    out = tmp_path / f"{name}.toml"
    cli("world", "generate", "--out", out, *args, check=True)
    return out, tomllib.loads(out.read_text(encoding="utf-8"))


@pytest.mark.parametrize("args", [("--towns", 1, "--agents", 5), ("--towns", 3, "--agents", 10, "--rural", 4)],
                         ids=["1x5", "3x10+4"])
def test_a_generated_world_passes_world_check_and_loads(tmp_path, args):
    out, doc = generate(tmp_path, "w", *args, "--seed", 3)
    r = cli("world", "check", out)
    assert r.returncode == 0, r.stderr
    world = load_world(out)
    n = args[1] * args[3] + (args[5] if len(args) > 4 else 0)
    assert len(world.agents) == n
    assert doc["facts"] and doc["gatherings"]  # on by default


def test_a_surname_that_starts_with_the_towns_event_does_not_make_the_world_fail_its_check(tmp_path):
    # seed 1, two towns of 50: a Fairbairn household in the town whose event is a fair; the fact's
    # keywords were [town, "fair"], which their descriptions matched without their knowing it
    out, doc = generate(tmp_path, "w", "--towns", 2, "--agents", 50, "--seed", 1)
    assert any("Fairbairn" in a["name"] for a in doc["agents"])
    assert any(f["name"].endswith(" fair") for f in doc["facts"])
    r = cli("world", "check", out)
    assert r.returncode == 0, r.stderr


def test_every_agent_has_a_bed_at_home_a_routine_and_a_workplace_or_is_retired(tmp_path):
    out, doc = generate(tmp_path, "w", "--towns", 3, "--agents", 10, "--rural", 4, "--seed", 5)
    world = load_world(out)
    names = [a.name for a in world.agents]
    assert len(set(names)) == len(names)
    for a in doc["agents"]:
        beds = doc["sectors"][a["home"]]["arenas"]["bedroom"]["objects"]
        assert f"{a['name'].split()[0]}'s bed" in [o["name"] for o in beds]
        kinds = [it.get("kind") for it in a["routine"]]
        assert kinds.count("sleep") == 1
        away = {it["place"] for it in a["routine"] if it.get("kind") == "work" and it.get("place")}
        assert away or "retired" in a["description"] or "from home" in a["description"]
        assert away <= set(a["knows"])


def test_the_same_seed_gives_the_same_bytes_and_another_seed_other_people(tmp_path):
    a, _ = generate(tmp_path, "a", "--towns", 2, "--agents", 8, "--seed", 11)
    b, _ = generate(tmp_path, "b", "--towns", 2, "--agents", 8, "--seed", 11)
    c, _ = generate(tmp_path, "c", "--towns", 2, "--agents", 8, "--seed", 12)
    body = lambda p: p.read_text(encoding="utf-8").replace(p.stem + "-map", "MAP")  # noqa: E731
    assert body(a) == body(b)
    assert (tmp_path / "a-map.toml").read_bytes() == (tmp_path / "b-map.toml").read_bytes()
    people = lambda p: [(x.name, x.age, x.traits) for x in load_world(p).agents]  # noqa: E731
    assert people(a) != people(c)


def test_facts_and_gatherings_can_be_left_out(tmp_path):
    out, doc = generate(tmp_path, "w", "--towns", 2, "--agents", 6, "--facts", "off", "--gatherings", "off")
    assert "facts" not in doc and "gatherings" not in doc
    assert cli("world", "check", out).returncode == 0


def test_too_many_agents_is_refused_before_anything_is_written(tmp_path):
    r = cli("world", "generate", "--out", tmp_path / "w.toml", "--towns", 30, "--agents", 40)
    assert r.returncode == 2 and "at most 1000" in r.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_generated_town_runs_a_scripted_game_hour(tmp_path):
    out, _ = generate(tmp_path, "w", "--towns", 1, "--agents", 5, "--seed", 2)
    save = tmp_path / "run.sqlite"
    r = cli("run", "--headless", out, "--until", "+1h", "--backend", "scripted", "--save", save)
    assert r.returncode == 0, r.stderr
    info = cli("save", "info", save, "--json", check=True)
    assert '"game_time": "2023-06-05 07:00' in info.stdout


def test_a_generated_world_has_a_community_goal_needs_shop_hours_and_one_at_a_time_objects(tmp_path):
    out, doc = generate(tmp_path, "w", "--towns", 2, "--agents", 12, "--seed", 4)
    assert doc["community_goal"] and 1 <= len(doc["needs"]) == len(set(doc["needs"]))
    hours = {s: d["hours"] for s, d in doc["sectors"].items() if "hours" in d}
    assert any("Bakery" in s for s in hours) and any("Cafe" in s for s in hours)
    assert not any("park" in s.lower() or "house" in s.lower() for s in hours)  # homes and haunts: always open
    objects = [o for d in doc["sectors"].values() for a in d["arenas"].values() for o in a["objects"]]
    assert any(o.get("capacity") == 1 for o in objects)
    world = load_world(out)
    assert world.community_goal == doc["community_goal"] and list(world.needs) == doc["needs"]
    for a in doc["agents"]:  # a usual day is never shut out: the hours hold every routine item at a shop
        days = a["routine"]
        for i, it in enumerate(days):
            if it.get("place") in hours:
                opens, closes = hours[it["place"]].split("-")
                ends = days[(i + 1) % len(days)]["start"]
                assert opens <= it["start"] and ends <= closes, (a["name"], it, hours[it["place"]])


def test_a_generated_town_exercises_the_piano_modules(tmp_path):
    from helpers import query

    out, doc = generate(tmp_path, "w", "--towns", 1, "--agents", 8, "--seed", 2)
    save = tmp_path / "run.sqlite"
    r = cli("run", "--headless", out, "--until", "+14h", "--backend", "scripted", "--save", save,
            "--set", "architecture=piano")
    assert r.returncode == 0, r.stderr
    kinds = dict(query(save, "SELECT kind, count(*) FROM events GROUP BY kind"))
    assert kinds.get("goal", 0) > 0 and kinds.get("decided", 0) > 0
    needs = {row[0] for row in query(save, "SELECT json_extract(data, '$.need') FROM events WHERE kind = 'goal'")}
    assert needs - {None, ""} and needs - {None, ""} <= set(doc["needs"])
