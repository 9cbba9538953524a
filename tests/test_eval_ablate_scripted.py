"""`eval ablate` on scripted answers says plainly that it tests the pipeline, not the
architecture (issue 14: scripted runs showed the party spreading further without planning);
on a model's answers it does not."""

from __future__ import annotations

import json
import random

import pytest

from fakes import FakeServer, schema_value
from helpers import TINY, cli
from smalltown.eval.conditions import SCRIPTED
from smalltown.eval.report import ablate_doc

SAYS = "test the pipeline (each condition runs, is saved and is measured), not the architecture"


def ablate(out, *backend: str) -> tuple[dict, str, str, str]:
    """The ablation's JSON, its text summary, report.md and report.html."""
    args = ("eval", "ablate", TINY, "--until", "+20m", "--conditions", "full,no-planning", "--out", out, *backend)
    data = json.loads(cli(*args, "--json", check=True).stdout)
    text = cli(*args, "--overwrite", check=True).stdout
    return data, " ".join(text.split()), (out / "report.md").read_text(), (out / "report.html").read_text()


def test_scripted_ablations_say_they_test_the_pipeline_and_why(tmp_path) -> None:
    data, text, md, html = ablate(tmp_path / "s", "--backend", "scripted")
    assert data["backend"] == "scripted"
    assert SAYS in text and "without, it follows the routine hour by hour" in text
    assert SAYS in md and "answered by the scripted backend" in md
    assert SAYS in html


@pytest.fixture
def model():
    """An OpenAI-compatible server answering each question with a value of its schema."""
    server = FakeServer()
    rng = random.Random(3)

    def respond(body: dict) -> str:
        schema = body["response_format"]["json_schema"]["schema"]
        return json.dumps(schema_value(rng, schema, schema.get("$defs", {})))

    server.respond = respond
    yield server
    server.close()


def test_ablations_on_a_model_do_not_say_so(tmp_path, model) -> None:
    data, text, md, html = ablate(tmp_path / "m", "--backend", "openai", "--base-url", model.url)
    assert data["backend"] == "openai" and len(model.requests) > 0
    assert SAYS not in text and SAYS not in md and SAYS not in html
    assert "answered by the openai backend" in md


def test_the_statement_follows_the_backend_in_the_report_itself() -> None:
    result = {"world": "w", "start": "2023-02-13 06:00:00", "end": "2023-02-13 07:00:00", "agents": ["A", "B"],
              "diffusion": [], "coordination": [], "notes": [], "asked": False, "calls": None,
              "relationships": {"density_start": 0, "density_end": 0, "edges_start": [], "edges_end": [],
                                "knows_start": 0, "knows_end": 0, "pairs": 2}}
    both = {"full": result, "no-planning": result}
    assert SAYS in SCRIPTED and SAYS in ablate_doc(both, "w.toml", "scripted").markdown()
    for backend in ("llama", "openai", "cassette"):
        assert SAYS not in ablate_doc(both, "w.toml", backend).markdown()
