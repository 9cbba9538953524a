"""Save schema 4: conversations as rows of their own, each model call's fallback reason, and what
reads them (save info, check, strip, rewind and fork, replay, eval). Every save here is written by
hand through the Save API (tests/handmade.py), as the simulation writes it, without running one."""

from __future__ import annotations

import json
import shutil
import sqlite3
from dataclasses import replace
from datetime import datetime
from pathlib import Path

import pytest

from handmade import ISABELLA, KLAUS, MARIA, HandSave, as_schema_3
from smalltown.cli.main import main
from smalltown.sim.check import check_save
from smalltown.store import conversations as conv
from smalltown.store.records import TickChanges
from smalltown.store.schema import reference
from smalltown.store.save import SCHEMA_VERSION, Save, SaveError

FALLBACK_NOTE = "fallback to scripted: no JSON object in the answer"


def cli(capsys, *argv) -> tuple[int, str]:
    rc = main([str(a) for a in argv])
    out = capsys.readouterr()
    return rc, out.out + out.err


def rows(path: Path, sql: str, *args) -> list[tuple]:
    c = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return c.execute(sql, args).fetchall()
    finally:
        c.close()


@pytest.fixture
def town(tmp_path: Path) -> HandSave:
    """Isabella and Maria talk at 06:10 (tick 60), Maria and Klaus at 06:50 (tick 300); a snapshot
    at 07:00 (tick 360); Isabella and Klaus talk at 07:30 (tick 540). Calls on the way, some
    answered by a fallback."""
    h = HandSave(tmp_path / "town.sqlite")
    told = h.memory(ISABELLA, "observation", "the party is on Valentine's Day", 0)
    h.at(1, memories=[told], calls=[h.call(ISABELLA, "plan"), h.call(MARIA, "plan", "invalid", FALLBACK_NOTE),
                                    h.call(KLAUS, "plan", "too long", "error: 5000 tokens")])
    h.talk(60, ISABELLA, MARIA, [(ISABELLA, "Morning! There is a party."), (MARIA, "Oh, when?"),
                                 (ISABELLA, "On Valentine's Day.")],
           reason="Maria Lopez is making coffee", tells={2: [told[0].id]},
           relationships={ISABELLA: "Maria is a dear housemate", MARIA: "Isabella runs the cafe"})
    h.at(61, calls=[h.call(MARIA, "react", "cut off"), h.call(MARIA, "react", "invalid"), h.call(KLAUS, "react")])
    h.talk(300, MARIA, KLAUS, [(MARIA, "Hi Klaus."), (KLAUS, "Hello.")], reason="Klaus Mueller is reading")
    h.at(360, snapshot=True)
    h.talk(540, ISABELLA, KLAUS, [(ISABELLA, "Coming to the party?"), (KLAUS, "Maybe.")], place="the street")
    h.at(541, calls=[h.call(KLAUS, "react", "invalid")])
    yield h
    h.close()


# --- the table ----------------------------------------------------------------------------------


def test_conversations_read_back_as_written_with_the_ids_add_conversations_gave(town: HandSave):
    convs = town.save.conversations()
    assert [c.id for c in convs] == [1, 2, 3]
    c = convs[0]
    assert (c.tick, c.time, c.end_time) == (60, "2023-02-13 06:10:00", "2023-02-13 06:12:00")
    assert (c.place, c.initiator, c.other, c.reason) == ("Hobbs Cafe: cafe", ISABELLA, MARIA,
                                                         "Maria Lopez is making coffee")
    assert c.participants == (ISABELLA, MARIA) and c.other_side(MARIA) == ISABELLA
    assert [(x.speaker, x.text) for x in c.lines] == [(ISABELLA, "Morning! There is a party."),
                                                     (MARIA, "Oh, when?"), (ISABELLA, "On Valentine's Day.")]
    assert c.lines[2].tells == (1,) and c.lines[0].tells == () and c.lines[0].facts == ()
    assert c.relationships == {ISABELLA: "Maria is a dear housemate", MARIA: "Isabella runs the cafe"}
    owners = town.save.memory_owners()
    assert set(c.chats) == {ISABELLA, MARIA} and all(owners[m] == n for n, m in c.chats.items())
    # each said event names its conversation's row
    said = rows(town.path, "SELECT json_extract(data, '$.conversation'), count(*) FROM events WHERE kind = 'said' "
                           "GROUP BY 1")
    assert said == [(1, 3), (2, 2), (3, 2)]


