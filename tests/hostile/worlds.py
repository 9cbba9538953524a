"""The hostile worlds and packs of the corpus (tests/hostile/make.py writes these too).

    python tests/hostile/worlds.py DIR

Each case is a world file (kind "world") or a world pack (kind "pack") a stranger might send,
breaking one rule. tests/test_hostile_worlds.py runs each through every command that reads a
world or a pack and checks it is refused, quickly, with a message naming the file (and its line
where the loader can: `expect` holds it), and that nothing is written anywhere.

Built from tests/worlds_bad/ok_base.toml and map_ok.toml, as make.py's cases are.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
BASE = ROOT / "tests" / "worlds_bad" / "ok_base.toml"
BASE_MAP = ROOT / "tests" / "worlds_bad" / "map_ok.toml"


@dataclass(frozen=True)
class Case:
    name: str  # the file written, under DIR
    kind: str  # "world" or "pack"
    expect: str  # a substring of the error (with the line, ":N:", where the loader can name one)
    rule: str  # what it tests
    names: str = ""  # the file the message names, when not the case's own (its map)


CASES: list[Case] = []
MAKERS: dict[str, Callable[[Path], None]] = {}


def case(name: str, kind: str, expect: str, rule: str, names: str = ""):
    def register(fn: Callable[[Path], None]) -> Callable[[Path], None]:
        CASES.append(Case(name, kind, expect, rule, names))
        MAKERS[name] = fn
        return fn
    return register


# --- helpers -----------------------------------------------------------------------------------


def base_world(map_ref: str = "../maps/mini.toml") -> str:
    return BASE.read_text(encoding="utf-8").replace('map = "map_ok.toml"', f'map = "{map_ref}"')


def base_map() -> str:
    return BASE_MAP.read_text(encoding="utf-8")


def replaced(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, f"the base world changed: {old!r} not found once"
    return text.replace(old, new)


def line_of(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


def world(path: Path, text: str | bytes, map_text: str | None = None, map_name: str = "mini.toml") -> None:
    """A world file under DIR/worlds/, its map under DIR/maps/."""
    maps = path.parent.parent / "maps"
    maps.mkdir(exist_ok=True)
    (maps / map_name).write_text(base_map() if map_text is None else map_text, encoding="utf-8")
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))


def sha(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


def manifest(world_b: bytes, map_b: bytes, **extra: object) -> bytes:
    return json.dumps({"format": 1, "name": "A minimal world",
                       "world": {"path": "worlds/mini.toml", "sha256": sha(world_b)},
                       "map": {"path": "maps/mini.toml", "sha256": sha(map_b)}, **extra}).encode()


def info(name: str, mode: int = stat.S_IFREG | 0o644) -> zipfile.ZipInfo:
    i = zipfile.ZipInfo(name, (1980, 1, 1, 0, 0, 0))
    i.external_attr = mode << 16
    i.compress_type = zipfile.ZIP_DEFLATED
    return i


def write_zip(path: Path, members: list[tuple[str | zipfile.ZipInfo, bytes]]) -> None:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members:
            zf.writestr(info(name) if isinstance(name, str) else name, data)


def pack_of(path: Path, world_text: str | bytes | None = None, map_text: str | bytes | None = None) -> None:
    """A pack whose manifest's digests match its world and map (so the next rule is the one tested)."""
    w = world_text if world_text is not None else base_world()
    m = map_text if map_text is not None else base_map()
    wb = w if isinstance(w, bytes) else w.encode("utf-8")
    mb = m if isinstance(m, bytes) else m.encode("utf-8")
    write_zip(path, [("manifest.json", manifest(wb, mb)), ("worlds/mini.toml", wb), ("maps/mini.toml", mb)])


def nested(depth: int, open_: str = "[", close: str = "]") -> str:
    return open_ * depth + close * depth


AGENT = ('{{ name = "A{k}", age = 30, traits = "calm", description = "A{k} keeps the park", '
         'home = "Park", spawn = [12, 1] }}')


