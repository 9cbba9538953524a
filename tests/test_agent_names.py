"""An agent named by the user (issue 14): a misspelt name says whom it probably meant, on every
command that takes one, and exits 2 (a usage error) on the command line."""

from __future__ import annotations

import pytest

from handmade import ANN, make_town
from helpers import TINY, cli
from smalltown.world.load import load_world
from smalltown.world.names import NoSuchAgent, agent_named, did_you_mean

NAMES = [a.name for a in load_world(TINY).agents]  # Isabella Rodriguez, Maria Lopez, Klaus Mueller
MEANT = 'no agent "Isabela"; did you mean "Isabella Rodriguez"?'


@pytest.fixture(scope="module")
def save(tmp_path_factory):
    path = tmp_path_factory.mktemp("names") / "tiny.sqlite"
    cli("run", "--headless", TINY, "--until", "+0m", "--save", path, check=True)
    return path


@pytest.mark.parametrize("typed, meant", [("Isabella Rodriguez", "Isabella Rodriguez"), ("klaus", "Klaus Mueller"),
                                         ("  maria   LOPEZ ", "Maria Lopez")])
def test_a_full_or_first_name_in_any_case_finds_the_agent(typed: str, meant: str) -> None:
    assert agent_named(typed, NAMES) == meant


@pytest.mark.parametrize("typed, meant", [("Isabela", "Isabella Rodriguez"), ("Klaus Muller", "Klaus Mueller"),
                                         ("marai", "Maria Lopez"), ("Isabella Rodrigez", "Isabella Rodriguez")])
def test_a_misspelt_full_or_first_name_is_matched_to_the_agent_meant(typed: str, meant: str) -> None:
    assert did_you_mean(typed, NAMES) == meant
    with pytest.raises(NoSuchAgent) as e:
        agent_named(typed, NAMES)
    assert str(e.value) == f'no agent "{typed}"; did you mean "{meant}"?'


def test_a_name_like_none_lists_the_town_and_a_shared_first_name_asks_for_the_full_one() -> None:
    with pytest.raises(NoSuchAgent) as e:
        agent_named("Zebulon", NAMES)
    assert str(e.value) == 'no agent "Zebulon" (agents: Isabella Rodriguez, Maria Lopez, Klaus Mueller)'
    assert did_you_mean("Zebulon", NAMES) is None
    with pytest.raises(NoSuchAgent) as e:
        agent_named("maria", [*NAMES, "Maria Chen"])
    assert "first name of \"Maria Lopez\" and \"Maria Chen\"" in str(e.value)


@pytest.mark.parametrize("command", [["inspect"], ["whisper", "{save}", "Isabela", "Bake a cake"],
                                     ["interview", "{save}", "Isabela", "Who are you?"]],
                         ids=["inspect", "whisper", "interview"])
def test_the_agent_commands_say_whom_a_misspelt_name_meant_and_exit_2(save, command) -> None:
    args = [a.format(save=save) for a in command] if len(command) > 1 else [*command, str(save), "Isabela"]
    proc = cli(*args)
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"error: {MEANT}"


def test_eval_interview_agents_say_whom_a_misspelt_name_meant_and_exit_2(tmp_path) -> None:
    town = make_town(tmp_path)
    proc = cli("eval", "interview", town, "--agents", "Anne")
    assert proc.returncode == 2
    assert f'did you mean "{ANN}"?' in proc.stderr
    proc = cli("eval", "interview", town, "--agents", "Nobody")
    assert proc.returncode == 2
    assert f'no agent "Nobody" (agents: {ANN}, ' in proc.stderr
