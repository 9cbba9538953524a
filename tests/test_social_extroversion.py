"""Extroversion in the stand-in's choice to talk (scripted/social.py `drive`, scripted/talk.py): an
agent's own traits, read through the outgoing/reserved lexicon that rates extroversion, scale its
chance to start a talk, so outgoing agents start more talks than reserved ones in a run — the
mechanism behind in-degree rising with extroversion (Project Sid, Fig 7D; `eval social`)."""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timedelta

from helpers import cli, query
from smalltown.llm.tasks import PersonaCard, React
from smalltown.scripted.rate import from_traits
from smalltown.scripted.social import drive
from smalltown.scripted.talk import react
from smalltown.world.load import load_world

NOW = datetime(2023, 2, 13, 9, 0)


def test_drive_from_the_speakers_own_traits():
    assert drive("curious, careful, proud") == 1.0  # neither outgoing nor reserved
    assert drive("talkative, curious") == 1.5 and drive("talkative, cheerful, curious") == 2.0
    assert drive("talkative, cheerful, witty") == 2.0  # at most two words' worth
    assert drive("shy, curious") == 0.5 and drive("shy, anxious, reserved") == 0.25  # never below a quarter
    assert drive("talkative, shy") == 1.0
    # the same lexicon rates extroversion for eval social: a higher rating, a higher drive
    for a, b in [("shy, anxious", "shy"), ("shy", "calm"), ("calm", "witty"), ("witty", "witty, playful")]:
        assert from_traits(a, "outgoing") < from_traits(b, "outgoing") and drive(a) < drive(b)


def _talks(traits: str, n: int = 1500) -> int:
    me = PersonaCard(name="Nora Vance", age=29, traits=traits, description="Nora runs the counter",
                     home="Willow Cottage")
    return sum(react(0, React(persona=me, now=NOW + timedelta(minutes=k), status="working", place="Hobbs Cafe: cafe",
                              observation="Lilah is baking", observed="Lilah Hart", observed_is_agent=True,
                              context=[])).talk for k in range(n))


def test_an_outgoing_speaker_starts_more_talks_with_the_same_inputs():
    shy, plain, chatty = _talks("shy, anxious, calm"), _talks("calm, careful, proud"), _talks("talkative, witty, calm")
    assert shy < plain < chatty
    assert 1.5 * plain < chatty < 3 * plain and 2 * shy < plain  # about x2 and x1/4 of a stranger's 2%


def test_in_a_run_outgoing_agents_start_more_talks(tmp_path):
    """A generated town of 24 for a scripted day: per agent, talks started by the outgoing (drive > 1)
    against the reserved (drive < 1), read from the save's conversations."""
    world = tmp_path / "town.toml"
    cli("world", "generate", "--agents", "24", "--seed", "3", "-o", world, check=True)
    save = tmp_path / "town.sqlite"
    cli("run", world, "--headless", "--until", "+1d", "--save", save, "--backend", "scripted", check=True)
    started = Counter(a for (a,) in query(save, "SELECT initiator FROM conversations"))
    people = load_world(world).agents
    outgoing = [started[p.name] for p in people if drive(p.traits) > 1]
    reserved = [started[p.name] for p in people if drive(p.traits) < 1]
    assert outgoing and reserved, "the generated town should mix outgoing and reserved agents"
    assert sum(outgoing) / len(outgoing) > 1.5 * sum(reserved) / len(reserved)
