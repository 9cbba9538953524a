"""A lighter save: vectors packed exactly, the call log's texts compressed (schemas 6 to 9; text
again from 10), both read back through the store; a schema-4 save upgraded on opening with its digest unchanged; `inspect`
reading one agent's rows instead of resuming the run, and printing what the run would."""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
import zlib
from pathlib import Path

import numpy as np
import pytest

from helpers import TINY, cli, query, save_info
from smalltown.cli.agents import plan_json
from smalltown.llm.embed import HashEmbedder
from smalltown.scripted import ScriptedBackend
from smalltown.sim.open import resume
from smalltown.store.errors import SaveError
from smalltown.store.packing import MAX_TEXT, pack_text, pack_vector, unpack_scores, unpack_text, unpack_vector
from smalltown.store.plans import joined
from smalltown.store.reader import Reader
from smalltown.store.save import PAGE_SIZE, Save
from smalltown.store.schema import SCHEMA_VERSION, TIME_FMT
from smalltown.world.load import load_world


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("compact") / "tiny.sqlite"
    cli("run", "--headless", TINY, "--until", "+6h", "--save", path, check=True)
    return path


def _as_schema_4(src: Path, dst: Path) -> None:
    """The save as smalltown wrote it at schema 4: bare float32 vectors, texts as text, plans in states."""
    shutil.copy(src, dst)
    conn = sqlite3.connect(dst)
    with conn:
        conn.executemany("UPDATE memories SET embedding=? WHERE id=?", [
            (unpack_vector(v).tobytes(), i) for i, v in conn.execute("SELECT id, embedding FROM memories")])
        conn.executemany("UPDATE embeddings SET vector=? WHERE text=?", [
            (unpack_vector(v).tobytes(), t) for t, v in conn.execute("SELECT text, vector FROM embeddings")])
        conn.executemany("UPDATE llm_calls SET prompt=?, raw_answer=? WHERE id=?", [
            (unpack_text(p), unpack_text(r), i) for i, p, r in conn.execute("SELECT id, prompt, raw_answer FROM llm_calls")])
        _unpack_v7(conn)
        # (and no plans apart, schema 5: each state holds its plan)
        conn.executemany("UPDATE agents SET state=? WHERE name=?", [
            (joined(st, plan), n) for n, st, plan in conn.execute(
                "SELECT a.name, a.state, p.plan FROM agents a LEFT JOIN plans p ON p.agent = a.name")])
        conn.execute("DROP TABLE plans")
        conn.execute("UPDATE meta SET value='4' WHERE key='schema_version'")
    conn.close()


def _unpack_v7(conn: sqlite3.Connection) -> None:
    """Parsed answers as text and retrievals' results as JSON, as schemas before 7 kept them."""
    conn.executemany("UPDATE llm_calls SET parsed_answer=? WHERE id=?", [
        (unpack_text(p), i) for i, p in conn.execute("SELECT id, parsed_answer FROM llm_calls")])
    conn.executemany("UPDATE retrievals SET results=? WHERE id=?", [
        (json.dumps(unpack_scores(r)), i) for i, r in conn.execute("SELECT id, results FROM retrievals")])


def _schema_4_digest(path: Path) -> str:
    """Reader.digest as schema 4 computed it, in SQL over the stored bytes."""
    h = hashlib.sha256()
    for q in ("SELECT key, value FROM meta WHERE key IN ('tick', 'game_time') ORDER BY key",
              "SELECT name, x, y, dest, action, address, state FROM agents ORDER BY name",
              "SELECT address, state FROM objects ORDER BY address",
              "SELECT agent, kind, description, created, last_accessed, importance, hex(embedding), "
              "evidence FROM memories ORDER BY id"):
        for row in query(path, q):
            h.update(json.dumps(row).encode())
            h.update(b"\n")
    return h.hexdigest()


# --- vectors ---------------------------------------------------------------------------------------


def test_a_hashed_vector_is_kept_sparse_and_reads_back_exactly():
    vec = HashEmbedder().embed(["Isabella is planning a Valentine's Day party at the cafe"])[0]
    blob = pack_vector(vec)
    assert blob[:1] == b"S" and len(blob) < len(vec.tobytes()) / 3  # ~43 of 256 values set
    back = unpack_vector(blob)
    assert back.dtype == np.float32 and back.tobytes() == vec.tobytes()


def test_a_dense_vector_is_kept_whole_and_exact():
    vec = np.random.default_rng(1).standard_normal(384).astype(np.float32)
    blob = pack_vector(vec)
    assert blob[:1] == b"D" and len(blob) == 1 + 4 * 384
    assert unpack_vector(blob).tobytes() == vec.tobytes()
    assert unpack_vector(pack_vector(np.zeros(256, np.float32))).tobytes() == bytes(1024)  # a text with no features


def test_a_schema_4_vector_still_reads():
    vec = np.arange(8, dtype=np.float32)
    assert unpack_vector(vec.tobytes()).tobytes() == vec.tobytes()