def test_commit_returns_one_id_per_conversation_in_order(tmp_path: Path):
    h = HandSave(tmp_path / "s.sqlite")
    one = conv.ConversationRow(0, 1, "2023-02-13 06:00:10", "2023-02-13 06:01:00", "p", ISABELLA, MARIA)
    first = h.save.commit(TickChanges(1, "2023-02-13 06:00:10", conversations=(one,) * 3))
    then = h.save.commit(TickChanges(2, "2023-02-13 06:00:20", conversations=(replace(one, tick=2),)))
    assert first == [1, 2, 3] and then == [4]
    assert h.save.count("conversations") == h.save.conversation_count() == 4
    h.close()


def test_conversations_by_tick_range_agent_and_limit(town: HandSave):
    s = town.save
    assert [c.tick for c in s.conversations(until=299)] == [60]
    assert [c.tick for c in s.conversations(until=300)] == [60, 300]
    assert [c.tick for c in s.conversations(since=60)] == [300, 540]
    assert [c.tick for c in s.conversations(since=60, until=300)] == [300]
    assert [c.tick for c in s.conversations(agent=KLAUS)] == [300, 540]
    assert [c.tick for c in s.conversations(agent=ISABELLA, until=539)] == [60]
    assert [c.tick for c in s.conversations(limit=2)] == [300, 540]  # the newest, oldest first
    assert s.conversations(agent="Nobody") == []
    assert conv.conversation(s.conn, 2).other == KLAUS and conv.conversation(s.conn, 99) is None


def test_a_new_save_is_schema_4_with_the_table_and_the_call_columns(town: HandSave):
    assert town.save.meta("schema_version") == SCHEMA_VERSION >= 4
    made = {(kind, name) for kind, name, _, _ in reference()}  # what a new save has
    assert ("table", "conversations") in made and ("index", "idx_conversations_tick") in made
    cols = {r[1]: r for r in town.save.conn.execute("PRAGMA table_info(llm_calls)")}
    assert "key" in cols and cols["fallback"][3] == 1 and cols["fallback"][4] == "''"  # NOT NULL DEFAULT ''


# --- migrating a schema-3 save --------------------------------------------------------------------


