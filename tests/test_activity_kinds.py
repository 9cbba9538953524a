"""What an activity is, by its words (lang.activity_kind): whole words and their inflections, the
kinds in order, an "at <place>" phrase left out. The day view's colours and the agents list's
symbols both come from it."""

from __future__ import annotations

import pytest

from smalltown.lang import activity_kind

TABLE = [
    ("make lattes at the coffee machine", None),  # the coffee machine is where, not what
    ("have a coffee", "eating"),
    ("make coffee and eggs at the stove", "eating"),  # eating comes before working in the order
    ("wash the dishes at the kitchen sink after dinner", "eating"),  # the place ends at "after"
    ("get out of bed", None),  # a bed alone is not sleep
    ("get out of bed and stretch", "exercising"),
    ("open the cafe", "working"),
    ("closing up", "working"),
    ("serving customers", "working"),
    ("chatting with a friend", "talking"),
    ("studies for the exam", "studying"),
    ("find a seat in the lecture hall", "studying"),  # "lecture", not the "eat" in "seat"
    ("write code for a new feature", "working"),  # not the "eat" in "feature"
    ("get ready for bed", None),  # not the "read" in "ready"
    ("have lunch at a restaurant", "eating"),
    ("go to the restaurant", None),  # not the "rest" in "restaurant"
    ("sit at a table and watch people", "leisure"),  # "and" ends the place
    ("sleeping", "sleeping"),
    ("take a nap", "sleeping"),
    ("", None),
    (None, None),
]


@pytest.mark.parametrize(("activity", "kind"), TABLE)
def test_an_activity_is_the_first_kind_among_its_own_words(activity: str | None, kind: str | None) -> None:
    assert activity_kind(activity) == kind