@pytest.mark.parametrize("blob", [
    b"", b"S", b"X" + bytes(8), b"S" + (4).to_bytes(2, "little") + (9).to_bytes(2, "little") + bytes(4),  # index past dim
    b"S" + (8).to_bytes(2, "little") + b"\2\0\1\0" + bytes(8),  # indices out of order
    b"S" + (8).to_bytes(2, "little") + b"\2\0\2\0" + bytes(8),  # one index twice
    b"S" + bytes(2) + b"\0\0" + bytes(4),  # no numbers at all
])
def test_a_crafted_vector_is_refused(blob: bytes):
    with pytest.raises(SaveError, match="not a vector"):
        unpack_vector(blob, "memories row 1: embedding")


def test_the_save_keeps_the_embedders_very_numbers(run: Path):
    save = Save.open(run, readonly=True)
    try:
        rows = [(r[3], r[7]) for r in save.memories()]
    finally:
        save.close()
    vectors = HashEmbedder().embed([d for d, _ in rows])
    assert rows and all(v.tobytes() == w.tobytes() for (_, v), w in zip(rows, vectors))
    stored, n = query(run, "SELECT sum(length(embedding)), count(*) FROM memories")[0]
    assert stored < n * 256 * 4 / 3  # a third of float32's or less


# --- the call log's texts ----------------------------------------------------------------------------


def test_a_long_text_is_compressed_a_short_one_kept():
    prompt = "You are Isabella Rodriguez. " * 40
    assert isinstance(pack_text(prompt), bytes) and unpack_text(pack_text(prompt)) == prompt
    assert pack_text("ok") == "ok" and pack_text(None) is None and unpack_text(None) is None


def test_a_compressed_text_too_large_to_unpack_is_refused():
    bomb = zlib.compress(b"a" * (MAX_TEXT + 10))
    with pytest.raises(SaveError, match="more than"):
        unpack_text(bomb, "llm_calls row 3")
    with pytest.raises(SaveError, match="not a compressed text"):
        unpack_text(b"\x00garbage", "llm_calls row 3")


def test_prompts_are_stored_as_text_and_read_as_text(run: Path):
    texts, calls = query(run, "SELECT sum(typeof(prompt) = 'text' AND typeof(raw_answer) = 'text' AND "
                              "typeof(parsed_answer) = 'text'), count(*) FROM llm_calls")[0]
    assert calls and texts == calls  # schema 10: as text, whatever their length
    reader = Save.open(run, readonly=True)
    try:
        r = Reader(reader.conn)
        call_id = 1
        detail = r.call_detail(call_id)
        assert isinstance(detail["prompt"], str) and len(detail["prompt"]) > 100
        assert r.call_sizes([call_id])[call_id][0] == len(detail["prompt"])
        assert all(isinstance(row[4], str) for row in r.recorded_calls())
    finally:
        reader.close()


# --- upgrading a schema-4 save -------------------------------------------------------------------------


def test_a_schema_4_save_reads_as_it_is_and_upgrades_with_the_same_digest(run: Path, tmp_path: Path):
    old = tmp_path / "v4.sqlite"
    _as_schema_4(run, old)
    before = _schema_4_digest(old)
    assert save_info(old)["digest"] == before == save_info(run)["digest"]  # read as it is (read-only)
    assert query(old, "SELECT value FROM meta WHERE key='schema_version'") == [("4",)]
    save = Save.open(old)  # opened to write: upgraded
    try:
        assert save.meta("schema_version") == SCHEMA_VERSION
        detail = Reader(save.conn).call_detail(1)
    finally:
        save.close()
    assert query(old, "SELECT count(*) FROM memories WHERE length(embedding) % 4 = 0") == [(0,)]
    assert query(old, "SELECT count(*) FROM llm_calls WHERE typeof(prompt) = 'blob'") == [(0,)]  # (schema 10)
    assert detail["prompt"] == unpack_text(query(run, "SELECT prompt FROM llm_calls WHERE id=1")[0][0])
    assert save_info(old)["digest"] == before
    assert cli("save", "check", old).returncode == 0


def test_an_upgraded_save_runs_on_as_the_packed_one_does(run: Path, tmp_path: Path):
    old, new = tmp_path / "v4.sqlite", tmp_path / "v5.sqlite"
    _as_schema_4(run, old)
    shutil.copy(run, new)
    for path in (old, new):
        cli("run", "--headless", path, "--until", "+1h", check=True)
    assert save_info(old)["digest"] == save_info(new)["digest"]
    q = "SELECT agent, query, results FROM retrievals ORDER BY id"
    assert query(old, q) == query(new, q)  # the same memories, scored the same


def test_a_new_save_has_large_pages_and_a_save_of_small_ones_runs_on_alike(run: Path, tmp_path: Path):
    """16 KiB pages (a 500-agent day's save 233 -> ~200 MB): a layout, not contents. A save made
    with SQLite's 4 KiB pages keeps them, and runs on to the same state."""
    assert PAGE_SIZE == 16384 and query(run, "PRAGMA page_size") == [(PAGE_SIZE,)]
    small, big = tmp_path / "small.sqlite", tmp_path / "big.sqlite"
    shutil.copy(run, big)
    shutil.copy(run, small)
    conn = sqlite3.connect(small, isolation_level=None)
    for pragma in ("journal_mode=DELETE", "page_size=4096", "VACUUM", "journal_mode=WAL"):
        conn.execute(pragma if pragma == "VACUUM" else f"PRAGMA {pragma}")
    conn.close()
    assert query(small, "PRAGMA page_size") == [(4096,)]
    for path in (small, big):
        cli("run", "--headless", path, "--until", "+1h", check=True)
    assert query(small, "PRAGMA page_size") == [(4096,)]
    assert save_info(small)["digest"] == save_info(big)["digest"]
    q = "SELECT agent, query, results FROM retrievals ORDER BY id"
    assert query(small, q) == query(big, q)


