"""[[facts]] and [[gatherings]] in world files: what eval measures, validated with file:line errors."""

from __future__ import annotations

from datetime import datetime

import pytest

from helpers import SMALLVILLE
from handmade import AGENTS, NEWS, world_text
from smalltown.world.errors import WorldError
from smalltown.world.load import load_world


def problems_of(tmp_path, news: str) -> list[tuple[int, str]]:
    path = tmp_path / "w.toml"
    text = world_text(AGENTS, news)
    path.write_text(text)
    with pytest.raises(WorldError) as info:
        load_world(path)
    return [(p.line, p.message) for p in info.value.problems]


def line_of(news: str, needle: str) -> int:
    """The line of `needle` in the world file made with this news."""
    lines = world_text(AGENTS, news).splitlines()
    return next(i for i, l in enumerate(lines, 1) if needle in l)


def test_smallville_declares_the_party_the_candidacy_and_the_gathering():
    w = load_world(SMALLVILLE)
    facts = {f.name: f for f in w.facts}
    assert facts["party"].known_by == ("Isabella Rodriguez",)
    assert set(facts["candidacy"].known_by) == {"Sam Moore", "Jennifer Moore"}
    (party,) = w.gatherings
    assert (party.place, party.start, party.end, party.host, party.fact) == (
        "Hobbs Cafe", datetime(2023, 2, 14, 17), datetime(2023, 2, 14, 19), "Isabella Rodriguez", "party")


def test_keywords_match_word_starts_in_any_case():
    f = next(f for f in load_world(SMALLVILLE).facts if f.name == "candidacy")
    assert f.about("sam moore talks about the MAYORAL race")
    assert f.about("Sam Moore hopes to win the election")
    assert not f.about("Sam Moore is dismayored")  # a keyword starts a word
    assert not f.about("Carmen Ortiz is curious about who will win the upcoming mayoral election")
    assert not f.about("Sam Moore grows tomatoes")


@pytest.mark.parametrize("old, new, needle, message", [
    ('known_by = ["Ann Lee"]', 'known_by = ["Ann Lee", "Nobody Here"]', "Nobody Here",
     "unknown agent 'Nobody Here' in known_by"),
    ('known_by = ["Ann Lee"]', 'known_by = ["Ann Lee", "Bob Stone"]', '"Bob Stone"]',
     "known_by lists Bob Stone, but no phrase of Bob Stone's description matches"),
    ('known_by = ["Cal Reyes"]', 'known_by = []', "known_by = []",
     "Cal Reyes's description matches its keywords, but known_by does not list Cal Reyes"),
    ('keywords = ["Valentine", "party"]', 'keywords = ["Valentine", "party|"]', '"party|"', "blank alternative"),
    ('place = "Hobbs Cafe"', 'place = "Hobbs Cafe:ballroom"', "ballroom", "unknown place 'Hobbs Cafe:ballroom'"),
    ("end = 2023-02-14T19:00:00", "end = 2023-02-14T16:00:00", "end = 2023-02-14T16", "is not after start"),
    ('host = "Ann Lee"', 'host = "Ann Leigh"', "Ann Leigh", "unknown host 'Ann Leigh'"),
    ('fact = "party"', 'fact = "picnic"', "picnic", "unknown fact 'picnic'"),
])
def test_bad_news_is_reported_at_its_line(tmp_path, old, new, needle, message):
    assert NEWS.count(old) == 1
    news = NEWS.replace(old, new)
    found = problems_of(tmp_path, news)
    assert any(line == line_of(news, needle) and message in text for line, text in found), found


def test_a_world_without_news_loads_with_none(tmp_path):
    path = tmp_path / "w.toml"
    path.write_text(world_text(AGENTS, ""))
    w = load_world(path)
    assert w.facts == [] and w.gatherings == []


def test_question_defaults_to_did_you_know(tmp_path):
    path = tmp_path / "w.toml"
    path.write_text(world_text(AGENTS, NEWS))
    candidacy = load_world(path).facts[1]
    assert candidacy.question == "Did you know that Cal Reyes is running for mayor?"
