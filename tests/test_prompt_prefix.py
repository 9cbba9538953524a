"""Prompts a model caches across agents (issue 17's cost): what every agent of a town is told alike
(the instructions, the answer's shape, the constitution in force, the economy's rule for "op")
comes before the person's card, so the text before the card is the same for every agent asking
the same question; what varies (the tax season's number, holdings, memories) comes after it, and
both sides of a conversation sum it up from the same text up to their cards, and a speaker's
lines in a conversation share their prompt up to the transcript's end. On
Sid's tax town (its [economy] and [civics]) and on the market town given a [civics]; a world
without them is told no rule of goods or law."""

from __future__ import annotations

from collections import defaultdict
from datetime import timedelta

import pytest

from fakes import Asking
from helpers import ROOT, civics_table, market_with
from smalltown.llm.render_parts import quote
from smalltown.sim.open import create
from smalltown.world.load import load_world

CARD = "\nThe person: "
SHARED = ("pay_tax", "react", "utterance", "utterance_commit", "decompose_economy")


def _asked(world, tmp_path, hours: float) -> list:
    backend = Asking(world.seed)
    sim = create(world, tmp_path / "p.sqlite", backend, overwrite=True, sets=["architecture=piano", "civics_scale=144"])  # (seasons within the hours run)
    try:
        sim.run_until(world.start + timedelta(hours=hours))
    finally:
        sim.close()
    return backend.asked


def _sid():
    return load_world(ROOT / "worlds" / "sid-tax.toml"), 5.5  # past the first tax season (10:48)


def _market():
    timeline = "timeline = {season_every = 60, window = 20, feedback = 300, amendments = 320, vote = 340, tally = 360, in_force = 400, end = 700}\n"
    return market_with(civics_table(["Ivo Ferrow", "Ysolde Thorsby"], "Lio Corwin", timeline))[0], 3


@pytest.mark.parametrize("make", [_sid, _market], ids=["sid-tax", "market"])
def test_what_all_agents_are_told_alike_comes_before_the_card(tmp_path, make):
    world, hours = make()
    asked = _asked(world, tmp_path, hours)
    before: dict[tuple, dict[str, str]] = defaultdict(dict)  # (task, constitution) -> agent -> text before the card
    for task, prompt in asked:
        if task.name not in SHARED or (task.name in ("react", "utterance", "utterance_commit") and not task.constitution):
            continue
        head, card, rest = prompt.partition(CARD)
        assert card, prompt
        before[task.name, getattr(task, "constitution", "")][task.persona.name] = head
        if task.name == "pay_tax":
            assert f"season {task.season}" not in head and f"tax season {task.season}." in rest
            assert task.persona.name not in head
        if getattr(task, "constitution", ""):
            assert quote(task.constitution) in head
        if task.name == "decompose_economy":
            assert 'leave "op" empty' in head and all(f'"{o.label}"' in rest for o in task.ops)
    assert {name for name, _ in before} >= {"pay_tax", "react", "decompose_economy"}
    for (name, _), heads in before.items():
        assert len(heads) >= 2 or name != "pay_tax"
        assert len(set(heads.values())) == 1, (name, heads.keys())
    _both_sides_share_the_conversation(asked)
    _a_speakers_lines_share_the_conversation(asked)


def _a_speakers_lines_share_the_conversation(asked: list) -> None:
    """A speaker's next line in a conversation repeats its previous line's prompt up to the end of
    that line's transcript (instructions, card, situation, the lines so far), a line that may
    promise and one that may not alike; what changes from line to line (the view of the listener,
    what was told, news, memories, promises) comes after the transcript."""
    last: dict[tuple, str] = {}
    before_name: dict[tuple, str] = {}
    pairs: set[tuple[str, str]] = set()
    for task, prompt in asked:
        if not task.name.startswith("utterance"):
            continue
        talk = (task.persona.name, task.listener, task.initiator, task.reason, task.now)
        before = last.get(talk)
        if before is not None:
            start = before.index("The conversation so far:\n")
            shared = before[:before.index("\n\n", start)]
            assert prompt.startswith(shared), (task.name, prompt, before)
            assert prompt.index("remembers about this:") > len(shared)
            pairs.add((before_name[talk], task.name))
        last[talk] = prompt
        before_name[talk] = task.name
    assert ("utterance_commit", "utterance") in pairs, pairs


def _both_sides_share_the_conversation(asked: list) -> None:
    """Each side of a conversation sums it up from the same text up to its own card: the lines."""
    sides: dict[tuple, dict[str, str]] = defaultdict(dict)
    for task, prompt in asked:
        if task.name.startswith("summarize_conversation"):
            head = prompt.partition(CARD)[0]
            assert all(quote(line.text) in head for line in task.lines)
            sides[task.now, tuple((line.speaker, line.text) for line in task.lines)][task.persona.name] = head
    assert sides and all(len(s) == 2 and len(set(s.values())) == 1 for s in sides.values())


def test_a_world_without_goods_or_law_is_told_none(tmp_path):
    world = load_world(ROOT / "worlds" / "tiny.toml")
    asked = _asked(world, tmp_path, 8)
    assert any(t.name == "decompose" for t, _ in asked)
    _both_sides_share_the_conversation(asked)
    for _, prompt in asked:
        assert '"op"' not in prompt and "constitution" not in prompt and "goods" not in prompt


def test_a_priests_reactions_to_two_people_share_the_prompt_through_the_memories():
    """A priest's (or top believer's) line about the one seen ("... not known to share this faith")
    names that person, so it comes after the memories, with the other lines about them: two
    reactions with the same memories to different people share the prompt up to there."""
    from datetime import datetime

    from smalltown.llm.render import render
    from smalltown.llm.tasks import PersonaCard, React, Record
    from smalltown.llm.tasks.belief import Faith

    now = datetime(2023, 6, 5, 9, 0)
    card = PersonaCard(name="Nora Vance", age=40, traits="calm", description="Nora runs the counter", home="Vance house")
    memories = [Record(time=now, kind="observation", text="the shop is busy today")]
    faith = Faith(doctrine="Noodlism", levels=[["noodle"], ["Noodlist"]], level_names=["indirect", "direct"],
                  level=2, priest=True)
    a, b = (render(React(persona=card, now=now, status="working", place="Vance Shop: shop", observation=f"{who} is here",
                         observed=who, observed_is_agent=True, context=memories, faiths=[faith]))
            for who in ("Lilah Hart", "Ivo Ferrow"))
    seek = "Nora Vance is a priest of Noodlism and tries to win over everyone they meet; Lilah Hart is not known"
    assert seek in a and a.index(seek) > a.index(quote("the shop is busy today"))
    end = a.index(quote("the shop is busy today")) + len(quote("the shop is busy today"))
    assert b.startswith(a[:end])
