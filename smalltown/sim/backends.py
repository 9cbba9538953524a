"""Backends by name, for the command line; a backend module is imported only when chosen.

Here, above both `llm` (the model backends) and `scripted` (the stand-in, which answers the tasks
`llm` declares), because choosing a backend by name, and the stand-in that answers for it, needs
both: `llm` cannot import `scripted` without pointing upward. Opening a run is the sim's job."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from smalltown.llm.backend import Backend, capabilities
from smalltown.llm.models import default_model
from smalltown.llm.wrappers import retrying
from smalltown.scripted import ScriptedBackend
from smalltown.store.save import Save, SaveError

BACKENDS = ("scripted", "llama", "openai", "cassette")


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


def make_embedder(opts: BackendOptions | None):
    """A GGUF sentence embedder when one is named, else None (the model-free default)."""
    if opts is None or not opts.embed_model:
        return None
    from smalltown.llm.embed_llama import LlamaEmbedder

    return LlamaEmbedder(Path(opts.embed_model), n_threads=opts.threads, repack=opts.repack)


def choose_backend(name: str | None, opts: BackendOptions) -> str:
    """The default: llama when a model is configured or found, else scripted."""
    if name:
        return name
    if opts.model or default_model() is not None:
        return "llama"
    return "scripted"


def make_fallback(name: str, seed: int, opts: BackendOptions | None = None) -> Backend | None:
    """Who answers what the `name` backend cannot (an unusable answer, a prompt too long for its
    window), visibly in the call log: the scripted stand-in, unless it is the backend itself."""
    if name == "scripted":
        return None
    return ScriptedBackend(opts.seed if opts is not None and opts.seed is not None else seed)


def refuse_stripped_cassette(replay: str | None) -> None:
    """A cassette needs the call log `save strip` drops: say so before the first question."""
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


def connect(backend: Backend) -> None:
    """Make sure the backend (and a cassette's live fallthrough) can be reached before a run
    writes anything: a server that is down is then a clear error, not a save at tick 0. Backends
    with nothing to reach (scripted; llama, whose model is loaded when it is made) pass."""
    for b in (backend, capabilities(backend).fallthrough):
        reach = capabilities(b).connect
        if reach is not None:
            reach()


def make_backend(name: str, seed: int, opts: BackendOptions | None = None) -> Backend:
    opts = opts or BackendOptions()
    seed = opts.seed if opts.seed is not None else seed
    if name == "scripted":
        return ScriptedBackend(seed)
    if name == "llama":
        from smalltown.llm.llama import LlamaBackend, ModelError

        path = opts.model or default_model()
        if path is None:
            raise ModelError("--backend llama needs a model: --model PATH.gguf, $SMALLTOWN_MODEL, "
                             "or a GGUF file in the models directory (see `smalltown models`)")
        return LlamaBackend(Path(path), n_ctx=opts.ctx, n_threads=opts.threads, n_gpu_layers=opts.gpu_layers,
                            seed=seed, temperature=opts.temperature, retries=opts.retries, repack=opts.repack)
    if name == "openai":
        from smalltown.llm.openai_compat import BackendError, OpenAIBackend

        if not opts.base_url:
            raise BackendError("--backend openai needs --base-url (e.g. http://127.0.0.1:8080/v1)")
        return OpenAIBackend(opts.base_url, model=opts.model or "local", api_key_env=opts.api_key_env,
                             retries=max(opts.retries, 0), temperature=opts.temperature,
                             max_concurrency=opts.concurrency, context=opts.ctx, timeout=opts.timeout, seed=seed)
    if name == "cassette":
        from smalltown.llm.cassette import CassetteBackend, CassetteMiss

        if not opts.replay:
            raise CassetteMiss("--backend cassette needs --from SAVE (the run whose answers to replay)")
        live = make_backend(opts.fallthrough, seed, BackendOptions(**{**opts.__dict__, "fallthrough": None})) \
            if opts.fallthrough else None
        # the Asker retries the backend it is given: the cassette's live one is retried here
        return CassetteBackend(opts.replay, fallthrough=retrying(live) if live else None, context=opts.ctx)
    raise ValueError(f"unknown backend {name!r} (available: {', '.join(BACKENDS)})")
