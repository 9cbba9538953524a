"""`eval town --ask` on a scripted save: the stand-in answers a question about the world's news
from the memories of that very fact, so an agent who never heard it never says yes (another
piece of news it did hear is no answer to it)."""

from __future__ import annotations

import json

from helpers import ROOT, cli


def test_no_agent_says_yes_to_news_it_never_heard(tmp_path):
    save = tmp_path / "gullhaven.sqlite"
    cli("run", ROOT / "worlds" / "gullhaven.toml", "--headless", "--until", "+1d", "--save", save,
        "--backend", "scripted", check=True)
    out = cli("eval", "town", save, "--ask", "--json", check=True)
    facts = json.loads(out.stdout)["diffusion"]
    assert len(facts) >= 2  # each fact is asked with the other's news in some memories
    for fact in facts:
        asked = fact["interviews"]
        wrong = [a for a in asked["answers"] if a["verdict"] == "hallucinated"]
        assert asked["hallucinated"] == 0, (fact["fact"], wrong)
        assert asked["knew"] + asked["did not know"] + asked["missed"] == len(asked["answers"])
    assert sum(f["interviews"]["knew"] for f in facts) >= 2  # those who heard do say so