@pytest.fixture
def old(tmp_path: Path) -> Path:
    """A schema-3 save as an older smalltown wrote it: said events (two lines between Maria and
    Klaus at one tick, three between Isabella and Maria at another, then Isabella and Klaus at the
    same tick), the chat memories the two made then (Maria two at tick 60: one with each), the
    talking actions they took up, and a fallback only noted."""
    h = HandSave(tmp_path / "old.sqlite")
    h.at(10, calls=[h.call(MARIA, "plan", note=FALLBACK_NOTE), h.call(MARIA, "plan", note="3 ratings for 2 memories"),
                    h.call(KLAUS, "plan")])

    def said(a, b, text, place="Willow Cottage: kitchen"):
        return (a, "said", f"{a}: {text}", json.dumps({"to": b, "place": place}))

    def started(a, b, end):
        return (a, "started", f"{a}: talking with {b}", json.dumps({"activity": f"talking with {b}", "end": end}))

    mems = [h.memory(MARIA, "chat", f"{MARIA} talked with {KLAUS} about bread", 30),
            h.memory(KLAUS, "chat", f"{KLAUS} talked with {MARIA} about bread", 30)]
    h.at(30, memories=mems, events=[said(MARIA, KLAUS, "Bread?"), said(KLAUS, MARIA, "Yes please."),
                                    started(MARIA, KLAUS, "2023-02-13 06:06:00"),
                                    started(KLAUS, MARIA, "2023-02-13 06:06:00")])
    mems = [h.memory(MARIA, "chat", f"{MARIA} talked with {KLAUS} again", 60),  # not this one: it names Klaus
            h.memory(MARIA, "chat", f"{MARIA} talked with {ISABELLA} about the party", 60),
            h.memory(ISABELLA, "chat", f"{ISABELLA} talked with {MARIA} about the party", 60)]
    h.at(60, memories=mems, snapshot=True, events=[
        said(ISABELLA, MARIA, "A party!"), said(MARIA, ISABELLA, "When?"), said(ISABELLA, MARIA, "Tuesday."),
        said(ISABELLA, KLAUS, "You too, Klaus.", "Hobbs Cafe: cafe"),
        started(ISABELLA, MARIA, "2023-02-13 06:11:00")])
    h.at(400, snapshot=True, events=[said(KLAUS, ISABELLA, "Thanks for the invite.")])
    h.close()
    as_schema_3(h.path)
    return h.path


def test_a_schema_3_save_read_as_it_is_has_its_conversations_from_said_events(old: Path):
    save = Save.open(old, readonly=True)
    try:
        assert save.meta("schema_version") == 3
        convs = save.conversations()
        assert [(c.id, c.tick, c.participants, len(c.lines)) for c in convs] == [
            (0, 30, (MARIA, KLAUS), 2), (0, 60, (ISABELLA, MARIA), 3), (0, 60, (ISABELLA, KLAUS), 1),
            (0, 400, (KLAUS, ISABELLA), 1)]
        assert convs[1].lines[2].text == "Tuesday." and convs[2].place == "Hobbs Cafe: cafe"
        assert save.conversations(agent=KLAUS, until=60)[-1].tick == 60 and save.conversation_count() == 4
        assert save.call_figures()["by_reason"] == {"invalid": 1}  # the note says it
    finally:
        save.close()


def test_migrating_a_schema_3_save_rebuilds_its_conversations(old: Path):
    save = Save.open(old)
    try:
        assert save.meta("schema_version") == SCHEMA_VERSION
        convs = save.conversations()
        assert [(c.id, c.tick, c.participants) for c in convs] == [
            (1, 30, (MARIA, KLAUS)), (2, 60, (ISABELLA, MARIA)), (3, 60, (ISABELLA, KLAUS)),
            (4, 400, (KLAUS, ISABELLA))]
        bread, party, invite, thanks = convs
        texts = {m[0]: m[3] for m in save.memories()}
        assert {n: texts[m] for n, m in bread.chats.items()} == {
            MARIA: f"{MARIA} talked with {KLAUS} about bread", KLAUS: f"{KLAUS} talked with {MARIA} about bread"}
        assert {n: texts[m] for n, m in party.chats.items()} == {
            MARIA: f"{MARIA} talked with {ISABELLA} about the party",
            ISABELLA: f"{ISABELLA} talked with {MARIA} about the party"}
        assert invite.chats == {} and thanks.chats == {}  # none made then is left for them
        assert (bread.end_time, party.end_time, invite.end_time, thanks.end_time) == (
            "2023-02-13 06:06:00", "2023-02-13 06:11:00", invite.time, thanks.time)  # the talking action's end
        assert all(c.reason == "" and c.relationships == {} for c in convs)
        assert all(x.tells == () and x.facts == () for c in convs for x in c.lines)
        said = [json.loads(d)["conversation"] for (d,) in save.conn.execute(
            "SELECT data FROM events WHERE kind = 'said' ORDER BY id")]
        assert said == [1, 1, 2, 2, 2, 3, 4]
        calls = save.conn.execute("SELECT note, key, fallback FROM llm_calls ORDER BY id").fetchall()
        assert calls == [(FALLBACK_NOTE, None, "invalid"), ("3 ratings for 2 memories", None, ""), ("", None, "")]
    finally:
        save.close()
    assert check_save(old).ok, check_save(old).problems