# --- worlds: the bytes of the file -------------------------------------------------------------


@case("worlds/deep-value.toml", "world", "deep-value.toml:7:", "a value nested 2,000 deep is refused, not a RecursionError")
def _(path: Path) -> None:
    world(path, replaced(base_world(), "seed = 1", f"seed = {nested(2000)}"))


@case("worlds/deep-inline-table.toml", "world", "nested too deeply", "inline tables nested 5,000 deep")
def _(path: Path) -> None:
    world(path, replaced(base_world(), "seed = 1", "seed = " + "{a = " * 5000 + "1" + "}" * 5000))


@case("worlds/bad-utf8.toml", "world", "not UTF-8 text", "a world that is not UTF-8 is refused")
def _(path: Path) -> None:
    world(path, replaced(base_world(), "patient, kind", "patient, kind").encode().replace(b"patient", b"pat\xff\xfeent"))


@case("worlds/bom.toml", "world", "byte-order mark", "a byte-order mark is named, not 'Invalid statement'")
def _(path: Path) -> None:
    world(path, b"\xef\xbb\xbf" + base_world().encode())


@case("worlds/nul.toml", "world", "nul.toml:31:", "a NUL byte is refused at its line")
def _(path: Path) -> None:
    text = base_world()
    world(path, replaced(text, "patient, kind", "patient\x00kind"))


@case("worlds/crlf-error.toml", "world", "crlf-error.toml:31: agents.0.traits", "CRLF line ends keep line numbers right")
def _(path: Path) -> None:
    text = replaced(base_world(), 'traits = "patient, kind"', "traits = 7")
    world(path, text.replace("\n", "\r\n"))


@case("worlds/cr-only.toml", "world", "TOML syntax", "old Mac line ends (CR alone) are refused")
def _(path: Path) -> None:
    world(path, base_world().replace("\n", "\r"))


@case("worlds/huge-50mb.toml", "world", "too large", "a 50 MB world is refused without reading it all")
def _(path: Path) -> None:
    world(path, base_world() + ("#" * 1023 + "\n") * 50_000)


@case("worlds/fifo.toml", "world", "not a regular file", "a named pipe as a world does not hang")
def _(path: Path) -> None:
    world(path.with_name("unused.toml"), base_world())
    path.with_name("unused.toml").unlink()
    os.mkfifo(path)


@case("worlds/dir.toml", "world", "not a regular file", "a folder named like a world is refused")
def _(path: Path) -> None:
    path.mkdir()


# --- worlds: their values ----------------------------------------------------------------------


@case("worlds/start-9999.toml", "world", "start-9999.toml:5: start: 9999-02-13 06:00 is out of range",
      "a start in year 9999 is out of range")
def _(path: Path) -> None:
    world(path, replaced(base_world(), "start = 2023-02-13T06:00:00", "start = 9999-02-13T06:00:00"))


@case("worlds/settings-inf.toml", "world", "settings-inf.toml:47: setting chat_cooldown_hours",
      "an infinite setting in [settings] names the setting and its line")
def _(path: Path) -> None:
    world(path, base_world() + "\n[settings]\nchat_cooldown_hours = inf\n")


@case("worlds/settings-nan.toml", "world", "react_cooldown_hours", "a NaN setting is refused")
def _(path: Path) -> None:
    world(path, base_world() + "\n[settings]\nreact_cooldown_hours = nan\n")


@case("worlds/settings-1e300.toml", "world", "react_cooldown_hours", "a setting of 1e300 is out of its range")
def _(path: Path) -> None:
    world(path, base_world() + "\n[settings]\nreact_cooldown_hours = 1e300\n")


@case("worlds/settings-list.toml", "world", "settings.chat_cooldown_hours", "a setting that is a list is refused")
def _(path: Path) -> None:
    world(path, base_world() + "\n[settings]\nchat_cooldown_hours = [1, 2]\n")


@case("worlds/step-zero.toml", "world", "step-zero.toml:6: step_seconds", "a step of 0 seconds is refused")
def _(path: Path) -> None:
    world(path, replaced(base_world(), "step_seconds = 10", "step_seconds = 0"))


