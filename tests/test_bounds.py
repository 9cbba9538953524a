"""Issue 12: what comes in from the command line, a world, a pack or a save is bounded before it is
used. Settings have ranges; game times are bounded; nesting is bounded before tomllib or json
recurse; `unpack` installs through no link and with ordinary permissions; edits of an object's
state are held to the world file's rule. Each is refused with an error naming the setting, the
argument or the file and line, leaves nothing behind, and prints no traceback."""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
import stat
import zipfile
from dataclasses import fields
from datetime import datetime
from pathlib import Path

import pytest

from helpers import ROOT, TINY
from smalltown.cli.main import main
from smalltown.sim.clock import clock_near, parse_when
from smalltown.config import Settings, SettingsError
from smalltown.world.errors import WorldError
from smalltown.world.load import load_world, load_world_text
from smalltown.world.pack import pack, unpack

STOVE = "Willow Cottage:kitchen:stove"


def cli(capsys, *argv) -> tuple[int, str]:
    rc = main([str(a) for a in argv])
    out = capsys.readouterr()
    text = out.out + out.err
    assert "Traceback" not in text
    return rc, text


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def world_file(tmp_path: Path, edit=lambda text: text, name: str = "w.toml") -> Path:
    """The tiny world, edited, naming the tiny map by its absolute path."""
    text = TINY.read_text().replace('"../maps/tiny.toml"', json.dumps(str(ROOT / "maps" / "tiny.toml")))
    path = tmp_path / name
    path.write_text(edit(text))
    return path


def line_of(path: Path, start: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if line.startswith(start))


@pytest.fixture(scope="module")
def short_save(tmp_path_factory) -> Path:
    """Two game minutes of the tiny town (copy it before changing it)."""
    path = tmp_path_factory.mktemp("bounds") / "short.sqlite"
    assert main(["run", "--headless", str(TINY), "--until", "+2m", "--save", str(path), "--backend", "scripted"]) == 0
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return path


def copy_of(save: Path, tmp_path: Path, name: str = "copy.sqlite") -> Path:
    out = tmp_path / name
    out.write_bytes(save.read_bytes())
    return out


def meta(path: Path, key: str):
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return json.loads(conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()[0])
    finally:
        conn.close()


def set_meta(path: Path, key: str, raw_json: str) -> None:
    conn = sqlite3.connect(path)
    conn.execute("UPDATE meta SET value=? WHERE key=?", (raw_json, key))
    conn.commit()
    conn.close()


# --- 1. settings have ranges ------------------------------------------------------------------


def test_every_setting_has_a_finite_range_that_holds_its_default_and_booleans_are_strict():
    from smalltown.config import ranges

    numeric = {f.name for f in fields(Settings) if f.type in ("int", "float")}
    assert set(ranges()) == numeric
    for name, (low, high) in ranges().items():
        assert low <= getattr(Settings(), name) <= high and abs(high) < 1e6, name
        with pytest.raises(SettingsError, match=f"setting {name}: .* out of range"):
            Settings().override(**{name: str(high * 2 + 1)})
    for bad in (1, 0, "yes", "on", "1", None):
        with pytest.raises(SettingsError, match="setting reflection: .* not true or false"):
            Settings().override(reflection=bad)
    assert Settings().override(reflection="False", vision_radius="6").changes() == {"reflection": False,
                                                                                  "vision_radius": 6}
    with pytest.raises(SettingsError, match="vision_radius"):
        Settings(vision_radius=-1)  # built directly, too
    with pytest.raises(SettingsError, match="vision_radius: a number of 401 digits is out of range"):
        Settings().override(vision_radius=10 ** 400)
    with pytest.raises(SettingsError, match="recency_decay: a number of 401 digits is out of range"):
        Settings().override(recency_decay=10 ** 400)  # (float() of it would overflow)


def test_the_settings_table_of_the_world_format_doc_is_the_codes():
    from smalltown.config import ranges

    doc = (ROOT / "docs" / "world-format.md").read_text()
    rows = {}
    for line in doc.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == 4 and cells[0].startswith("`") and cells[1] in ("int", "float", "bool", "names", "choice"):
            rows[cells[0].strip("`")] = cells
    assert set(rows) == {f.name for f in fields(Settings)}
    for f in fields(Settings):
        name, kind, default, bounds = rows[f.name]
        if kind == "names":  # a list of names: its default, and the names it may hold
            assert f.type == "tuple[str, ...]" and default == ", ".join(f.default) and bounds == "any of those"
            continue
        if kind == "choice":  # one of the names given
            assert f.type == "str" and default == f.default and bounds == ", ".join(f.metadata["choices"])
            continue
        assert kind == f.type and default == str(f.default).lower(), f.name
        if kind != "bool":
            low, high = ranges()[f.name]
            assert bounds == f"{low:g} to {high:,g}", f.name


