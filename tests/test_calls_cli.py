"""`smalltown calls`: a save's model calls with prompts and answers as text; `--json` round-trips
(parsed back, the same rows the store's reader gives)."""

from __future__ import annotations

import json

import pytest

from helpers import cli, query, tiny_sim
from smalltown.cli.calls import calls_data
from smalltown.store.packing import unpack_text
from smalltown.store.save import Save

AGENT = "Isabella Rodriguez"


@pytest.fixture(scope="module")
def save(tmp_path_factory):
    """The tiny town run to 09:00 on the first day (its agents' first plans and reactions)."""
    sim = tiny_sim(tmp_path_factory.mktemp("calls"), "09:00")
    path = sim.save.path
    sim.close()
    return path


def test_calls_json_round_trips_to_the_readers_rows(save):
    rows = json.loads(cli("calls", save, "--agent", "Isabella", "-n", "0", "--json", check=True).stdout)
    assert rows == calls_data(save, "Isabella", count=0)
    stored = query(save, "SELECT id, tick, task, prompt, raw_answer FROM llm_calls WHERE agent = ? ORDER BY id", AGENT)
    assert len(rows) == len(stored) > 3
    for row, (i, tick, task, prompt, answer) in zip(rows, stored):
        assert (row["id"], row["tick"], row["task"], row["agent"]) == (i, tick, task, AGENT)
        assert row["prompt"] == unpack_text(prompt, "") and row["answer"] == unpack_text(answer, "")
    s = Save.open(save, readonly=True)
    try:
        assert [r["id"] for r in rows] == [c.id for c in s.reader().calls_in(AGENT)]
    finally:
        s.close()


def test_calls_filters_by_task_and_game_time(save):
    rows = json.loads(cli("calls", save, "--task", "decompose", "--since", "7:00", "--until", "8:00",
                          "-n", "0", "--json", check=True).stdout)
    expected = query(save, "SELECT id FROM llm_calls WHERE task = 'decompose' AND time >= '2023-02-13 07:00:00' "
                           "AND time <= '2023-02-13 08:00:00' ORDER BY id")
    assert [r["id"] for r in rows] == [i for (i,) in expected] and expected
    newest = json.loads(cli("calls", save, "-n", "2", "--json", check=True).stdout)
    assert [r["id"] for r in newest] == [i for (i,) in query(save, "SELECT id FROM llm_calls ORDER BY id")][-2:]


def test_calls_text_shows_each_prompt_and_answer(save):
    out = cli("calls", save, "--agent", "Klaus", "--task", "daily_plan", check=True).stdout
    (i, prompt, answer), = query(save, "SELECT id, prompt, raw_answer FROM llm_calls WHERE agent = 'Klaus Mueller' "
                                       "AND task = 'daily_plan'")
    assert f"## call {i}: Klaus Mueller, daily_plan at" in out
    assert unpack_text(prompt, "").splitlines()[0] in out and unpack_text(answer, "") in out


def test_calls_refuses_what_the_save_does_not_name(save):
    bad = cli("calls", save, "--task", "dialy_plan")
    assert bad.returncode == 2 and "daily_plan" in bad.stderr
    assert cli("calls", save, "--agent", "Nobody").returncode == 2
    assert cli("calls", save, "--since", "day 5 9:00").returncode == 2
