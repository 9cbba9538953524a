"""The backends as a user picks them: a real llama.cpp model, cassette replays, the default choice,
and clear errors when a backend cannot be used."""

from __future__ import annotations

import os

import pytest

from helpers import TINY, cli, query, save_info, smalltown
from tinymodel import build_tiny_gguf


TINY_CTX = "8192"  # the tiny model's tokens are mostly single bytes: its prompts run long


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    return build_tiny_gguf(tmp_path_factory.mktemp("model") / "tiny.gguf")


@pytest.fixture(scope="module")
def llama_hour(tmp_path_factory, tiny_model):
    save = tmp_path_factory.mktemp("llama") / "hour.sqlite"
    cli("run", "--headless", TINY, "--until", "+1h", "--save", save, "--backend", "llama",
        "--model", tiny_model, "--threads", "1", "--ctx", TINY_CTX, check=True)
    return save


def test_a_headless_hour_runs_on_a_real_llama_cpp_model(llama_hour):
    assert save_info(llama_hour)["game_time"] == "2023-02-13 07:00:00"
    rows = query(llama_hour, "select backend, prompt_tokens, raw_answer, note from llm_calls")
    assert rows and {b for b, *_ in rows} == {"llama"}
    assert all(p > 0 for _, p, _, _ in rows)
    # random weights: many answers are unusable and fall back, visibly; none stops the run...
    fallbacks = [(raw, note) for _, _, raw, note in rows if note.startswith("fallback to scripted")]
    for raw, note in fallbacks:
        assert raw and ":" in note  # the model's own answer is kept, and the reason given
    # ...and some come from the model itself, under the schema's grammar
    assert len(fallbacks) < len(rows)


def test_the_cassette_replays_the_llama_hour_with_zero_model_calls(tmp_path, llama_hour):
    replay = tmp_path / "replay.sqlite"
    cli("run", "--headless", TINY, "--until", "+1h", "--save", replay, "--backend", "cassette",
        "--from", llama_hour, check=True)
    assert save_info(replay)["digest"] == save_info(llama_hour)["digest"]
    assert {b for (b,) in query(replay, "select distinct backend from llm_calls")} == {"cassette"}
    assert query(replay, "select count(*) from llm_calls")[0][0] == query(llama_hour, "select count(*) from llm_calls")[0][0]


def test_the_cassette_replays_a_scripted_run(tmp_path):
    rec, rep = tmp_path / "rec.sqlite", tmp_path / "rep.sqlite"
    cli("run", "--headless", TINY, "--until", "+3h", "--save", rec, "--backend", "scripted", check=True)
    cli("run", "--headless", TINY, "--until", "+3h", "--save", rep, "--backend", "cassette", "--from", rec,
        check=True)
    assert save_info(rep)["digest"] == save_info(rec)["digest"]


def test_a_question_the_cassette_lacks_is_reported_or_answered_live(tmp_path):
    rec = tmp_path / "rec.sqlite"
    cli("run", "--headless", TINY, "--until", "+1h", "--save", rec, "--backend", "scripted", check=True)
    # two hours past the recording: the agents ask questions the cassette never heard
    proc = cli("run", "--headless", TINY, "--until", "+3h", "--save", tmp_path / "a.sqlite",
               "--backend", "cassette", "--from", rec)
    assert proc.returncode == 1 and "the cassette has no answer" in proc.stderr and "Traceback" not in proc.stderr
    assert save_info(tmp_path / "a.sqlite")["tick"] > 0  # what was replayed is saved
    out = tmp_path / "b.sqlite"
    cli("run", "--headless", TINY, "--until", "+3h", "--save", out, "--backend", "cassette", "--from", rec,
        "--fallthrough", "scripted", check=True)
    assert save_info(out)["game_time"] == "2023-02-13 09:00:00"


def test_the_default_backend_is_llama_when_a_model_is_found(tmp_path, tiny_model, monkeypatch):
    models = tmp_path / "models"
    models.mkdir()
    monkeypatch.setenv("SMALLTOWN_MODELS", str(models))
    monkeypatch.delenv("SMALLTOWN_MODEL", raising=False)
    proc = cli("run", "--headless", TINY, "--until", "+5m", "--save", tmp_path / "s.sqlite", check=True)
    assert "no model configured" in proc.stderr and "smalltown models pull" in proc.stderr
    assert {b for (b,) in query(tmp_path / "s.sqlite", "select distinct backend from llm_calls")} == {"scripted"}
    os.link(tiny_model, models / "tiny.gguf")
    assert "tiny.gguf" in cli("models", check=True).stdout
    proc = cli("run", "--headless", TINY, "--until", "+5m", "--save", tmp_path / "l.sqlite", "--threads", "1",
               "--ctx", TINY_CTX, check=True)
    assert "no model configured" not in proc.stderr
    assert {b for (b,) in query(tmp_path / "l.sqlite", "select distinct backend from llm_calls")} == {"llama"}