@pytest.mark.parametrize("item", ["chat_cooldown_hours=inf", "react_cooldown_hours=1e300", "weight_recency=nan",
                                  "settle_hours=-1", "conversation_rounds=100000", "dialogue_rounds=100000"])
def test_a_set_option_out_of_range_is_refused_naming_the_setting_and_leaves_no_save(item, tmp_path, capsys):
    out = tmp_path / "s.sqlite"
    rc, text = cli(capsys, "run", "--headless", TINY, "--until", "+1h", "--backend", "scripted", "--save", out,
                   "--set", item)
    name = item.split("=")[0]
    # a renamed setting is named as written, with its new name
    assert rc == 2 and re.search(rf"setting {name}( \(now \w+\))?: ", text) and "out of range" in text
    assert not out.exists()


def test_a_world_setting_out_of_range_is_a_world_problem_at_its_line(tmp_path, capsys):
    path = world_file(tmp_path, lambda t: t.replace("seed = 1\n", "seed = 1\n\n[settings]\nchat_cooldown_hours = inf\n"
                                                                  "vision_radius = 1e300\nreflection = 1\n", 1))
    rc, text = cli(capsys, "world", "check", path)
    assert rc == 1
    assert f"w.toml:{line_of(path, 'chat_cooldown_hours')}: setting chat_cooldown_hours (now conversation_cooldown_hours): inf is out of range" in text
    assert f"w.toml:{line_of(path, 'vision_radius')}: setting vision_radius: 1e+300 is not an integer" in text
    assert f"w.toml:{line_of(path, 'reflection')}: setting reflection: 1 is not true or false" in text


def test_a_pack_whose_world_has_a_setting_out_of_range_is_refused(tmp_path, capsys):
    good = pack(world_file(tmp_path), tmp_path / "good.smalltown-world")
    with zipfile.ZipFile(good) as zf:
        members = [(i, zf.read(i)) for i in zf.infolist()]
    world = next(body for i, body in members if i.filename.startswith("worlds/")).decode()
    world = world.replace("seed = 1\n", "seed = 1\n[settings]\nreact_cooldown_hours = 1e300\n", 1)
    manifest = json.loads(members[0][1])
    manifest["world"]["sha256"] = hashlib.sha256(world.encode()).hexdigest()
    bad = tmp_path / "bad.smalltown-world"
    with zipfile.ZipFile(bad, "w", zipfile.ZIP_DEFLATED) as zf:
        for info, body in members:
            zf.writestr(info, json.dumps(manifest) if info.filename == "manifest.json"
                        else world if info.filename.startswith("worlds/") else body)
    for argv in (("world", "check", bad), ("world", "unpack", bad, "--to", tmp_path / "to")):
        rc, text = cli(capsys, *argv)
        assert rc == (1 if argv[:2] == ("world", "check") else 2)  # (a check fails; the others refuse it)
        assert "setting react_cooldown_hours: 1e+300 is out of range" in text
    assert not (tmp_path / "to").exists()


@pytest.mark.parametrize("stored", ['{"chat_cooldown_hours": Infinity}', '{"react_cooldown_hours": 1e300}',
                                    '{"weight_recency": NaN}', '[1, 2]'])
def test_a_save_with_settings_out_of_range_is_refused_naming_the_setting(stored, short_save, tmp_path, capsys):
    save = copy_of(short_save, tmp_path)
    set_meta(save, "settings", stored)
    before = sha(save)
    name = stored.split('"')[1] if '"' in stored else "settings"
    rc, text = cli(capsys, "save", "check", save)
    assert rc == 1 and "meta settings: " in text and name in text
    for argv in (("run", "--headless", save, "--until", "+1h", "--backend", "scripted"),
                 ("edit-object", save, STOVE, "burning"),
                 ("whisper", save, "Isabella", "Go for a walk", "--backend", "scripted"),
                 ("interview", save, "Isabella", "How are you?", "--backend", "scripted")):
        rc, text = cli(capsys, *argv)
        assert rc == 2 and "meta settings: " in text and name in text, (argv, text)
    assert sha(save) == before


