"""The user's folders, as the platform names them (platformdirs): where models and saves made
without --out live (the data folder), and where the config file is read from. On Linux these are
the XDG base directories: $XDG_DATA_HOME/smalltown (~/.local/share/smalltown) and
$XDG_CONFIG_HOME/smalltown (~/.config/smalltown); on macOS ~/Library/Application Support/smalltown,
on Windows the user's AppData folders. Read at each call: a test (or a user) may set them."""

from __future__ import annotations

from pathlib import Path

import platformdirs

APP = "smalltown"


def data_dir() -> Path:
    """The user's data folder for smalltown (Linux: $XDG_DATA_HOME/smalltown, by default
    ~/.local/share/smalltown)."""
    return Path(platformdirs.user_data_dir(APP, appauthor=False))


def config_dir() -> Path:
    """The user's config folder for smalltown (Linux: $XDG_CONFIG_HOME/smalltown, by default
    ~/.config/smalltown)."""
    return Path(platformdirs.user_config_dir(APP, appauthor=False))


def saves_dir() -> Path:
    """Where a run is saved when no --out names a file: not the current folder, which may be
    anywhere (a run started elsewhere would leave a saves/ folder behind there)."""
    return data_dir() / "saves"
