"""The click pieces the commands share: the backend options, value types that say what is wrong
with a value, the one output flag (`-o/--out`, with hidden old spellings), and options that take
several values (`--seeds 1 2 3`)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any, Callable

import click


# The command line's exit codes (docs/cli.md): every command and the TUI keep to them.
OK, FAILED, REFUSED = 0, 1, 2  # REFUSED: a usage error, or input refused (a missing file, a bad save...)
STOPPED_INT, STOPPED_TERM = 130, 143  # 128 + the signal, as shells report them

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


class LiveChoice(click.Choice):
    """A choice among names read when they are used, not when a command is declared: the backends'
    registry may grow after the command line is imported (a plugin, a test's backend), and reading
    it imports every backend's module, which `smalltown --help` does without."""

    def __init__(self, read: Callable[[], list[str]]):
        self.read = read
        super().__init__(())

    @property  # type: ignore[override]
    def choices(self) -> tuple[str, ...]:
        return tuple(self.read())

    @choices.setter
    def choices(self, value: Sequence[str]) -> None:
        pass  # (click's __init__ sets it: the names are read each time instead)


class Opt(click.Option):
    """An option whose `aliases` (old spellings) still work but are not in --help, and whose help
    may be computed when it is shown (`help_fn`)."""

    def __init__(self, decls: Sequence[str], *, aliases: Sequence[str] = (),
                 help_fn: Callable[[], str] | None = None, **kw: Any):
        super().__init__([*decls, *aliases], **kw)
        self.aliases = tuple(aliases)
        self.help_fn = help_fn

    def get_help_record(self, ctx: click.Context):
        opts = self.opts
        self.opts = [o for o in opts if o not in self.aliases]
        if self.help_fn is not None:
            self.help = self.help_fn()
        try:
            return super().get_help_record(ctx)
        finally:
            self.opts = opts


class Several(Opt):
    """An option taking the values that follow it up to the next option (`--seeds 1 2 3`);
    repeating it adds more."""

    def __init__(self, decls: Sequence[str], **kw: Any):
        kw.setdefault("multiple", True)
        super().__init__(decls, **kw)

    def add_to_parser(self, parser, ctx: click.Context) -> None:
        super().add_to_parser(parser, ctx)
        # click has no "one or more values" option: its parser's option (private, stable since
        # click 7) is given a `process` that also takes the values after the first
        option = next(parser._long_opt.get(o) or parser._short_opt.get(o) for o in self.opts)
        process = option.process

        def is_value(arg: str) -> bool:
            return not arg.startswith("-") or arg[1:2].isdigit()  # (a negative number is a value)

        def greedy(value: Any, state) -> None:
            process(value, state)
            while state.rargs and is_value(state.rargs[0]):
                process(state.rargs.pop(0), state)

        option.process = greedy


def opt(*decls: str, **kw: Any):
    return click.option(*decls, cls=Opt, **kw)


def several(*decls: str, **kw: Any):
    return click.option(*decls, cls=Several, **kw)


def out_option(what: str, *, aliases: Sequence[str] = (), required: bool = False, metavar: str = "FILE"):
    """The one output flag, `-o/--out`; `aliases`: the spellings it had before, kept working."""
    return opt("-o", "--out", "out", aliases=aliases, required=required, metavar=metavar, help=what)


class Seconds(click.ParamType):
    name = "seconds"

    def __init__(self, low: float, high: float):
        self.low, self.high = low, high

    def convert(self, value, param, ctx):
        if isinstance(value, float):
            return value
        try:
            seconds = float(value)
        except ValueError:
            self.fail(f"{str(value)[:40]!r} is not a number of seconds", param, ctx)
        if not self.low <= seconds <= self.high:  # (NaN fails this too)
            self.fail(f"{seconds:g} is out of range (from {self.low:g} to {self.high:g} seconds)", param, ctx)
        return seconds


class Address(click.ParamType):
    """A server address (llm/endpoints.py url_problem)."""

    name = "url"

    def convert(self, value, param, ctx):
        from smalltown.llm.endpoints import url_problem

        wrong = url_problem(value)
        if wrong:
            self.fail(wrong, param, ctx)
        return value


def int_in(low: int, high: int) -> click.IntRange:
    return click.IntRange(low, high)


def _names() -> list[str]:
    from smalltown.cli.backends import names  # (the registry: imported when a choice is read)

    return names()


def _live_names() -> list[str]:
    from smalltown.cli.backends import live_names

    return live_names()


def _timeout_help() -> str:
    from smalltown.llm.wrappers import GONE_AFTER

    return ("openai: the most one request may take, the start-up check included, from when it is sent to its "
            "last byte (default 60); a failed request is retried twice, after 0.5 s, then 1 s; a question still "
            f"failing is answered by the scripted stand-in, and {GONE_AFTER} in a row stop the run")


def _backend_help() -> str:
    from smalltown.cli.backends import BACKENDS

    return ("; ".join(f"{n}: {k.about}" for n, k in BACKENDS.items()) + " (default: cassette when --from is "
            "given, llama when a model is configured or found, else scripted); an option the backend ignores "
            "is said at start-up")


def backend_options(f: Callable) -> Callable:
    """Who answers the agents' questions: the same options on every command that runs agents (what
    they say of the backends is read from the registry when --help shows it)."""
    decls = [
        opt("--backend", type=LiveChoice(_names), help_fn=_backend_help),
        opt("--model", metavar="PATH|NAME", help="llama: a GGUF file; openai: the model name"),
        opt("--ctx", type=int, help="the model's context window in tokens, prompts are fitted to it "
            "(llama: its n_ctx; openai: the server's; default 4096)"),
        opt("--threads", type=int, help="llama: threads (default: physical cores)"),
        opt("--gpu-layers", type=int, help="llama: layers offloaded to a GPU (default 0)"),
        opt("--repack", type=click.Choice(["auto", "on", "off"]), help="llama: let llama.cpp repack the "
            "weights for its fast CPU kernels (its extra buffer types, AMX among them); auto (the default) "
            "keeps them off where the CPU has AMX, whose kernel crashes llama.cpp on some models"),
        opt("--temperature", type=float, help="default 0.7"),
        opt("--seed", type=int, help="sampling seed (default: the world's seed)"),
        opt("--base-url", metavar="URL", multiple=True, type=Address(), help="openai: e.g. "
            "http://127.0.0.1:8080/v1; give it once per server: each agent is pinned to one by a hash of its name"),
        opt("--api-key-env", metavar="VAR", help="openai: the environment variable holding the key"),
        opt("--timeout", type=Seconds(0.1, 86400), metavar="SECONDS", help_fn=_timeout_help),
        opt("--concurrency", type=int_in(1, 256), help="openai: requests in flight at most on each server "
            "(1-256, default 4)"),
        opt("--embed-model", metavar="PATH", help="a sentence-embedding GGUF for memories (default: the "
            "model-free hashed n-gram embedder); a save keeps the embedder it started with"),
        opt("--from", "replay", metavar="SAVE", help="cassette: the run whose answers to replay"),
        opt("--fallthrough", type=LiveChoice(_live_names),
            help="cassette: answer what the cassette lacks with this backend"),
    ]
    for d in reversed(decls):
        f = d(f)
    return f


def namespace(command: str, **params: Any) -> argparse.Namespace:
    """The command's parameters as the commands' functions read them (`args.save`, `args.json`):
    tuples of a repeatable option as lists, an empty one as None (as before: "not given")."""
    for k, v in params.items():
        if isinstance(v, tuple):
            params[k] = list(v) if v else None
    return argparse.Namespace(command=command, **params)


def backend_args(argv: list[str]) -> argparse.Namespace:
    """The backend options in `argv` (as a command gets them), read on their own."""
    @click.command()
    @backend_options
    def read(**params: Any) -> dict:
        return params

    return namespace("backend", **read.main(list(argv), standalone_mode=False))