def test_settings_from_a_save_are_checked_when_it_is_opened_directly(short_save, tmp_path):
    from smalltown.scripted import ScriptedBackend
    from smalltown.sim.open import resume
    from smalltown.store.save import SaveError

    save = copy_of(short_save, tmp_path)
    set_meta(save, "settings", '{"chat_cooldown_hours": Infinity}')
    with pytest.raises(SaveError, match=r"meta settings: setting chat_cooldown_hours \(now conversation_cooldown_hours\): inf is out of range"):
        resume(save, ScriptedBackend(1))


# --- 2. times are bounded -----------------------------------------------------------------------


def test_parse_when_refuses_times_out_of_range_as_it_refuses_unreadable_ones():
    now = datetime(2023, 2, 13, 6)
    for text in ("+99999999d", "day 99999999999", "+" + "9" * 5000 + "d", "9999-12-31 23:00", "0999-01-01",
                 "-99999999d", "+99999999999999999999h"):
        with pytest.raises(ValueError, match="out of range: game times are from 1000-01-01 to before 4000-01-01"):
            parse_when(text, now, now)
    assert parse_when("+1d6h", now) == datetime(2023, 2, 14, 12)
    assert parse_when("-1h", now) == datetime(2023, 2, 13, 5)
    assert clock_near("17:30", now) == datetime(2023, 2, 13, 17, 30)
    with pytest.raises(ValueError, match="out of range"):
        clock_near("23:00", datetime(3999, 12, 31, 23, 30))


def test_a_world_starting_out_of_range_is_a_world_problem_at_its_line(tmp_path, capsys):
    path = world_file(tmp_path, lambda t: t.replace("start = 2023-02-13T06:00:00", "start = 9999-12-31T23:00:00", 1))
    rc, text = cli(capsys, "world", "check", path)
    assert rc == 1 and f"w.toml:{line_of(path, 'start')}: start: 9999-12-31 23:00 is out of range" in text
    out = tmp_path / "s.sqlite"
    rc, text = cli(capsys, "run", "--headless", path, "--until", "+1h", "--backend", "scripted", "--save", out)
    assert rc == 2 and "is out of range" in text and not out.exists()
    path = world_file(tmp_path, lambda t: t.replace("end = 2023-02-14T19:00:00", "end = 9999-02-14T19:00:00", 1))
    rc, text = cli(capsys, "world", "check", path)
    assert rc == 1 and f"w.toml:{line_of(path, 'end = ')}: gatherings.0.end: 9999-02-14 19:00 is out of range" in text


def test_until_and_at_out_of_range_name_the_argument(short_save, tmp_path, capsys):
    save = copy_of(short_save, tmp_path)
    before = sha(save)
    rc, text = cli(capsys, "run", "--headless", save, "--until", "+99999999d", "--backend", "scripted")
    assert rc == 2 and "--until: the time '+99999999d' is out of range" in text
    rc, text = cli(capsys, "run", "--headless", save, "--until", "12345-01-01", "--backend", "scripted")
    assert rc == 2 and "--until: " in text
    rc, text = cli(capsys, "fork", save, "--at", "day 99999999999", "--to", tmp_path / "f.sqlite")
    assert rc == 2 and "--at: the time 'day 99999999999' is out of range" in text
    assert not (tmp_path / "f.sqlite").exists() and sha(save) == before


@pytest.mark.parametrize("until", [["--until", "-1h"], ["--until=-1h"], ["--until", "2023-02-13 05:00"]])
def test_until_before_the_saves_time_says_so_and_exits_non_zero(until, short_save, tmp_path, capsys):
    save = copy_of(short_save, tmp_path)
    tick = meta(save, "tick")
    rc, text = cli(capsys, "run", "--headless", save, *until, "--backend", "scripted")
    assert rc == 2 and "--until: " in text and "before the save's time 2023-02-13 06:02:00: nothing to run" in text
    assert meta(save, "tick") == tick


def test_fork_takes_a_negative_relative_time_without_an_equals_sign(short_save, tmp_path, capsys):
    rc, text = cli(capsys, "fork", short_save, "--at", "-1m", "--to", tmp_path / "f.sqlite")
    assert rc == 0 and (tmp_path / "f.sqlite").exists()