# --- inspect ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("agent", ["Isabella Rodriguez", "Klaus Mueller", "Maria Lopez"])
def test_inspect_prints_what_the_resumed_run_holds(run: Path, agent: str):
    world = load_world(TINY)
    sim = resume(run, ScriptedBackend(world.seed), readonly=True)
    try:
        a = sim.agent(agent)
        mind = a.mind
        mems = list(mind.memory)[-5:][::-1]
        expected = {
            "agent": agent, "game_time": sim.now.strftime(TIME_FMT),
            "summary": mind.persona.summary or mind.persona.description,
            "action": a.action.describe() if a.action else None, "plan": plan_json(mind, sim.now),
            "memories": [{"id": m.id, "kind": m.kind, "created": m.created.strftime(TIME_FMT),
                          "importance": m.importance, "description": m.description,
                          "evidence": list(m.evidence)} for m in mems],
            "memory_count": len(mind.memory),
        }
    finally:
        sim.close()
    got = json.loads(cli("inspect", run, agent.split()[0], "--memories", "5", "--json", check=True).stdout)
    assert got == expected and got["plan"]["blocks"] and got["memories"]


def test_inspect_reads_no_vector(run: Path, monkeypatch):
    import smalltown.store.packing as packing

    def refuse(*a, **k):
        raise AssertionError("inspect unpacked a vector")

    monkeypatch.setattr(packing, "unpack_vector", refuse)
    monkeypatch.setattr("smalltown.store.save_reads.unpack_vector", refuse)
    assert cli("inspect", run, "Klaus", "--json", check=True).returncode == 0


# --- schema 7: parsed answers compressed, retrievals' scores packed ---------------------------------------


def test_a_schema_6_save_upgrades_to_packed_answers_and_scores_that_read_the_same(run: Path, tmp_path: Path):
    old = tmp_path / "v6.sqlite"
    shutil.copy(run, old)
    conn = sqlite3.connect(old)
    with conn:
        _unpack_v7(conn)
        conn.execute("UPDATE meta SET value='6' WHERE key='schema_version'")
    conn.close()
    agents = [n for (n,) in query(run, "SELECT name FROM agents")]

    def seen(path: Path) -> tuple:
        reader = Save.open(path, readonly=True)
        try:
            r = Reader(reader.conn)
            return ([r.retrievals(a, limit=10 ** 6) for a in agents], [r.last_access_until(a, 10 ** 9) for a in agents],
                    [r.call_detail(i) for i in range(1, 40)], r.recorded_calls(), r.digest())
        finally:
            reader.close()

    before = seen(old)
    assert before == seen(run)  # the packed forms read as the JSON ones
    assert any(rows for rows in before[0]) and any(before[1])
    assert query(old, "SELECT count(*) FROM retrievals WHERE typeof(results) = 'blob'") == [(0,)]
    Save.open(old).close()  # opened to write: upgraded
    assert query(old, "SELECT value FROM meta WHERE key='schema_version'") == [(str(SCHEMA_VERSION),)]
    assert query(old, "SELECT count(*) FROM retrievals WHERE typeof(results) = 'text'") == [(0,)]
    assert query(old, "SELECT count(*) FROM llm_calls WHERE typeof(parsed_answer) = 'blob'") == [(0,)]  # (schema 10)
    assert seen(old) == before
    assert cli("save", "check", old).returncode == 0
    packed = query(run, "SELECT sum(length(results)) FROM retrievals")[0][0]
    unpacked = sum(len(json.dumps(unpack_scores(r))) for (r,) in query(run, "SELECT results FROM retrievals"))
    assert packed * 3 < unpacked


def test_a_packed_score_list_reads_back_as_its_json_and_odd_ones_stay_json():
    from smalltown.store.packing import pack_scores

    rows = [{"id": 7, "recency": 0.5, "importance": 1.0, "relevance": 0.2169, "total": 1.7169},
            {"id": 2 ** 40, "recency": 0.0, "importance": 0.0001, "relevance": 0.9999, "total": 3.1}]
    packed = pack_scores(rows)
    assert isinstance(packed, bytes) and len(packed) == 1 + 24 * 2
    assert json.dumps(unpack_scores(packed)) == json.dumps(rows)
    for odd in ({**rows[0], "total": -0.0}, {**rows[0], "total": 1e9}, {**rows[0], "total": float("nan")}):
        assert isinstance(pack_scores([odd]), str)
    with pytest.raises(SaveError):
        unpack_scores(b"R" + b"\0" * 23)