@case("worlds/step-huge.toml", "world", "step-huge.toml:6: step_seconds", "a step of 10^40 seconds is refused")
def _(path: Path) -> None:
    world(path, replaced(base_world(), "step_seconds = 10", f"step_seconds = {10 ** 40}"))


@case("worlds/seed-huge.toml", "world", "seed-huge.toml:7: seed: Input should be less than or equal to 4294967295", "a seed numpy cannot hold is refused")
def _(path: Path) -> None:
    world(path, replaced(base_world(), "seed = 1", f"seed = {2 ** 70}"))


@case("worlds/spawn-in-wall.toml", "world", "spawn-in-wall.toml:34: agent 'John Lin': spawn [0, 0] is in a wall",
      "an agent on an unwalkable tile is refused")
def _(path: Path) -> None:
    world(path, replaced(base_world(), "spawn = [6, 2]", "spawn = [0, 0]"))


@case("worlds/spawn-off-map.toml", "world", "is outside the map", "an agent far off the map is refused")
def _(path: Path) -> None:
    world(path, replaced(base_world(), "spawn = [6, 2]", f"spawn = [-5, {10 ** 30}]"))


@case("worlds/object-in-no-arena.toml", "world", "object 'bed' is outside its arena",
      "an object on a tile of no arena (or another's) is refused")
def _(path: Path) -> None:
    world(path, replaced(base_world(), '{ name = "bed", tiles = [[1, 1]] }', '{ name = "bed", tiles = [[12, 1]] }'))


@case("worlds/agents-1001.toml", "world", "agents: List should have at most 1000 items",
      "more agents than the limit are refused")
def _(path: Path) -> None:
    agents = ",\n".join(AGENT.format(k=k) for k in range(1001))
    text = base_world().split("[[agents]]")[0]
    world(path, text.replace("seed = 1", f"seed = 1\nagents = [\n{agents}\n]"))


@case("worlds/agents-1000-one-bad.toml", "world", "duplicate agent name 'A998'",
      "the largest world allowed is checked in bounded time")
def _(path: Path) -> None:
    agents = ",\n".join(AGENT.format(k=min(k, 998)) for k in range(1000))
    text = base_world().split("[[agents]]")[0]
    world(path, text.replace("seed = 1", f"seed = 1\nagents = [\n{agents}\n]"))


@case("worlds/bidi-duplicate.toml", "world", ":29: agents.0.name: U+202E (RIGHT-TO-LEFT OVERRIDE) is not allowed",
      "a bidirectional override in a name is refused by its code point, not obeyed, in the error")
def _(path: Path) -> None:
    text = replaced(base_world(), 'name = "Mei Lin"', 'name = "Mei \u202eniL"')
    world(path, replaced(text, 'name = "John Lin"', 'name = "Mei \u202eniL"'))


@case("worlds/markup-duplicate.toml", "world", "duplicate agent name '[link=file:///etc/passwd]Mei[/link]'",
      "markup in a name is shown as text in the error")
def _(path: Path) -> None:
    text = replaced(base_world(), 'name = "Mei Lin"', 'name = "[link=file:///etc/passwd]Mei[/link]"')
    world(path, replaced(text, 'name = "John Lin"', 'name = "[link=file:///etc/passwd]Mei[/link]"'))


# --- worlds: their maps ------------------------------------------------------------------------


@case("worlds/map-missing.toml", "world", "map-missing.toml:4: map file not found", "a missing map is named at its line")
def _(path: Path) -> None:
    world(path, base_world("../maps/nowhere.toml"))


@case("worlds/map-passwd.toml", "world", "map-passwd.toml:4: map: '../../", "a map that is not a .toml file (/etc/passwd) is not read")
def _(path: Path) -> None:
    world(path, base_world("../" * 30 + "etc/passwd"))


@case("worlds/map-device.toml", "world", "map-device.toml:4: map: '/dev/zero' is not a map file", "a device as the map is not read")
def _(path: Path) -> None:
    world(path, base_world("/dev/zero"))


