"""`smalltown save info` (issue 14) says a save's settings, who answered it (backend, model) and
its size on disk, as text and as JSON."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from helpers import TINY, cli, save_info


def test_save_info_gives_settings_backend_model_and_file_size(tmp_path: Path) -> None:
    save = tmp_path / "s.sqlite"
    cli("run", "--headless", TINY, "--until", "+10m", "--save", save, "--set", "conversation_rounds=3", check=True)
    info = save_info(save)
    assert info["settings"] == {"conversation_rounds": 3}
    assert info["backend"] == "scripted" and info["model"] == "scripted"
    assert info["file_size"] == save.stat().st_size > 0  # (closed: no write-ahead log left beside it)
    text = cli("save", "info", save, check=True).stdout
    assert "settings  conversation_rounds=3 (others default)" in text
    assert "backend  scripted" in text and "none: the scripted stand-in answered" in text
    assert f"({save.stat().st_size:,} bytes)" in text


def test_save_info_names_the_backend_that_answered_last(tmp_path: Path) -> None:
    save = tmp_path / "s.sqlite"
    cli("run", "--headless", TINY, "--until", "+10m", "--save", save, check=True)
    conn = sqlite3.connect(save)
    with conn:  # as if the run had gone on with a model
        conn.execute("UPDATE llm_calls SET backend = 'llama', model = 'qwen2.5-3b-instruct-q4_k_m.gguf' "
                     "WHERE id = (SELECT max(id) FROM llm_calls)")
    conn.close()
    info = save_info(save)
    assert (info["backend"], info["model"]) == ("llama", "qwen2.5-3b-instruct-q4_k_m.gguf")
    assert info["settings"] == {}
    assert "settings  all default" in cli("save", "info", save, check=True).stdout


def test_save_info_of_a_save_without_calls_says_none(tmp_path: Path) -> None:
    save = tmp_path / "s.sqlite"
    cli("run", "--headless", TINY, "--until", "+10m", "--save", save, check=True)
    conn = sqlite3.connect(save)
    with conn:
        conn.execute("DELETE FROM llm_calls")
    conn.close()
    info = save_info(save)
    assert info["backend"] is None and info["model"] is None
    assert "backend  none (no model calls)" in cli("save", "info", save, check=True).stdout