def test_a_migrated_save_rewinds_to_an_old_snapshot_cutting_conversations_by_tick(old: Path):
    save = Save.open(old)
    try:
        assert "conversations" not in save.snapshot(60)["last_ids"]  # written by the older smalltown
        dropped = save.rewind(60)
        assert dropped["conversations"] == 1 and dropped["events"] == 1
        assert [c.tick for c in save.conversations()] == [30, 60, 60]
    finally:
        save.close()


def test_the_schema_1_fixture_still_opens_and_migrates(tmp_path: Path):
    from helpers import ROOT

    path = tmp_path / "v1.sqlite"
    shutil.copy(ROOT / "tests" / "fixtures" / "tiny-v1.sqlite", path)
    save = Save.open(path)
    try:
        assert save.meta("schema_version") == SCHEMA_VERSION and save.conversations() == []
        assert save.call_figures()["calls"] == 27
    finally:
        save.close()


# --- rewind and fork ----------------------------------------------------------------------------


def test_a_rewind_drops_the_conversations_after_the_snapshot(town: HandSave):
    snap = town.save.snapshot(360)
    assert snap["last_ids"]["conversations"] == 2
    dropped = town.save.rewind(360)
    assert dropped["conversations"] == 1 and dropped["llm_calls"] == 1
    assert [c.tick for c in town.save.conversations()] == [60, 300]
    assert town.save.meta("tick") == 360


def test_a_fork_has_the_conversations_up_to_its_snapshot(town: HandSave, tmp_path: Path):
    from smalltown.sim.fork import fork

    town.close()
    r = fork(town.path, datetime(2023, 2, 13, 7, 20), tmp_path / "fork.sqlite")
    assert r.tick == 360 and r.dropped["conversations"] == 1
    save = Save.open(r.path, readonly=True)
    try:
        assert [c.id for c in save.conversations()] == [1, 2]
    finally:
        save.close()
    assert check_save(r.path).ok


# --- save strip and save check ------------------------------------------------------------------


def test_strip_keeps_the_conversations_and_drops_the_call_log(town: HandSave, tmp_path: Path, capsys):
    town.close()
    out = tmp_path / "shared.sqlite"
    rc, text = cli(capsys, "save", "strip", town.path, "-o", out)
    assert rc == 0 and "dropped 7 llm_calls" in text, text
    assert rows(out, "SELECT count(*) FROM conversations") == [(3,)]
    assert rows(out, "SELECT count(*) FROM llm_calls") == [(0,)]
    assert check_save(out).ok


def test_a_clean_hand_made_save_passes_the_check(town: HandSave):
    town.close()
    report = check_save(town.path)
    assert report.ok, report.problems
    assert report.counts["conversations"] == 3


