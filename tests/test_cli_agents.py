"""`smalltown inspect | whisper | interview` and `--set`, as a user runs them."""

from __future__ import annotations

import json

import pytest

from helpers import ROOT, TINY, cli, save_info


@pytest.fixture(scope="module")
def save(tmp_path_factory):
    path = tmp_path_factory.mktemp("cli") / "tiny.sqlite"
    cli("run", "--headless", TINY, "--until", "+4h", "--save", path, check=True)
    return path


def test_inspect_shows_summary_plan_levels_and_memories(save):
    out = json.loads(cli("inspect", save, "Isabella Rodriguez", "--json", check=True).stdout)
    assert out["agent"] == "Isabella Rodriguez" and "Isabella" in out["summary"]
    plan = out["plan"]
    assert 5 <= len(plan["daily"]) <= 8 and plan["blocks"] and plan["actions"]
    assert sum(b["current"] for b in plan["blocks"]) == 1 and sum(a["current"] for a in plan["actions"]) == 1
    assert {"id", "kind", "importance", "description", "evidence"} <= set(out["memories"][0])
    assert any(m["evidence"] for m in out["memories"] if m["kind"] == "plan")
    text = cli("inspect", save, "isabella", check=True).stdout  # first name, any case
    assert "Hour by hour" in text and "Latest memories" in text


def test_inspect_retrieve_prints_each_score(save):
    before = save_info(save)["digest"]
    out = json.loads(cli("inspect", save, "Isabella", "--retrieve", "Valentine's Day party", "--json",
                               check=True).stdout)
    assert out["query"] == "Valentine's Day party" and out["results"]
    top = out["results"][0]
    assert "party" in top["description"].lower()
    for r in out["results"]:
        assert {"recency", "importance", "relevance", "total"} <= set(r)
    totals = [r["total"] for r in out["results"]]
    assert totals == sorted(totals, reverse=True)
    assert save_info(save)["digest"] == before  # inspecting changes nothing
    assert "relevance" in cli("inspect", save, "Isabella", "--retrieve", "coffee", check=True).stdout


def test_inspect_unknown_agent_lists_the_agents(save):
    proc = cli("inspect", save, "Kane Martinez")
    assert proc.returncode == 2 and "Klaus Mueller" in proc.stderr and "Traceback" not in proc.stderr


def test_whisper_changes_the_plan(tmp_path, save):
    copy = tmp_path / "w.sqlite"
    cli("run", "--headless", save, "--until", "+0m", "--save", copy, check=True)
    out = cli("whisper", copy, "Klaus", "You are going to paint a mural in Johnson Park", check=True).stdout
    assert "Thought: You are going to paint a mural" in out and "mural" in out.split("The rest of the day:")[1]
    info = json.loads(cli("inspect", copy, "Klaus", "--json", check=True).stdout)
    assert any("mural" in b["activity"] for b in info["plan"]["blocks"])
    assert info["memories"][0]["kind"] == "plan" or any("Thought:" in m["description"] for m in info["memories"])


def test_interview_answers_and_is_remembered_without_advancing(tmp_path, save):
    copy = tmp_path / "i.sqlite"
    cli("run", "--headless", save, "--until", "+0m", "--save", copy, check=True)
    tick = save_info(copy)["tick"]
    out = json.loads(cli("interview", copy, "Isabella", "What are you planning for February 14?",
                               "--as", "a news reporter", "--json", check=True).stdout)
    assert "Valentine" in out["answer"] and out["retrieval"]["results"]
    assert save_info(copy)["tick"] == tick
    mem = json.loads(cli("inspect", copy, "Isabella", "--json", check=True).stdout)["memories"]
    assert any("a news reporter asked" in m["description"] for m in mem)
    text = cli("interview", copy, "Isabella", "How are you?", check=True).stdout
    assert text.startswith("the interviewer → Isabella Rodriguez: How are you?")


def test_set_overrides_a_setting_and_is_recorded(tmp_path):
    path = tmp_path / "s.sqlite"
    cli("run", "--headless", TINY, "--until", "+6h", "--save", path, "--set", "reflection=false", check=True)
    from helpers import query

    assert json.loads(query(path, "select value from meta where key='settings'")[0][0]) == {"reflection": False}
    assert query(path, "select count(*) from memories where kind='reflection'")[0][0] == 0
    cli("run", "--headless", path, "--until", "+2h", check=True)  # continues with the setting
    assert query(path, "select count(*) from memories where kind='reflection'")[0][0] == 0


def test_bad_set_is_a_clear_error(tmp_path):
    proc = cli("run", "--headless", TINY, "--until", "+1h", "--save", tmp_path / "x.sqlite",
                     "--set", "reflektion=false")
    assert proc.returncode == 2 and "unknown setting(s): reflektion" in proc.stderr
    proc = cli("run", "--headless", TINY, "--until", "+1h", "--save", tmp_path / "y.sqlite",
                     "--set", "vision_radius=far")
    assert proc.returncode == 2 and "vision_radius" in proc.stderr and "Traceback" not in proc.stderr


def test_world_settings_are_validated_with_their_line(tmp_path):
    text = TINY.read_text().replace('seed = 1\n', 'seed = 1\n\n[settings]\nvision_radius = 6\nreflektion = false\n')
    bad = tmp_path / "w.toml"
    bad.write_text(text.replace('map = "../maps/tiny.toml"', f'map = "{ROOT / "maps" / "tiny.toml"}"'))
    proc = cli("world", "check", bad)
    line = text.splitlines().index("reflektion = false") + 1
    assert proc.returncode == 1 and f"w.toml:{line}: unknown setting(s): reflektion" in proc.stderr


def test_edit_object_sets_the_state_and_names_unknown_objects(tmp_path, save):
    copy = tmp_path / "e.sqlite"
    cli("run", "--headless", save, "--until", "+0m", "--save", copy, check=True)
    out = cli("edit-object", copy, "Willow Cottage: kitchen: stove", "burning", check=True).stdout
    assert "-> burning" in out
    from helpers import query

    assert query(copy, "select state from objects where address='Willow Cottage:kitchen:stove'") == [("burning",)]
    assert query(copy, "select count(*) from events where kind='object' and data like '%\"by\": \"user\"%'")[0][0] == 1
    proc = cli("edit-object", copy, "Willow Cottage:kitchen:oven", "burning")
    assert proc.returncode == 2 and "no object" in proc.stderr
