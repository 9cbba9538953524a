"""Social awareness (issue 16, mind/social.py): a feeling per pair after each conversation, the
world file's scripted [[lines]], the stand-in's sentiment, and nothing at all when the setting is off."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from helpers import cli, query, save_info
from smalltown.llm.render import render
from smalltown.llm.tasks import Feeling, PersonaCard, React, Utterance
from smalltown.state.social import Bond
from smalltown.state.agent import AgentState
from smalltown.scripted.social import lean, sentiment, warmth
from smalltown.sim.shapes import state_problem
from smalltown.world.errors import WorldError
from smalltown.world.load import load_world

ROOT = Path(__file__).resolve().parent.parent
TINY, LILA = ROOT / "worlds" / "tiny.toml", ROOT / "worlds" / "lila.toml"
NOW = datetime(2023, 2, 13, 9, 0)
ME = PersonaCard(name="Nora Vance", age=29, traits="quiet", description="Nora runs the counter", home="Willow Cottage")


def run(tmp_path: Path, world: Path, until: str, *sets: str) -> Path:
    tmp_path.mkdir(exist_ok=True)
    save = tmp_path / f"{world.stem}.sqlite"
    cli("run", world, "--headless", "--until", until, "--save", save, "--backend", "scripted",
        *[x for s in sets for x in ("--set", s)], check=True)
    return save


def feelings(save: Path, agent: str, other: str) -> list[tuple[int, int]]:
    """(previous, value) of each "sentiment" event of `agent` toward `other`, from the save."""
    rows = query(save, "SELECT data FROM events WHERE kind = 'sentiment' AND agent = ? ORDER BY id", agent)
    data = [json.loads(d) for (d,) in rows]
    return [(d["previous"], d["value"]) for d in data if d["other"] == other]


def state(save: Path, agent: str) -> dict:
    (text,) = query(save, "SELECT state FROM agents WHERE name = ?", agent)[0]
    return json.loads(text)


def test_lila_kind_rude_kind_from_the_save(tmp_path):
    on = run(tmp_path / "on", LILA, "+12h", "social_awareness=true")
    lila = feelings(on, "Nora Vance", "Lilah Hart")
    values = [v for _, v in lila]
    assert len(values) == 3, lila  # the three scripted talks, and no other
    assert values[0] > 5 and values[1] < values[0] and values[2] > values[1], values
    assert all(v > 5 for _, v in feelings(on, "Nora Vance", "Ben Okafor"))  # steadily kind
    assert all(v < 5 for _, v in feelings(on, "Nora Vance", "Victor Crane"))  # steadily rude
    bond = state(on, "Nora Vance")["social"]["Lilah Hart"]
    assert bond["sentiment"] == values[-1] and bond["summary"]
    said = query(on, "SELECT text FROM events WHERE kind = 'said' AND agent = 'Lilah Hart'")
    assert any("sorry about earlier" in t for (t,) in said)  # the world file's line, as written
    off = run(tmp_path / "off", LILA, "+12h")
    assert feelings(off, "Nora Vance", "Lilah Hart") == []
    assert "social" not in state(off, "Nora Vance")
    said = query(off, "SELECT text FROM events WHERE kind = 'said' AND agent = 'Lilah Hart'")
    assert any("sorry about earlier" in t for (t,) in said)  # the lines are the world's, on or off


def test_tiny_on_a_talk_moves_the_feeling_and_prompts_carry_it(tmp_path):
    save = run(tmp_path, TINY, "+16h", "social_awareness=true")
    moved = query(save, "SELECT agent, data FROM events WHERE kind = 'sentiment'")
    assert moved and any(json.loads(d)["value"] != json.loads(d)["previous"] for _, d in moved)
    agent, data = moved[0]
    assert json.loads(data)["other"] in state(save, agent)["social"]
    tasks = {t for (t,) in query(save, "SELECT DISTINCT task FROM llm_calls")}
    assert "summarize_conversation_social" in tasks and "summarize_conversation" not in tasks


def test_off_digest_unchanged(tmp_path):
    save = run(tmp_path, TINY, "+6h")
    info = save_info(save)
    assert info["digest"].startswith("447e8537"), info["digest"]
    assert "sentiment" not in {k for (k,) in query(save, "SELECT DISTINCT kind FROM events")}


def test_prompts_show_the_feeling_only_when_given():
    f = Feeling(other="Lilah Hart", sentiment=7, summary="Lilah was kind to me.")
    react = dict(persona=ME, now=NOW, status="working", place="Hobbs Cafe: cafe", observation="Lilah is baking",
                 observed="Lilah Hart", observed_is_agent=True, context=[])
    assert "feeling toward" not in render(React(**react))
    assert "Nora Vance's feeling toward Lilah Hart: 7/10" in render(React(**react, feeling=f))
    assert "feeling" not in React(**react).model_dump_json()  # off: the question's identity is as before
    talk = dict(persona=ME, now=NOW, listener="Lilah Hart", place="Hobbs Cafe: cafe", initiator="Nora Vance",
                reason="Lilah is baking", speaker_doing="working", listener_doing="baking")
    assert "feeling toward" not in render(Utterance(**talk))
    assert '7/10 (0 hate .. 10 love) — "Lilah was kind to me."' in render(Utterance(**talk, feeling=f))


def test_stand_in_sentiment_from_typed_inputs():
    assert warmth("kind, warm, generous") == 1 and warmth("gruff, impatient, rude") == -1 and warmth("tall") == 0
    assert sentiment(5, ["kind"], "", False) > 5 > sentiment(5, ["rude"], "", False)
    assert sentiment(5, [], "friendly, patient", False) == 6  # a step toward where warmth draws it
    assert sentiment(5, [], "arrogant, cold", False) == 4
    assert sentiment(5, [], "", True) == 6  # news passed on is appreciated
    assert sentiment(10, ["kind", "kind", "kind"], "", True) == 10 and sentiment(0, ["rude"], "", False) == 0
    assert lean(None) == 1.0 and lean(Feeling(other="x", sentiment=9)) > 1 > lean(Feeling(other="x", sentiment=2))


def test_state_keeps_social_only_when_non_empty():
    s = AgentState()
    assert "social" not in s.to_json()
    s.social["Lilah Hart"] = Bond(3, "She was rude to me.", NOW)
    d = s.to_json()
    assert d["social"]["Lilah Hart"]["sentiment"] == 3
    assert AgentState.from_json(d).social["Lilah Hart"] == s.social["Lilah Hart"]
    assert state_problem(json.dumps(d)) is None
    d["social"]["Lilah Hart"]["sentiment"] = 11
    assert "social.Lilah Hart.sentiment" in state_problem(json.dumps(d))


@pytest.mark.parametrize("bad, says", [
    ('speaker = "Nobody"', "unknown speaker 'Nobody'"),
    ('tone = "snide"', "tone"),
    ('at = "25:00"', "24-hour time"),
])
def test_lines_errors_name_the_line(tmp_path, bad, says):
    text = LILA.read_text()
    key = bad.split(" =")[0]
    first = text.index("[[lines]]")
    start = text.index(f"\n{key} = ", first) + 1
    end = text.index("\n", start)
    broken = text[:start] + bad + text[end:]
    (tmp_path / "maps").mkdir()
    (tmp_path / "maps" / "tiny.toml").write_text((ROOT / "maps" / "tiny.toml").read_text())
    sub = tmp_path / "w"
    sub.mkdir()
    (sub / "lila.toml").write_text(broken)
    with pytest.raises(WorldError) as e:
        load_world(sub / "lila.toml")
    line = broken[:start].count("\n") + 1
    assert says in str(e.value) and f":{line}" in str(e.value), str(e.value)


def test_sentiment_breakpoint():
    from smalltown.sim.breakpoints import Breakpoint, check
    from smalltown.sim.changes import Changes

    changes = Changes(1, NOW)
    changes.emit("Nora Vance", "said", "Nora Vance: hello", to="Lilah Hart")
    assert check([Breakpoint(1, "sentiment")], changes.events, [], []) == []
    changes.emit("Nora Vance", "sentiment", "Nora Vance feels 3/10 toward Lilah Hart (was 7)",
                 other="Lilah Hart", value=3, previous=7, summary="", conversation=0)
    assert check([Breakpoint(1, "sentiment", text="Ben")], changes.events, [], []) == []
    (hit,) = check([Breakpoint(1, "sentiment", text="lilah")], changes.events, [], [])
    assert hit.agent == "Nora Vance"