BAD = [
    ("UPDATE conversations SET initiator = 'Nobody' WHERE id = 1",
     "conversations row 1: initiator: 'Nobody' is not an agent of the world"),
    ("UPDATE conversations SET other = initiator WHERE id = 2",
     "conversations row 2: other: 'Maria Lopez' is the initiator too"),
    ("UPDATE conversations SET lines = '{\"a\": 1}' WHERE id = 1", "conversations row 1: lines: not a JSON array"),
    ("UPDATE conversations SET lines = 'not json' WHERE id = 1", "conversations row 1: lines: not valid JSON"),
    ("UPDATE conversations SET lines = json_set(lines, '$[1].speaker', 'Klaus Mueller') WHERE id = 1",
     "conversations row 1: lines[1].speaker: 'Klaus Mueller' is not one of the two who talked"),
    ("UPDATE conversations SET lines = json_set(lines, '$[0].text', 42) WHERE id = 1",
     "conversations row 1: lines[0].text: 42 is not text"),
    ("UPDATE conversations SET lines = json_set(lines, '$[0].tells', json('[123456]')) WHERE id = 1",
     "conversations row 1: lines[0].tells: memory 123456 does not exist"),
    ("UPDATE conversations SET lines = json_set(lines, '$[0].facts', json('[\"moon landing\"]')) WHERE id = 1",
     "conversations row 1: lines[0].facts: 'moon landing' is not a fact of the world"),
    ("UPDATE conversations SET lines = json_set(lines, '$[0].text', printf('%.20000c', 'x')) WHERE id = 1",
     "conversations row 1: lines[0].text: 20,000 characters (at most 10,000)"),
    ("UPDATE conversations SET chats = json_set(chats, '$.\"Maria Lopez\"', 999999) WHERE id = 1",
     "conversations row 1: chats['Maria Lopez']: memory 999999 does not exist"),
    ("UPDATE conversations SET chats = json_set(chats, '$.\"Maria Lopez\"', 1) WHERE id = 1",
     "conversations row 1: chats['Maria Lopez']: memory 1 is Isabella Rodriguez's, not Maria Lopez's"),
    ("UPDATE conversations SET chats = '{\"Klaus Mueller\": 2}' WHERE id = 1",
     "conversations row 1: chats['Klaus Mueller']: not one of the two who talked"),
    ("UPDATE conversations SET relationships = '[]' WHERE id = 2",
     "conversations row 2: relationships: not a JSON object"),
    ("UPDATE conversations SET relationships = '{\"Maria Lopez\": 7}' WHERE id = 2",
     "conversations row 2: relationships['Maria Lopez']: 7 is not text"),
    ("UPDATE conversations SET reason = printf('%.20000c', 'x') WHERE id = 2",
     "conversations row 2: reason: 20,000 characters (at most 10,000)"),
    ("UPDATE conversations SET time = 'yesterday' WHERE id = 3",
     "conversations row 3: time: not a game time (YYYY-MM-DD HH:MM:SS)"),
    ("UPDATE conversations SET time = '2023-03-01 00:00:00', end_time = '2023-03-01 00:01:00' WHERE id = 3",
     "conversations row 3: time: 2023-03-01 00:00:00 is after the save's clock"),
    ("UPDATE conversations SET end_time = '2023-02-13 06:00:00' WHERE id = 3",
     "conversations row 3: end_time: 2023-02-13 06:00:00 is before its start (2023-02-13 07:30:00)"),
    ("UPDATE conversations SET tick = 99999 WHERE id = 3",
     "conversations: rows from tick 99999, after the save's tick 541"),
]


@pytest.mark.parametrize("sql, message", BAD, ids=[m.split(": ", 1)[1][:40] for _, m in BAD])
def test_check_names_the_table_row_and_field_of_a_bad_conversation(town: HandSave, sql: str, message: str, capsys):
    town.close()
    c = sqlite3.connect(town.path)
    with c:
        c.execute(sql)
    c.close()
    rc, out = cli(capsys, "save", "check", town.path)
    lines = out.strip().splitlines()
    assert rc == 1 and len(lines) == 1 and lines[0].startswith(f"{town.path}: {message}"), out


def test_oversized_json_is_refused_without_parsing_it(town: HandSave):
    town.close()
    c = sqlite3.connect(town.path)
    with c:
        c.execute("UPDATE conversations SET lines = json_array(printf('%.1000001c', 'x')) WHERE id = 1")
    c.close()
    (problem,) = check_save(town.path).problems
    assert problem.startswith("conversations row 1: lines: 1,000,005 characters of JSON (at most 1,000,000)")