# --- 3. deep nesting ---------------------------------------------------------------------------


def test_too_deep_skips_strings_and_comments_and_names_line_and_column():
    from smalltown.world.toml_lines import MAX_NESTING, too_deep

    assert too_deep("x = " + "[" * 2000 + "]" * 2000) == (1, 4 + MAX_NESTING + 1)
    assert too_deep('a = "[[[[" # [[[[\nb = \'[[[\'\nc = """\\"""[[[["""\n' + "[" * 40) == (4, MAX_NESTING + 1)
    assert too_deep("x = " + "[" * MAX_NESTING + "]" * MAX_NESTING) is None
    assert too_deep('{"a": ' * 30000) == (1, 6 * MAX_NESTING + 1)
    for f in ("worlds/smallville.toml", "maps/smallville.toml", "worlds/gullhaven.toml"):
        assert too_deep((ROOT / f).read_text(), 6) is None


@pytest.mark.parametrize("value", ["[" * 2000 + "]" * 2000, "{a=" * 2000 + "1" + "}" * 2000], ids=["arrays", "tables"])
def test_a_world_value_nested_2000_deep_is_a_world_problem_at_its_line(value, tmp_path, capsys):
    path = world_file(tmp_path, lambda t: t.replace("seed = 1\n", f"seed = 1\ndeep = {value}\n", 1))
    line = line_of(path, "deep = ")
    for argv in (("world", "check", path),
                 ("run", "--headless", path, "--until", "+1h", "--backend", "scripted", "--save", tmp_path / "s.sqlite")):
        rc, text = cli(capsys, *argv)
        assert rc == (1 if argv[:2] == ("world", "check") else 2)  # (a check fails; the others refuse it)
        assert f"w.toml:{line}:" in text and "nested too deeply" in text
    assert not (tmp_path / "s.sqlite").exists()
    with pytest.raises(WorldError, match="nested too deeply"):  # a world text held by a save or pack
        load_world_text("saved.toml", path.read_text(), "map.toml", (ROOT / "maps" / "tiny.toml").read_text())


def test_a_pack_manifest_nested_30000_deep_is_refused(tmp_path, capsys, monkeypatch):
    good = pack(world_file(tmp_path), tmp_path / "good.smalltown-world")
    bad = tmp_path / "deep.smalltown-world"
    with zipfile.ZipFile(good) as src, zipfile.ZipFile(bad, "w", zipfile.ZIP_DEFLATED) as out:
        for info in src.infolist():
            out.writestr(info, "[" * 30000 + "]" * 30000 if info.filename == "manifest.json" else src.read(info))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    for argv in (("world", "check", bad), ("world", "unpack", bad, "--to", work),
                 ("run", "--headless", bad, "--until", "+1h", "--backend", "scripted", "--save", work / "s.sqlite")):
        rc, text = cli(capsys, *argv)
        assert rc == (1 if argv[:2] == ("world", "check") else 2)  # (a check fails; the others refuse it)
        assert "deep.smalltown-world:manifest.json:1:33: nested too deeply" in text, text
    assert list(work.iterdir()) == []


# --- 4. smaller ones ---------------------------------------------------------------------------


def test_unpack_refuses_a_symlinked_worlds_or_maps_folder(tmp_path, capsys):
    packed = pack(world_file(tmp_path), tmp_path / "t.smalltown-world")
    for folder in ("worlds", "maps"):
        to, elsewhere = tmp_path / f"to-{folder}", tmp_path / f"elsewhere-{folder}"
        to.mkdir()
        elsewhere.mkdir()
        (to / folder).symlink_to(elsewhere)
        rc, text = cli(capsys, "world", "unpack", packed, "--to", to)
        assert rc == 2 and f"{to / folder}: a symbolic link or not a folder: refusing to install through it" in text
        assert list(elsewhere.iterdir()) == [] and not (to / ("maps" if folder == "worlds" else "worlds")).exists()


def test_unpack_installs_files_readable_as_the_umask_says(tmp_path):
    packed = pack(world_file(tmp_path), tmp_path / "t.smalltown-world")
    assert stat.S_IMODE(packed.stat().st_mode) == 0o644 & ~_umask()
    old = os.umask(0o022)
    try:
        world = unpack(packed, tmp_path / "a")
        assert stat.S_IMODE(world.stat().st_mode) == 0o644
        assert stat.S_IMODE((tmp_path / "a" / "maps" / "tiny.toml").stat().st_mode) == 0o644
        os.umask(0o077)
        assert stat.S_IMODE(unpack(packed, tmp_path / "b").stat().st_mode) == 0o600
    finally:
        os.umask(old)


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


