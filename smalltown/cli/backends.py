"""Backends by name: the registry a front end chooses from, above the engine. Each entry is a
factory and what it honours of the options (`BackendOptions`); a backend module is imported only
when its backend is made. The engine is handed what was chosen (`Choice`, which sim/open.py reads
through `sim.backends.BackendChoice`) and never names a backend itself.

Here, above `sim` (the engine), `llm` (the model backends) and `scripted` (the stand-in, which
answers for every other backend): choosing needs them all, and none of them may import upward.
To add a backend: `register` a `BackendKind` (the registry is the one list `--backend`, its help
and its errors read)."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Callable, Mapping

from smalltown.llm.backend import Backend
from smalltown.llm.embed import Embedder
from smalltown.llm.models import default_model
from smalltown.llm.wrappers import retrying
from smalltown.store.save import Save, SaveError


@dataclass
class BackendOptions:
    """What the command line says about the backend (all optional)."""

    model: str | None = None  # llama: a GGUF path; openai: the model name
    ctx: int = 4096  # the model's context window: llama's n_ctx; openai: the server's, to fit prompts to
    threads: int | None = None  # default: the machine's physical cores
    gpu_layers: int = 0
    repack: str = "auto"  # llama: weight repacking (llama.cpp's extra buffer types): auto is off where AMX is
    temperature: float = 0.7
    seed: int | None = None  # sampling seed (default: the world's seed)
    retries: int = 2
    base_url: str | list[str] | None = None  # openai: one server, or several (each agent pinned to one)
    api_key_env: str | None = None
    concurrency: int = 4  # openai: requests in flight on each server
    timeout: float = 60.0  # openai: seconds a whole request may take (connect, send, every read)
    embed_model: str | None = None  # a sentence-embedding GGUF (default: the hashed n-gram embedder)
    replay: str | None = None  # cassette: the save whose answers are replayed
    fallthrough: str | None = None  # cassette: a backend to answer what the cassette lacks


OPTIONS = frozenset(f.name for f in fields(BackendOptions))
EMBEDDER_OPTIONS = frozenset({"threads", "repack"})  # what a GGUF embedder (--embed-model) takes as well


@dataclass(frozen=True)
class BackendKind:
    """One backend the registry can make, and what it does with the options: `honours` are the
    fields of BackendOptions its factory passes on to it (every other one it ignores, and a run
    that sets one is told so at start-up, with `why` when it says why)."""

    make: Callable[[int, BackendOptions], Backend]  # (the run's sampling seed, the options)
    about: str  # one line: what answers (for --help)
    honours: frozenset[str] | Callable[[BackendOptions], frozenset[str]]  # (a cassette's: its fallthrough's)
    why: Callable[[str, BackendOptions], str] = lambda option, opts: ""  # why it ignores `option`
    check: Callable[[BackendOptions], None] = lambda opts: None  # refuse a start before anything is opened
    stand_in: bool = False  # it is the stand-in itself: no fallback answers for it
    live: bool = True  # it can answer what a cassette lacks (--fallthrough)

    def honoured(self, opts: BackendOptions) -> frozenset[str]:
        return self.honours(opts) if callable(self.honours) else self.honours


BACKENDS: dict[str, BackendKind] = {}


def register(name: str, kind: BackendKind) -> None:
    """Add a backend to the registry (or replace the one of that name)."""
    unknown = (kind.honours if not callable(kind.honours) else frozenset()) - OPTIONS
    if unknown:
        raise ValueError(f"backend {name!r} honours no such option: {', '.join(sorted(unknown))}")
    BACKENDS[name] = kind


def names() -> list[str]:
    """The backends' names, in the order they were registered (--backend's choices)."""
    return list(BACKENDS)


def live_names() -> list[str]:
    """The backends a cassette can fall through to (--fallthrough's choices)."""
    return [n for n, kind in BACKENDS.items() if kind.live]


def kind_of(name: str) -> BackendKind:
    kind = BACKENDS.get(name)
    if kind is None:
        raise ValueError(f"unknown backend {name!r} (available: {', '.join(BACKENDS)})")
    return kind


def sampling_seed(seed: int, opts: BackendOptions | None) -> int:
    """`opts.seed` if one is given, else `seed` (the world's)."""
    return opts.seed if opts is not None and opts.seed is not None else seed


def make_backend(name: str, seed: int, opts: BackendOptions | None = None) -> Backend:
    """The `name` backend, sampling under `sampling_seed`."""
    kind = kind_of(name)
    opts = opts or BackendOptions()
    return kind.make(sampling_seed(seed, opts), opts)


def make_fallback(name: str, seed: int, opts: BackendOptions | None = None) -> Backend | None:
    """Who answers what the `name` backend cannot (an unusable answer, a prompt too long for its
    window), visibly in the call log: the scripted stand-in, unless it is the backend itself."""
    if kind_of(name).stand_in:
        return None
    from smalltown.scripted import ScriptedBackend

    return ScriptedBackend(sampling_seed(seed, opts))


def make_embedder(opts: BackendOptions | None) -> Embedder | None:
    """A GGUF sentence embedder when one is named, else None (the model-free default)."""
    if opts is None or not opts.embed_model:
        return None
    from smalltown.llm.embed_llama import LlamaEmbedder

    return LlamaEmbedder(Path(opts.embed_model), n_threads=opts.threads, repack=opts.repack)


def default_backend(opts: BackendOptions) -> str:
    """The backend when none is named: the cassette when a save to replay is given (a re-run of a
    fork repeats its original), llama when a model is configured or found, else scripted."""
    if opts.replay:
        return "cassette"
    if opts.model or default_model() is not None:
        return "llama"
    return "scripted"


@dataclass(frozen=True)
class Choice:
    """A backend chosen by name, with its options and how the user gave them: what a front end
    hands the engine (sim/backends.py BackendChoice), which makes it for a run's seed."""

    name: str
    opts: BackendOptions = field(default_factory=BackendOptions)
    given: Mapping[str, str] = field(default_factory=dict)  # option -> as the user gave it ("--concurrency 8")

    def check(self) -> None:
        kind_of(self.name).check(self.opts)

    def backend(self, seed: int) -> Backend:
        return make_backend(self.name, seed, self.opts)

    def embedder(self) -> Embedder | None:
        return make_embedder(self.opts)

    def fallback(self, seed: int) -> Backend | None:
        return make_fallback(self.name, seed, self.opts)

    def ignored(self) -> list[str]:
        """A line for each option the user gave that this backend ignores (none for a default)."""
        kind = kind_of(self.name)
        used = kind.honoured(self.opts) | {"embed_model"} | (EMBEDDER_OPTIONS if self.opts.embed_model else set())
        lines = []
        for option, as_given in self.given.items():
            if option not in used:
                why = kind.why(option, self.opts)
                lines.append(f"{as_given} is ignored by the {self.name} backend" + (f": {why}" if why else ""))
        return lines


def choose(name: str | None = None, opts: BackendOptions | None = None,
           given: Mapping[str, str] | None = None) -> Choice:
    """The backend `name` (None: `default_backend`), refused here when no such backend is registered."""
    opts = opts or BackendOptions()
    name = name or default_backend(opts)
    kind_of(name)
    return Choice(name, opts, dict(given or {}))


# --- the backends smalltown has ------------------------------------------------------------------

CASSETTE_OWN = frozenset({"replay", "fallthrough", "ctx", "seed", "embed_model"})


def _scripted(seed: int, opts: BackendOptions) -> Backend:
    from smalltown.scripted import ScriptedBackend

    return ScriptedBackend(seed)


def _llama(seed: int, opts: BackendOptions) -> Backend:
    from smalltown.llm.llama import LlamaBackend, ModelError

    path = opts.model or default_model()
    if path is None:
        raise ModelError("--backend llama needs a model: --model PATH.gguf, $SMALLTOWN_MODEL, "
                         "or a GGUF file in the models directory (see `smalltown models`)")
    return LlamaBackend(Path(path), n_ctx=opts.ctx, n_threads=opts.threads, n_gpu_layers=opts.gpu_layers,
                        seed=seed, temperature=opts.temperature, retries=opts.retries, repack=opts.repack)


def _openai(seed: int, opts: BackendOptions) -> Backend:
    from smalltown.llm.openai_compat import BackendError, OpenAIBackend

    if not opts.base_url:
        raise BackendError("--backend openai needs --base-url (e.g. http://127.0.0.1:8080/v1)")
    return OpenAIBackend(opts.base_url, model=opts.model or "local", api_key_env=opts.api_key_env,
                         retries=max(opts.retries, 0), temperature=opts.temperature,
                         max_concurrency=opts.concurrency, context=opts.ctx, timeout=opts.timeout, seed=seed)


def _cassette(seed: int, opts: BackendOptions) -> Backend:
    from smalltown.llm.cassette import CassetteBackend, CassetteMiss

    if not opts.replay:
        raise CassetteMiss("--backend cassette needs --from SAVE (the run whose answers to replay)")
    live = make_backend(opts.fallthrough, seed, BackendOptions(**{**opts.__dict__, "fallthrough": None})) \
        if opts.fallthrough else None
    # the Asker retries the backend it is given: the cassette's live one is retried here
    return CassetteBackend(opts.replay, fallthrough=retrying(live) if live else None, context=opts.ctx)


def refuse_stripped_cassette(opts: BackendOptions) -> None:
    """A cassette needs the call log `save strip` drops: say so before the first question."""
    replay = opts.replay
    if not replay or not Path(replay).exists():
        return
    try:
        save = Save.open(replay, readonly=True)
    except SaveError:
        return  # the cassette reports what is wrong with it
    try:
        stripped = save.meta("stripped")
    finally:
        save.close()
    if stripped and stripped.get("dropped", {}).get("llm_calls") is not None:
        raise SaveError(f"{replay}: stripped of its model call log (by `smalltown save strip`), so it "
                        f"cannot be replayed as a cassette; replay from the original save "
                        f"({stripped.get('from', 'the unstripped save')})")


def _cassette_honours(opts: BackendOptions) -> frozenset[str]:
    """Its own options, and its fallthrough's but --concurrency: it answers one question at a time."""
    through = kind_of(opts.fallthrough).honoured(opts) - {"concurrency"} if opts.fallthrough else frozenset()
    return CASSETTE_OWN | through


def _cassette_why(option: str, opts: BackendOptions) -> str:
    if option == "concurrency":
        return "it answers one question at a time (its fallthrough's too)"
    if opts.fallthrough:
        return f"its fallthrough, the {opts.fallthrough} backend, does not use it"
    return "it replays recorded answers (--fallthrough BACKEND answers what it lacks live)"


CASSETTE_ONLY = {"replay": "--from is the cassette's", "fallthrough": "--fallthrough is the cassette's"}


def _why(reasons: Mapping[str, str]) -> Callable[[str, BackendOptions], str]:
    return lambda option, opts: CASSETTE_ONLY.get(option) or reasons.get(option, "")


SERVER = ("base_url", "api_key_env", "timeout")
register("scripted", BackendKind(
    _scripted, "the stand-in: no model, answers from the questions' typed inputs", stand_in=True,
    honours=frozenset({"seed", "embed_model"}),
    why=_why(dict.fromkeys(OPTIONS, "it answers from the questions' typed inputs, with no model"))))
register("llama", BackendKind(
    _llama, "a local GGUF model in this process (llama-cpp-python), one question at a time, each "
    "agent's evaluated prompts kept for the next (cached tokens)",
    honours=frozenset({"model", "ctx", "threads", "gpu_layers", "repack", "temperature", "seed", "retries",
                       "embed_model"}),
    why=_why({"concurrency": "it answers one question at a time",
              **dict.fromkeys(SERVER, "it runs the model in this process, with no server")})))
register("openai", BackendKind(
    _openai, "an OpenAI-compatible HTTP server (--base-url), --concurrency questions at once on each, "
    "cached tokens as the server reports them",
    honours=frozenset({"model", "ctx", "temperature", "seed", "retries", "base_url", "api_key_env",
                       "concurrency", "timeout", "embed_model"}),
    why=_why(dict.fromkeys(("threads", "gpu_layers", "repack"),
                           "the server runs the model: set it where the server is started"))))
register("cassette", BackendKind(
    _cassette, "a save's recorded answers replayed (--from SAVE)", honours=_cassette_honours,
    why=_cassette_why, check=refuse_stripped_cassette, live=False))