@pytest.mark.parametrize("args, message", [
    (["--backend", "llama", "--model", "nowhere.gguf"], "nowhere.gguf"),
    (["--backend", "llama", "--model", str(TINY)], "not a GGUF"),
    (["--backend", "openai"], "--base-url"),
    (["--backend", "cassette"], "--from"),
    (["--backend", "cassette", "--from", "missing.sqlite"], "missing.sqlite"),
])
def test_a_backend_that_cannot_be_used_is_a_clear_error(tmp_path, args, message):
    proc = cli("run", "--headless", TINY, "--until", "+5m", "--save", tmp_path / "x.sqlite", *args)
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr and "Traceback" not in proc.stderr


def test_an_unreachable_server_is_a_clear_error(tmp_path):
    # (a process of its own, with a time limit: a connection that hangs must not hang the suite)
    proc = smalltown("run", "--headless", TINY, "--until", "+5m", "--save", tmp_path / "x.sqlite",
                     "--backend", "openai", "--base-url", "http://127.0.0.1:9/v1", timeout=120)
    assert proc.returncode == 2 and "127.0.0.1:9" in proc.stderr and "Traceback" not in proc.stderr


def test_the_config_file_names_the_model_and_the_environment_outranks_it(tmp_path, tiny_model, monkeypatch):
    conf = tmp_path / "config" / "smalltown"
    conf.mkdir(parents=True)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("SMALLTOWN_MODELS", str(tmp_path / "no-models"))
    monkeypatch.delenv("SMALLTOWN_MODEL", raising=False)
    (conf / "config.toml").write_text(f'model = "{tiny_model}"\nthreads = 1\nctx = {TINY_CTX}\n')
    save = tmp_path / "c.sqlite"
    cli("run", "--headless", TINY, "--until", "+5m", "--save", save, check=True)
    assert {m for (m,) in query(save, "select distinct model from llm_calls")} == {"tiny.gguf"}
    monkeypatch.setenv("SMALLTOWN_MODEL", str(tmp_path / "elsewhere.gguf"))
    proc = cli("run", "--headless", TINY, "--until", "+5m", "--save", tmp_path / "d.sqlite")
    assert proc.returncode == 2 and "elsewhere.gguf" in proc.stderr


def test_a_mistake_in_the_config_file_names_the_file_and_line(tmp_path, monkeypatch):
    conf = tmp_path / "smalltown"
    conf.mkdir()
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    (conf / "config.toml").write_text('ctx = 4096\nthreds = 2\n')
    proc = cli("run", "--headless", TINY, "--until", "+5m", "--save", tmp_path / "x.sqlite")
    assert proc.returncode == 2 and "config.toml:2: unknown key 'threds'" in proc.stderr
    (conf / "config.toml").write_text('ctx = "big"\n')
    proc = cli("run", "--headless", TINY, "--until", "+5m", "--save", tmp_path / "y.sqlite")
    assert proc.returncode == 2 and "config.toml:1: ctx must be an int" in proc.stderr


def test_an_embedding_model_is_kept_with_its_save_and_never_mixed(tmp_path, tiny_model):
    save = tmp_path / "e.sqlite"
    cli("run", "--headless", TINY, "--until", "+20m", "--save", save, "--backend", "scripted",
        "--embed-model", tiny_model, "--threads", "1", check=True)
    embedder = query(save, "select value from meta where key='embedder'")[0][0]
    assert "llama-embed:tiny.gguf" in embedder
    dims = {n for (n,) in query(save, "select length(embedding) / 4 from memories")}
    assert len(dims) == 1 and dims != {256}  # the model's vectors, not the hashed ones
    cli("run", "--headless", save, "--until", "+10m", "--backend", "scripted", "--embed-model", tiny_model,
        "--threads", "1", check=True)
    proc = cli("run", "--headless", save, "--until", "+10m", "--backend", "scripted")
    assert proc.returncode == 2 and "cannot be mixed" in proc.stderr and "--embed-model" in proc.stderr


def test_a_prompt_too_long_for_the_window_is_logged_and_answered_by_the_fallback(tmp_path, tiny_model):
    # the tiny model's tokens are bytes: at 4,096 some prompts cannot fit beside their answer's
    # budget. The run goes on (the scripted stand-in answers them), and the log and `save info` say so.
    save = tmp_path / "small-window.sqlite"
    cli("run", "--headless", TINY, "--until", "+20m", "--save", save, "--backend", "llama",
        "--model", tiny_model, "--threads", "1", "--ctx", "4096", check=True)
    rows = query(save, "select task, note, fallback from llm_calls where fallback = 'too long'")
    assert rows and all(note.startswith("error: ") and "tokens" in note for _, note, _ in rows)
    calls = save_info(save)["calls"]
    assert calls["too_long"] == len(rows) and calls["fallbacks"] >= len(rows)