def test_a_save_with_the_new_table_is_not_refused_but_code_or_an_index_on_it_is(town: HandSave):
    town.close()
    Save.open(town.path, readonly=True).close()
    c = sqlite3.connect(town.path)
    with c:  # someone's index: a UNIQUE one would make a run's writes fail, so none is taken
        c.execute("CREATE INDEX mine ON conversations (initiator)")
    with pytest.raises(SaveError, match="holds an index 'mine' that smalltown does not make"):
        Save.open(town.path, readonly=True)
    with c:
        c.execute("DROP INDEX mine")
        c.execute("CREATE TRIGGER evil AFTER INSERT ON conversations BEGIN DELETE FROM memories; END")
    c.close()
    with pytest.raises(SaveError, match="holds a trigger 'evil'"):
        Save.open(town.path, readonly=True)


# --- counting fallbacks: save info -----------------------------------------------------------------


def test_save_info_counts_calls_and_fallbacks_by_task_and_reason(town: HandSave, capsys):
    town.close()
    rc, out = cli(capsys, "save", "info", town.path, "--json")
    info = json.loads(out)
    assert rc == 0 and info["conversations"] == 3 and info["llm_calls"] == 7
    calls = info["calls"]
    assert (calls["calls"], calls["fallbacks"], calls["too_long"]) == (7, 5, 1)
    assert calls["by_reason"] == {"invalid": 3, "cut off": 1, "too long": 1}
    assert calls["by_task"] == {
        "plan": {"calls": 3, "fallbacks": 2, "by_reason": {"invalid": 1, "too long": 1}},
        "react": {"calls": 4, "fallbacks": 3, "by_reason": {"invalid": 2, "cut off": 1}}}
    rc, out = cli(capsys, "save", "info", town.path)
    lines = out.splitlines()
    assert rc == 0
    assert " llm_calls  7 (5 answered by a fallback; 1 prompt too long for the model's window)\n" in out
    assert " fallbacks  invalid 3, cut off 1, too long 1\n" in out
    assert any(line.split() == "plan 2 of 3 calls: invalid 1, too long 1".split() for line in lines)
    assert any(line.split()[:5] == ["react", "3", "of", "4", "calls:"] for line in lines)
    assert "conversations  3" in out


def test_save_info_on_an_old_save_counts_its_noted_fallbacks_as_invalid(old: Path, capsys):
    rc, out = cli(capsys, "save", "info", old, "--json")
    info = json.loads(out)
    assert rc == 0 and info["schema_version"] == 3 and info["conversations"] == 4
    assert info["calls"]["fallbacks"] == 1 and info["calls"]["by_reason"] == {"invalid": 1}
    rc, out = cli(capsys, "save", "info", old)
    assert "llm_calls  3 (1 answered by a fallback; 0 prompts too long" in out
    assert rows(old, "SELECT value FROM meta WHERE key = 'schema_version'") == [("3",)]  # read, not migrated


def test_save_info_with_no_fallback_says_so(tmp_path: Path, capsys):
    h = HandSave(tmp_path / "plain.sqlite")
    h.at(1, calls=[h.call(MARIA, "plan")])
    h.close()
    rc, out = cli(capsys, "save", "info", h.path)
    assert rc == 0 and "llm_calls  1 (none answered by a fallback)" in out and "fallbacks" not in out


# --- readers: replay, eval -------------------------------------------------------------------------


def test_history_reads_conversations_from_the_table_and_an_old_save_from_its_said_events(town: HandSave, old: Path):
    from smalltown.sim.history import History

    town.close()
    with History(town.path) as h:
        convs = h.conversations_until(300)
        assert [c.id for c in convs] == [1, 2] and convs[0].reason == "Maria Lopez is making coffee"
        assert convs[0].relationships[MARIA] == "Isabella runs the cafe"
        assert [c.id for c in h.conversations_until(h.last_tick, agent=KLAUS)] == [2, 3]
    with History(old) as h:  # read-only: not migrated
        convs = h.conversations_until(60)
        assert [(c.tick, c.participants) for c in convs] == [(30, (MARIA, KLAUS)), (60, (ISABELLA, MARIA)),
                                                             (60, (ISABELLA, KLAUS))]


