"""`smalltown models [pull NAME]`: the local GGUF models, and the ones we recommend."""

from __future__ import annotations

import argparse
import shutil
import sys

from smalltown.llm.models import RECOMMENDED, default_model, local_models, models_dir
from smalltown.shown import shown


def models(args: argparse.Namespace) -> int:
    if getattr(args, "models_command", None) == "pull":
        return pull(args.name)
    d = models_dir()
    found = local_models()
    default = default_model()
    print(f"models directory: {d}{'' if d.is_dir() else ' (not created yet)'}")
    if found:
        for p in found:
            mark = " (default)" if default and p.resolve() == default.resolve() else ""
            print(f"  {shown(p.name):50} {p.stat().st_size / 1e9:5.1f} GB{mark}")
    else:
        print("  no GGUF models here yet")
    if default and default not in found:
        print(f"default from $SMALLTOWN_MODEL: {shown(default)}")
    print_cpu_paths()
    print("\nrecommended (4-bit quantised instruct models):")
    for r in RECOMMENDED:
        print(f"  {r.name:14} {r.size_gb:4.1f} GB  {r.note}")
    print("\nsmalltown models pull NAME   downloads one into the models directory")
    return 0


def print_cpu_paths() -> None:
    """Which CPU paths llama.cpp takes here by default (its features, weight repacking, AMX);
    `--repack` on a command changes them for that command."""
    from smalltown.llm.llama_model import cpu_paths

    try:
        paths = cpu_paths()
    except ImportError:
        print("\nllama.cpp: not installed (llama-cpp-python)")
        return
    print("\nllama.cpp on this machine (--repack auto|on|off changes it for a command):")
    for what, how in paths.describe():
        print(f"  {what + ':':18} {how}")


def pull(name: str) -> int:
    rec = next((r for r in RECOMMENDED if r.name == name), None)
    if rec is None:
        print(f"error: no recommended model {name!r} (known: {', '.join(r.name for r in RECOMMENDED)})",
              file=sys.stderr)
        return 2
    try:
        from huggingface_hub import hf_hub_download
    except ImportError:
        print("error: pulling models needs huggingface_hub: pip install 'smalltown[models]'", file=sys.stderr)
        return 1
    d = models_dir()
    d.mkdir(parents=True, exist_ok=True)
    free = shutil.disk_usage(d).free / 1e9
    if free < rec.size_gb * 1.1:
        print(f"error: {rec.name} needs {rec.size_gb:.1f} GB, {free:.1f} GB free in {d}", file=sys.stderr)
        return 1
    print(f"downloading {rec.file} from {rec.repo} into {d} ({rec.size_gb:.1f} GB)…")
    path = hf_hub_download(rec.repo, rec.file, local_dir=d)
    print(f"done: {path}\nit is now the default model (or pass --model {path})")
    return 0
