"""What the command line's commands share: the backend flags and the options read from them."""

from __future__ import annotations

import argparse
import json
import os
import sys

from smalltown.cli.backends import BackendOptions, Choice, choose


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