def test_eval_knows_who_a_chat_was_with_from_the_conversation(town: HandSave, old: Path):
    from smalltown.eval.town import read_town

    chats = {c.id: c.chats for c in town.save.conversations()}
    # the events of the tick are no help: only the conversation row says who the chat was with
    town.save.conn.execute("DELETE FROM events WHERE kind = 'said'")
    t = read_town(town.save)
    assert t.partner[chats[1][ISABELLA]] == MARIA and t.partner[chats[1][MARIA]] == ISABELLA
    assert t.partner[chats[3][KLAUS]] == ISABELLA
    ro = Save.open(old, readonly=True)  # an old save read as it is: from its said events
    try:
        t = read_town(ro)
        by_text = {m.description: t.partner[m.id] for m in t.memories if m.kind == "chat"}
        assert by_text[f"{MARIA} talked with {KLAUS} about bread"] == KLAUS
        assert by_text[f"{ISABELLA} talked with {MARIA} about the party"] == MARIA
    finally:
        ro.close()


def test_every_eval_report_carries_the_call_figures(town: HandSave, tmp_path: Path, capsys):
    town.close()
    out = tmp_path / "report"
    rc, text = cli(capsys, "eval", "town", town.path, "--out", out)
    assert rc == 0, text
    assert "model calls (the run)" in text and "7 model calls; 5 answered by a" in text  # the summary (it wraps)
    data = json.loads((out / "report.json").read_text())
    assert data["calls"]["fallbacks"] == 5 and data["calls"]["by_task"]["react"]["by_reason"]["cut off"] == 1
    md = (out / "report.md").read_text()
    assert "## Model calls" in md and "| react | 4 | 3 | invalid 2, cut off 1 |" in md
    html = (out / "report.html").read_text()
    assert "<h2>Model calls</h2>" in html and "<td>invalid 2, cut off 1</td>" in html


def test_the_ablate_and_interview_reports_carry_the_call_figures():
    from smalltown.eval.report import ablate_doc, calls_rows, calls_section, Doc

    figures = {"calls": 10, "fallbacks": 2, "too_long": 1, "by_reason": {"invalid": 1, "too long": 1},
               "by_task": {"react": {"calls": 10, "fallbacks": 2, "by_reason": {"invalid": 1, "too long": 1}}}}
    asked = {"calls": 4, "fallbacks": 0, "too_long": 0, "by_reason": {}, "by_task": {
        "interview": {"calls": 4, "fallbacks": 0, "by_reason": {}}}}
    doc = Doc("interviews")
    calls_section(doc, {"calls": figures, "asked_calls": asked})
    md = doc.markdown()
    assert "The run: 10 model calls; 2 answered by a fallback (invalid 1, too long 1); 1 prompt too long" in md
    assert "Asking the agents: 4 model calls; 0 answered by a fallback; 0 prompts too long" in md
    assert "| interview | 4 | 0 |  |" in md
    assert calls_rows({"calls": figures}) == [["model calls (the run)", "10 model calls; 2 answered by a fallback "
                                              "(invalid 1, too long 1); 1 prompt too long for the model's window"]]
    result = {"world": "w", "start": "2023-02-13 06:00:00", "end": "2023-02-13 07:00:00", "agents": ["A", "B"],
              "diffusion": [], "coordination": [], "notes": [], "asked": False, "calls": figures,
              "relationships": {"density_start": 0, "density_end": 0, "edges_start": [], "edges_end": [],
                                "knows_start": 0, "knows_end": 0, "pairs": 2}}
    md = ablate_doc({"full": result, "no-memory": result}, "label", "llama").markdown()
    assert "| model calls (the run) | 10 model calls;" in md
    assert "| full | 10 | 2 | invalid 1, too long 1 | 1 |" in md
