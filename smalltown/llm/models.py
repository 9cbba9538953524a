"""Where local models live, which one is used by default, and the models we recommend."""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from pathlib import Path

from smalltown.dirs import config_dir, data_dir
from smalltown.llm.backend import BackendUnavailable

GGUF_MAGIC = b"GGUF"


@dataclass(frozen=True)
class Recommended:
    name: str
    repo: str  # a Hugging Face repository
    file: str
    size_gb: float
    note: str


# Small instruct models that run on a laptop's CPU; ranked by what fits a 8-16 GB machine.
RECOMMENDED = (
    Recommended("qwen2.5-1.5b", "Qwen/Qwen2.5-1.5B-Instruct-GGUF", "qwen2.5-1.5b-instruct-q4_k_m.gguf", 1.1,
                "fast on any laptop; plain but coherent agents"),
    Recommended("qwen2.5-3b", "Qwen/Qwen2.5-3B-Instruct-GGUF", "qwen2.5-3b-instruct-q4_k_m.gguf", 2.1,
                "the sweet spot for 8 GB of memory"),
    Recommended("llama3.2-3b", "bartowski/Llama-3.2-3B-Instruct-GGUF", "Llama-3.2-3B-Instruct-Q4_K_M.gguf", 2.0,
                "another good 3B"),
    Recommended("qwen2.5-7b", "bartowski/Qwen2.5-7B-Instruct-GGUF", "Qwen2.5-7B-Instruct-Q4_K_M.gguf", 4.7,
                "better conversations; wants 16 GB and patience on a CPU"),
)


def models_dir() -> Path:
    """$SMALLTOWN_MODELS, else the user's data directory (~/.local/share/smalltown/models)."""
    if os.environ.get("SMALLTOWN_MODELS"):
        return Path(os.environ["SMALLTOWN_MODELS"]).expanduser()
    return data_dir() / "models"


def is_gguf(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(4) == GGUF_MAGIC
    except OSError:
        return False


def local_models() -> list[Path]:
    d = models_dir()
    return sorted(p for p in d.glob("*.gguf") if is_gguf(p)) if d.is_dir() else []


CONFIG_KEYS = {"model": str, "embed_model": str, "ctx": int, "threads": int, "gpu_layers": int,
               "temperature": float, "seed": int, "base_url": (str, list), "api_key_env": str,
               "theme": str}  # theme: the TUI's colours (tui/themes.py writes it)


class ConfigError(BackendUnavailable):
    """The user's config file has a mistake; the message names the file and line."""


def config_path() -> Path:
    return config_dir() / "config.toml"


def user_config() -> dict:
    """~/.config/smalltown/config.toml: the model and its settings, so flags need not repeat them."""
    path = config_path()
    if not path.exists():
        return {}
    text = path.read_text(encoding="utf-8")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: {e}") from None
    lines = text.splitlines()
    for key, value in data.items():
        line = next((i for i, l in enumerate(lines, 1) if l.strip().startswith(key)), 0)
        kind = CONFIG_KEYS.get(key)
        if kind is None:
            raise ConfigError(f"{path}:{line}: unknown key {key!r} (known: {', '.join(CONFIG_KEYS)})")
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            value = data[key] = float(value)
        if kind == (str, list):  # base_url: one server, or a list of them
            if not (isinstance(value, str) or isinstance(value, list) and value
                    and all(isinstance(v, str) for v in value)):
                raise ConfigError(f"{path}:{line}: {key} must be a str or a list of them")
            from smalltown.llm.endpoints import url_problem

            wrong = next(filter(None, map(url_problem, [value] if isinstance(value, str) else value)), None)
            if wrong:
                raise ConfigError(f"{path}:{line}: {key}: {wrong}")
        elif not isinstance(value, kind) or isinstance(value, bool):
            raise ConfigError(f"{path}:{line}: {key} must be a{'n' if kind is int else ''} {kind.__name__}")
    return data


def default_model() -> Path | None:
    """$SMALLTOWN_MODEL, else the config file's `model`, else the first GGUF in the models
    directory, else none."""
    if os.environ.get("SMALLTOWN_MODEL"):
        return Path(os.environ["SMALLTOWN_MODEL"]).expanduser()
    if user_config().get("model"):
        return Path(user_config()["model"]).expanduser()
    found = local_models()
    return found[0] if found else None


HOW_TO_ADD = ("no model configured: agents are answered by the scripted backend. To use a local "
              "model: `smalltown models pull qwen2.5-3b` (needs the 'models' extra), or put a GGUF "
              f"file in {models_dir()}, or pass --model PATH.gguf")