@case("worlds/map-link-loop.toml", "world", "maps/link-loop.toml: cannot read", "a map that is a symbolic link loop is refused",
      names="link-loop.toml")
def _(path: Path) -> None:
    world(path, base_world("../maps/link-loop.toml"))
    loop = path.parent.parent / "maps" / "link-loop.toml"
    loop.unlink(missing_ok=True)
    os.symlink("link-loop.toml", loop)


@case("worlds/map-link-fifo.toml", "world", "maps/to-fifo.toml: not a regular file", "a map linked to a named pipe does not hang",
      names="to-fifo.toml")
def _(path: Path) -> None:
    world(path, base_world("../maps/to-fifo.toml"))
    maps = path.parent.parent / "maps"
    fifo = maps / "a-fifo"
    if not fifo.exists():
        os.mkfifo(fifo)
    (maps / "to-fifo.toml").unlink(missing_ok=True)
    os.symlink("a-fifo", maps / "to-fifo.toml")


@case("worlds/map-tall.toml", "world", "tall.toml:15: the tile layer is 16x100000 tiles",
      "a map 100,000 tiles tall is refused before it is built", names="tall.toml")
def _(path: Path) -> None:
    m = base_map().replace("##########,,,,,,\n'''", "##########,,,,,,\n" + ",,,,,,,,,,,,,,,,\n" * 99996 + "'''", 1)
    world(path, base_world("../maps/tall.toml"), m, "tall.toml")


@case("worlds/map-long-line.toml", "world", "long-line.toml: too large", "a map line of 10 MB is refused", names="long-line.toml")
def _(path: Path) -> None:
    m = base_map().replace("#B..+..S.+,,,,,,", "#B..+..S.+" + "," * 10_000_000, 1)
    world(path, base_world("../maps/long-line.toml"), m, "long-line.toml")


@case("worlds/map-deep.toml", "world", "deep.toml:2:", "a map nested 2,000 deep is refused", names="deep.toml")
def _(path: Path) -> None:
    world(path, base_world("../maps/deep.toml"), f"name = \"mini\"\nx = {nested(2000)}\n" + base_map(), "deep.toml")


# --- packs -------------------------------------------------------------------------------------


@case("deep-manifest.smalltown-world", "pack", "manifest.json:1:", "a manifest nested 30,000 deep is refused")
def _(path: Path) -> None:
    w, m = base_world().encode(), base_map().encode()
    write_zip(path, [("manifest.json", b'{"format": 1, "x": ' + nested(30_000).encode() + b"}"),
                     ("worlds/mini.toml", w), ("maps/mini.toml", m)])


@case("deep-world.smalltown-world", "pack", "worlds/mini.toml:7:", "a packed world nested 2,000 deep is refused")
def _(path: Path) -> None:
    pack_of(path, replaced(base_world(), "seed = 1", f"seed = {nested(2000)}"))


@case("settings-nan.smalltown-world", "pack", "chat_cooldown_hours", "a pack's world with a NaN setting is refused")
def _(path: Path) -> None:
    pack_of(path, base_world() + "\n[settings]\nchat_cooldown_hours = nan\n")


@case("manifest-bomb.smalltown-world", "pack", "manifest.json: too large", "a manifest that inflates to 20 MB")
def _(path: Path) -> None:
    w, m = base_world().encode(), base_map().encode()
    write_zip(path, [("manifest.json", b" " * 20_000_000), ("worlds/mini.toml", w), ("maps/mini.toml", m)])


@case("members-100000.smalltown-world", "pack", "100,000 members", "100,000 members are refused quickly")
def _(path: Path) -> None:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as zf:
        for k in range(100_000):
            zf.writestr(zipfile.ZipInfo(f"{k}", (1980, 1, 1, 0, 0, 0)), b"")


@case("dir-member.smalltown-world", "pack", "maps/mini.toml: not a plain file",
      "a member that is a folder named like a file is refused")
