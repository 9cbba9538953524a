"""Lore.tags: whom a text names and which declared facts it is about. Its shortcut (a substring
test before a fact's word-start patterns) must answer what `Fact.about` answers on every text."""

from __future__ import annotations

import dataclasses

import pytest

from helpers import GULLHAVEN, SMALLVILLE
from smalltown.mind.records import Lore
from smalltown.world.load import load_world
from smalltown.world.model import Fact

FACTS = [
    Fact("council", "", ("council",), "", ()),
    Fact("vote", "", ("Sam Moore", "mayor|election"), "", ()),
    Fact("fair", "", ("spring fair",), "", ()),
    Fact("empty", "", ("  |", "bake"), "", ()),  # an empty alternative list matches anything
    Fact("café", "", ("café",), "", ()),  # beyond ASCII: no shortcut
]
TEXTS = [
    "The councillor spoke", "a subcouncil met", "COUNCIL tonight", "Sam Moore runs for MAYOR",
    "sam moore and the Election", "Sam Moore is here", "the mayor is Sam Moore's friend",
    "the Spring Fair opens", "springfair", "a fair in spring", "we bake bread", "Bakers unite",
    "tea at the Café", "tea at the CAFÉ", "ſam moore for mayor", "Kouncil", "ﬁre at the council",
    "", "council" * 3,
]


@pytest.mark.parametrize("path", [SMALLVILLE, GULLHAVEN])
def test_tags_find_what_every_fact_says_on_every_text(path):
    world = load_world(path)
    for facts in (world.facts, world.facts + FACTS, [f for f in FACTS if f.name != "café"]):
        lore = Lore(dataclasses.replace(world, facts=list(facts)))
        texts = TEXTS + [f.text for f in world.facts] + [a.description for a in world.agents[:10]]
        for text in texts:
            want = tuple(f.name for f in facts if f.about(text))
            assert lore.tags(text)[1] == want, (text, want)


def test_tags_name_the_facts_in_their_declared_order():
    world = load_world(SMALLVILLE)
    lore = Lore(dataclasses.replace(world, facts=FACTS[:4]))
    assert lore.tags("Sam Moore wants to be mayor; the council agrees")[1] == ("council", "vote")
    assert lore.tags("the subcouncil of Sam Moore's election")[1] == ("vote",)
    assert lore.tags("bake for the spring fair")[1] == ("fair", "empty")