@pytest.mark.parametrize("value", ["-3", "0", "100000", "x"])
def test_concurrency_out_of_range_is_a_usage_error(value, capsys):
    code = main(["run", "--headless", str(TINY), "--until", "+1h", "--concurrency", value])
    err = capsys.readouterr().err
    assert code == 2 and "'--concurrency': " in err and "Traceback" not in err


def test_from_a_folder_is_not_a_save(short_save, tmp_path, capsys):
    save = copy_of(short_save, tmp_path)
    before = sha(save)
    for backend in (("--backend", "cassette"), ()):
        rc, text = cli(capsys, "run", "--headless", save, "--until", "+1h", *backend, "--from", tmp_path)
        assert rc == 2 and f"{tmp_path}: not a save file" in text and "disk I/O" not in text
    assert sha(save) == before


# --- 5. edits are held to the world file's rule ---------------------------------------------------


BAD_STATES = {"": "empty", "   ": "blank", "on\nfire": "'\\n' is not allowed", "on\x1b]0;owned\x07fire": "'\\x1b' is not allowed",
              "\x1b[2J": "'\\x1b' is not allowed", "x" * 201: "at most 200 characters"}


def test_the_world_loader_and_an_edit_share_one_rule_for_a_state(tmp_path):
    from smalltown.world.schema import object_state_problem

    for state, expected in BAD_STATES.items():
        assert expected in object_state_problem(state)
        path = world_file(tmp_path, lambda t: t.replace('state = "full"', f"state = {json.dumps(state)}", 1))
        assert json.dumps(state) in path.read_text()
        with pytest.raises(WorldError) as e:
            load_world(path)
        assert any(expected in p.message for p in e.value.problems), e.value.problems
    assert object_state_problem("burning") is None and object_state_problem("x" * 200) is None


def test_edit_object_refuses_a_bad_state_and_leaves_the_save_as_it_was(short_save, tmp_path, capsys):
    save = copy_of(short_save, tmp_path)
    before = sha(save)
    for state, expected in BAD_STATES.items():
        rc, text = cli(capsys, "edit-object", save, STOVE, state)
        assert rc == 2 and "error: STATE " in text and expected in text
        assert "\x1b" not in text and "\x07" not in text
    assert sha(save) == before and not Path(f"{save}-wal").exists()
    rc, text = cli(capsys, "edit-object", save, STOVE, "burning")
    assert rc == 0
    rc, text = cli(capsys, "save", "check", save)
    assert rc == 0


def test_simulation_edit_object_refuses_a_bad_state(tiny_sim):
    for state, expected in BAD_STATES.items():
        with pytest.raises(ValueError, match="^the state ") as e:
            tiny_sim.edit_object(STOVE, state)
        assert expected in str(e.value)
    assert tiny_sim.objects[STOVE] == "idle"


@pytest.mark.asyncio
async def test_the_tui_edit_form_refuses_a_bad_state():
    from textual.app import App
    from textual.widgets import Input, Static

    from smalltown.tui.screens.forms import EditObjectScreen

    results: list = []

    class Host(App):
        def on_mount(self) -> None:
            self.push_screen(EditObjectScreen({STOVE: "idle"}, STOVE), results.append)

    app = Host()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        screen = app.screen
        field = screen.query_one("#state", Input)
        field.value = "on\x1b]0;owned\x07fire"
        field.focus()
        await pilot.press("enter")
        await pilot.pause()
        error = screen.query_one("#error", Static).content
        assert "is not allowed here" in str(getattr(error, "plain", error)) and results == []
        field.value = "burning"
        await pilot.press("enter")
        await pilot.pause()
        assert results == [(STOVE, "burning")]


def test_renamed_settings_are_read_under_their_old_names() -> None:
    """World files, `--set` and saves from before the glossary's renames keep working."""
    from smalltown.config import RENAMED, Settings

    for old, new in RENAMED.items():
        value = getattr(Settings(), new) + 1
        assert getattr(Settings().override(**{old: str(value)}), new) == value
        assert getattr(Settings().saved({old: value}), new) == value
        assert old not in Settings().changes() and not hasattr(Settings(), old)
