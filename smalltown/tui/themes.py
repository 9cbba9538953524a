"""Textual's themes: the palette's "Theme" entry picks one (App.theme), and the choice is kept in
the user's config file (config.toml, beside the model's settings) as `theme = "NAME"`, so the next
TUI, live or replay, opens in it. The file is the user's: one line is added or replaced, the
rest is left as written."""

from __future__ import annotations

import json
import re

from smalltown.llm.models import ConfigError, config_path, user_config

THEME_LINE = re.compile(r"^\s*theme\s*=")


def saved_theme() -> tuple[str | None, str]:
    """The theme the config file names, or None; and what is wrong with the file, if anything
    (a run has said so already when it read the model's settings: here it costs only the colours)."""
    try:
        theme = user_config().get("theme")
    except ConfigError as e:
        return None, str(e)
    return theme, ""


def remember_theme(name: str) -> None:
    """Write `theme = "NAME"` into the config file: the line replaced if there is one, else added
    (the file and its folder made if there are none)."""
    path = config_path()
    line = f"theme = {json.dumps(name)}"  # a TOML basic string: JSON's escapes are TOML's
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    at = next((i for i, text in enumerate(lines) if THEME_LINE.match(text)), None)
    if at is None:
        lines.append(line)
    else:
        lines[at] = line
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