def _(path: Path) -> None:
    w = base_world().encode()
    write_zip(path, [("manifest.json", manifest(w, b"")), ("worlds/mini.toml", w),
                     (info("maps/mini.toml", stat.S_IFDIR | 0o755), b"")])


@case("dotdot-member.smalltown-world", "pack", "'..' in a member name", "a '..' member among the expected ones")
def _(path: Path) -> None:
    w, m = base_world().encode(), base_map().encode()
    write_zip(path, [("manifest.json", manifest(w, m)), ("worlds/mini.toml", w), ("maps/../../../m.toml", m)])


@case("manifest-toml.smalltown-world", "pack", "manifest.json: not valid JSON", "a manifest that is not JSON is refused")
def _(path: Path) -> None:
    w, m = base_world().encode(), base_map().encode()
    write_zip(path, [("manifest.json", b'format = 1\n[world]\npath = "worlds/mini.toml"\n'),
                     ("worlds/mini.toml", w), ("maps/mini.toml", m)])


@case("manifest-digest.smalltown-world", "pack", "sha256 is not a SHA-256 hex digest", "a manifest digest that is not one")
def _(path: Path) -> None:
    w, m = base_world().encode(), base_map().encode()
    bad = json.loads(manifest(w, m))
    bad["map"]["sha256"] = "../../../../etc/passwd"
    write_zip(path, [("manifest.json", json.dumps(bad).encode()), ("worlds/mini.toml", w), ("maps/mini.toml", m)])


@case("manifest-format-huge.smalltown-world", "pack", "manifest.json", "a format number of 10,000 digits is refused")
def _(path: Path) -> None:
    w, m = base_world().encode(), base_map().encode()
    body = manifest(w, m).replace(b'"format": 1', b'"format": 1' + b"0" * 10_000)
    write_zip(path, [("manifest.json", body), ("worlds/mini.toml", w), ("maps/mini.toml", m)])


@case("empty.smalltown-world", "pack", "its first member must be manifest.json", "an empty zip is refused")
def _(path: Path) -> None:
    with zipfile.ZipFile(path, "w"):
        pass


@case("truncated.smalltown-world", "pack", "not a zip file", "a pack cut in half is refused")
def _(path: Path) -> None:
    pack_of(path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


@case("bad-utf8-world.smalltown-world", "pack", "worlds/mini.toml: not UTF-8 text", "a packed world that is not UTF-8")
def _(path: Path) -> None:
    pack_of(path, base_world().encode().replace(b"patient", b"pat\xc3ient"))


@case("map-tall.smalltown-world", "pack", "tiles: at most 1000 each way", "a packed map 100,000 tiles tall")
def _(path: Path) -> None:
    m = base_map().replace("##########,,,,,,\n'''", "##########,,,,,,\n" + ",,,,,,,,,,,,,,,,\n" * 99996 + "'''", 1)
    pack_of(path, None, m)


@case("fifo.smalltown-world", "pack", "not a regular file", "a named pipe named like a pack does not hang")
def _(path: Path) -> None:
    os.mkfifo(path)


@case("swapped-paths.smalltown-world", "pack", "world.path 'maps/mini.toml': expected worlds/NAME.toml",
      "a manifest naming the map as the world is refused")
def _(path: Path) -> None:
    w, m = base_world().encode(), base_map().encode()
    bad = json.loads(manifest(w, m))
    bad["world"], bad["map"] = bad["map"], bad["world"]
    write_zip(path, [("manifest.json", json.dumps(bad).encode()), ("worlds/mini.toml", w), ("maps/mini.toml", m)])


def make_all(out: Path) -> list[Case]:
    out.mkdir(parents=True, exist_ok=True)
    (out / "worlds").mkdir(exist_ok=True)
    for c in CASES:
        target = out / c.name
        if target.exists() or target.is_symlink():
            continue  # (written by an earlier run into the same folder)
        MAKERS[c.name](target)
    return CASES


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    for c in make_all(Path(sys.argv[1])):
        print(f"{c.kind:6} {c.name:40} {c.rule}")
