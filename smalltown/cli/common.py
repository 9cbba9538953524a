"""What the command line's commands share: the backend flags and the options read from them."""

from __future__ import annotations

import argparse
import json
import os
import sys

from smalltown.cli.backends import BACKENDS, BackendOptions, Choice, choose, live_names, names
from smalltown.llm.wrappers import GONE_AFTER


def add_backend_args(p: argparse.ArgumentParser) -> None:
    """Who answers the agents' questions; the same flags on every command that runs agents."""
    g = p.add_argument_group("backend")
    g.add_argument("--backend", choices=names(), default=None,
                   help="; ".join(f"{n}: {k.about}" for n, k in BACKENDS.items()) + " (default: cassette "
                   "when --from is given, llama when a model is configured or found, else scripted); an "
                   "option the backend ignores is said at start-up")
    g.add_argument("--model", metavar="PATH|NAME", help="llama: a GGUF file; openai: the model name")
    g.add_argument("--ctx", type=int, help="the model's context window in tokens, prompts are fitted to it "
                   "(llama: its n_ctx; openai: the server's; default 4096)")
    g.add_argument("--threads", type=int, help="llama: threads (default: physical cores)")
    g.add_argument("--gpu-layers", type=int, help="llama: layers offloaded to a GPU (default 0)")
    g.add_argument("--repack", choices=("auto", "on", "off"), help="llama: let llama.cpp repack the weights "
                   "for its fast CPU kernels (its extra buffer types, AMX among them); auto (the default) "
                   "keeps them off where the CPU has AMX, whose kernel crashes llama.cpp on some models")
    g.add_argument("--temperature", type=float, help="default 0.7")
    g.add_argument("--seed", type=int, help="sampling seed (default: the world's seed)")
    g.add_argument("--base-url", metavar="URL", action="append", type=http_address, help="openai: e.g. http://127.0.0.1:8080/v1; "
                   "give it once per server: each agent is pinned to one by a hash of its name")
    g.add_argument("--api-key-env", metavar="VAR", help="openai: the environment variable holding the key")
    g.add_argument("--timeout", type=seconds_in(0.1, 86400), metavar="SECONDS",
                   help="openai: the most one request may take, the start-up check included, from when it is "
                   "sent to its last byte (default 60); a failed request is retried twice, after 0.5 s, then 1 s; "
                   f"a question still failing is answered by the scripted stand-in, and {GONE_AFTER} in a row "
                   "stop the run")
    g.add_argument("--concurrency", type=int_in(1, 256), help="openai: requests in flight at most "
                   "on each server (1-256, default 4)")
    g.add_argument("--embed-model", metavar="PATH", help="a sentence-embedding GGUF for memories (default: "
                   "the model-free hashed n-gram embedder); a save keeps the embedder it started with")
    g.add_argument("--from", dest="replay", metavar="SAVE", help="cassette: the run whose answers to replay")
    g.add_argument("--fallthrough", choices=live_names(),
                   help="cassette: answer what the cassette lacks with this backend")


def say_ignored(choice: Choice) -> None:
    """Each option the user gave that the chosen backend ignores, said once as a command starts."""
    from smalltown.shown import shown

    for line in choice.ignored():
        print(f"note: {shown(line)}", file=sys.stderr)


def backend_choice(args: argparse.Namespace) -> Choice:
    """The backend the command line asks for (cli/backends.py), with the options the user gave."""
    opts, given = options_given(args)
    return choose(args.backend, opts, given)


# the flag of each option whose flag is not its name with dashes
FLAGS = {"replay": "--from"}


def options_given(args: argparse.Namespace) -> tuple[BackendOptions, dict[str, str]]:
    """The options: flags first, then the user's config file (~/.config/smalltown/config.toml), then
    defaults; and each one the user gave (a flag or the config file, not a default), as given."""
    from smalltown.llm.models import config_path, user_config

    conf = user_config()
    flags = {k: getattr(args, k) for k in ("model", "ctx", "threads", "gpu_layers", "temperature", "seed",
                                           "base_url", "api_key_env", "embed_model", "timeout")}
    merged = {k: v if v is not None else conf.get(k) for k, v in flags.items()}
    if args.model is None and os.environ.get("SMALLTOWN_MODEL"):
        merged["model"] = None  # the environment outranks the file: default_model() finds it
    defaults = BackendOptions()
    opts = BackendOptions(**{k: v if v is not None else getattr(defaults, k) for k, v in merged.items()},
                          concurrency=args.concurrency if args.concurrency is not None else defaults.concurrency,
                          replay=args.replay, fallthrough=args.fallthrough,
                          repack=getattr(args, "repack", None) or defaults.repack)
    given = {}
    for k in (*flags, "concurrency", "replay", "fallthrough", "repack"):
        flag = getattr(args, k, None)
        if flag is not None:
            value = flag[0] if isinstance(flag, list) else f"{flag:g}" if isinstance(flag, float) else flag
            given[k] = f"{FLAGS.get(k, '--' + k.replace('_', '-'))} {value}"
        elif merged.get(k) is not None:
            given[k] = f"{k} = {json.dumps(conf[k])} (in {config_path()})"
    return opts, given


def int_in(low: int, high: int):
    """An argparse type: an integer from `low` to `high` (argparse names the option when it is not)."""
    def read(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text[:40]!r} is not an integer") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{value} is out of range (from {low} to {high})")
        return value
    return read


def seconds_in(low: float, high: float):
    """An argparse type: a number of seconds from `low` to `high`."""
    def read(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text[:40]!r} is not a number of seconds") from None
        if not low <= value <= high:  # (NaN fails this too)
            raise argparse.ArgumentTypeError(f"{value:g} is out of range (from {low:g} to {high:g} seconds)")
        return value
    return read



def http_address(text: str) -> str:
    """An argparse type: a server address (llm/endpoints.py url_problem); argparse names the option
    when it is not one."""
    from smalltown.llm.endpoints import url_problem

    wrong = url_problem(text)
    if wrong:
        raise argparse.ArgumentTypeError(wrong)
    return text
