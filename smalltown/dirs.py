"""The user's folders, as the XDG base directory specification names them: where models and
saves made without --out live (the data folder), and where the config file is read from."""

from __future__ import annotations

import os
from pathlib import Path


def data_dir() -> Path:
    """$XDG_DATA_HOME/smalltown, by default ~/.local/share/smalltown."""
    return Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share") / "smalltown"


def config_dir() -> Path:
    """$XDG_CONFIG_HOME/smalltown, by default ~/.config/smalltown."""
    return Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "smalltown"


def saves_dir() -> Path:
    """Where a run is saved when no --out names a file: not the current folder, which may be
    anywhere (a run started elsewhere would leave a saves/ folder behind there)."""
    return data_dir() / "saves"
