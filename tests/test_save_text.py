"""The call log is readable by any SQLite tool (schema 10): prompts and answers are text in the
file, read as str by plain sqlite3 and sqlite-utils; a schema-9 save's compressed texts read the
same through the store as they are, and become text when the save is opened to be written."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
import sqlite_utils

from helpers import TINY, cli, query
from smalltown.store.packing import pack_text, unpack_text
from smalltown.store.reader import Reader
from smalltown.store.save import Save
from smalltown.store.schema import SCHEMA_VERSION


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("text") / "tiny.sqlite"
    cli("run", "--headless", TINY, "--until", "+3h", "--save", path, "--backend", "scripted", check=True)
    return path


def test_plain_sqlite3_reads_a_prompt_and_its_answers_as_str(run: Path):
    conn = sqlite3.connect(f"{run.as_uri()}?mode=ro", uri=True)
    try:
        rows = conn.execute("SELECT task, prompt, raw_answer, parsed_answer FROM llm_calls ORDER BY id").fetchall()
    finally:
        conn.close()
    assert rows
    for task, prompt, raw, parsed in rows:
        assert isinstance(prompt, str) and isinstance(raw, str) and isinstance(parsed, str)
    assert any(len(prompt) > 500 and "Answer with one JSON object" in prompt for _, prompt, _, _ in rows)


def test_sqlite_utils_reads_a_prompt_as_str_and_the_store_reads_the_same(run: Path):
    db = sqlite_utils.Database(run)
    try:
        first = next(db["llm_calls"].rows_where("id = ?", [1]))
        assert db["llm_calls"].columns_dict["prompt"] is str
    finally:
        db.close()
    assert isinstance(first["prompt"], str) and first["prompt"].strip()
    save = Save.open(run, readonly=True)
    try:
        detail = Reader(save.conn).call_detail(1)
    finally:
        save.close()
    assert (detail["prompt"], detail["raw_answer"], detail["parsed_answer"]) == (
        first["prompt"], first["raw_answer"], first["parsed_answer"])


def _as_schema_9(src: Path, dst: Path) -> None:
    """The save as smalltown wrote it at schema 9: each text zlib-compressed when that was shorter."""
    shutil.copy(src, dst)
    conn = sqlite3.connect(dst)
    with conn:
        conn.executemany("UPDATE llm_calls SET prompt=?, raw_answer=?, parsed_answer=? WHERE id=?", [
            (pack_text(p), pack_text(r), pack_text(a), i)
            for i, p, r, a in conn.execute("SELECT id, prompt, raw_answer, parsed_answer FROM llm_calls")])
        conn.execute("UPDATE meta SET value='9' WHERE key='schema_version'")
    conn.close()


def _calls_seen(path: Path) -> tuple:
    save = Save.open(path, readonly=True)
    try:
        r = Reader(save.conn)
        n = save.count("llm_calls")
        return [r.call_detail(i) for i in range(1, n + 1)], r.recorded_calls(), r.call_sizes(range(1, n + 1))
    finally:
        save.close()


def test_a_schema_9_save_reads_the_same_and_is_unpacked_when_opened_to_write(run: Path, tmp_path: Path):
    old = tmp_path / "v9.sqlite"
    _as_schema_9(run, old)
    blobs = query(old, "SELECT count(*) FROM llm_calls WHERE typeof(prompt) = 'blob'")[0][0]
    assert blobs > 0  # (long prompts were compressed)
    expected = _calls_seen(run)
    assert _calls_seen(old) == expected  # read as it is: unpacked by the store, the file unchanged
    assert query(old, "SELECT value FROM meta WHERE key='schema_version'") == [("9",)]
    Save.open(old).close()  # opened to write: migrated to text
    assert query(old, "SELECT value FROM meta WHERE key='schema_version'") == [(str(SCHEMA_VERSION),)]
    assert query(old, "SELECT count(*) FROM llm_calls WHERE typeof(prompt) = 'blob' OR "
                      "typeof(raw_answer) = 'blob' OR typeof(parsed_answer) = 'blob'") == [(0,)]
    assert query(old, "SELECT prompt, raw_answer, parsed_answer FROM llm_calls ORDER BY id") == \
        query(run, "SELECT prompt, raw_answer, parsed_answer FROM llm_calls ORDER BY id")
    assert _calls_seen(old) == expected
    assert cli("save", "check", old).returncode == 0
    assert cli("run", "--headless", old, "--until", "+30m").returncode == 0  # and it runs on


def test_the_migration_unpacks_in_windows_past_the_first(tmp_path: Path, run: Path):
    """More calls than one window of the migration (1,000 rows): every one is unpacked."""
    old = tmp_path / "many.sqlite"
    _as_schema_9(run, old)
    conn = sqlite3.connect(old)
    with conn:
        prompt = pack_text("Task: " + "a long prompt " * 100)
        assert isinstance(prompt, bytes)
        conn.executemany("INSERT INTO llm_calls(tick, time, agent, task, prompt, raw_answer, parsed_answer) "
                         "SELECT tick, time, agent, task, ?, raw_answer, parsed_answer FROM llm_calls WHERE id = 1",
                         [(prompt,)] * 2500)
    conn.close()
    Save.open(old).close()
    assert query(old, "SELECT count(*), sum(typeof(prompt) = 'text') FROM llm_calls WHERE id > 100") == [
        (query(old, "SELECT count(*) FROM llm_calls WHERE id > 100")[0][0],) * 2]
    assert unpack_text(prompt) == query(old, "SELECT prompt FROM llm_calls ORDER BY id DESC LIMIT 1")[0][0]
