"""World packs: one shareable file holding a world and its map.

A pack is a zip with three members laid out as they install:

    manifest.json        {"format": 1, "world": {"path": "worlds/NAME.toml", "sha256": ...},
                          "map": {"path": "maps/MAP.toml", "sha256": ...}, "name": ...}
    worlds/NAME.toml     the world file, its `map` key rewritten to "../maps/MAP.toml"
    maps/MAP.toml        the map file

A pack from a stranger is data. Unpacking reads it through these rules, each failing with an
error that names the pack and the member: only those three members, with plain names (no `..`,
no absolute paths, no links, no duplicates); sizes capped both as declared and as read (a zip
bomb stops at the cap); checksums as the manifest says; the world validated from the extracted
text before anything is written; an existing different file is replaced only with `force`.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import stat
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from smalltown.world.errors import Problem, WorldError
from smalltown.world.load import MAP_MAX_BYTES, WORLD_MAX_BYTES, load_world, load_world_text, parse_toml
from smalltown.world.model import World
from smalltown.world.toml_lines import MAX_NESTING, TomlLines, too_deep

FORMAT = 1
SUFFIX = ".smalltown-world"
MANIFEST = "manifest.json"
MANIFEST_MAX_BYTES = 64_000
PACK_MAX_BYTES = 2 * (WORLD_MAX_BYTES + MAP_MAX_BYTES)  # the file itself, compressed or not
_MEMBER_NAME = re.compile(r"^(worlds|maps)/([A-Za-z0-9][A-Za-z0-9._-]{0,99})\.toml$")
_MAP_LINE = re.compile(r"""^(\s*map\s*=\s*)("[^"\\\n]*"|'[^'\n]*')(\s*(?:#.*)?)$""")
_EPOCH = (1980, 1, 1, 0, 0, 0)  # fixed member times: the same world packs to the same bytes


class PackError(WorldError):
    """A pack that cannot be made or installed; one problem naming the pack (and member)."""

    def __init__(self, where: str, message: str):
        super().__init__([Problem(where, None, message)])


@dataclass
class Unpacked:
    world: World
    world_text: str
    map_text: str
    world_path: str  # "worlds/NAME.toml", where it installs under the target folder
    map_path: str


def is_pack(path: str | Path) -> bool:
    """A zip file (or a file named *.smalltown-world): `run` reads it as a pack, whose rules then
    say what is wrong with it."""
    if str(path).endswith(SUFFIX):
        return True
    if not Path(path).is_file():  # (opening a named pipe would wait for a writer)
        return False
    try:
        with open(path, "rb") as f:
            return f.read(4) in (b"PK\x03\x04", b"PK\x05\x06")
    except OSError:
        return False


def _slug(name: str) -> str:
    """A file name that passes the member rules."""
    s = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.") or "world"
    return s[:100]


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# --- packing -----------------------------------------------------------------------------------


def pack(world_file: str | Path, out: str | Path) -> Path:
    """Validate a world and write it with its map into one pack file."""
    world_file, out = Path(world_file), Path(out)
    world = load_world(world_file)  # a broken world is not packed
    world_name = f"worlds/{_slug(world_file.stem)}.toml"
    map_name = f"maps/{_slug(Path(world.map_source).stem)}.toml"
    text = _point_at(str(world_file), world.text, f"../{map_name}")
    load_world_text(world_name, text, map_name, world.map_text)  # still the same world
    manifest = {
        "format": FORMAT, "name": world.name,
        "world": {"path": world_name, "sha256": _sha(text)},
        "map": {"path": map_name, "sha256": _sha(world.map_text)},
    }
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, body in ((MANIFEST, json.dumps(manifest, indent=2) + "\n"), (world_name, text),
                           (map_name, world.map_text)):
            info = zipfile.ZipInfo(name, _EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = (stat.S_IFREG | 0o644) << 16
            zf.writestr(info, body.encode("utf-8"))
    out.parent.mkdir(parents=True, exist_ok=True)
    _write_atomic(out, buf.getvalue())
    return out


def _point_at(source: str, text: str, map_ref: str) -> str:
    """The world text with its `map = ...` line naming `map_ref` (where the map installs)."""
    line = TomlLines(text).line_of(("map",))
    lines = text.split("\n")
    old = lines[line - 1] if line else ""
    cr = "\r" if old.endswith("\r") else ""
    m = _MAP_LINE.match(old.removesuffix("\r"))
    if m is None:
        raise PackError(f"{source}:{line or 1}", 'to pack this world, write its map on one line: map = "PATH"')
    lines[line - 1] = f"{m.group(1)}{json.dumps(map_ref)}{m.group(3)}{cr}"
    return "\n".join(lines)


# --- unpacking ---------------------------------------------------------------------------------


def read_pack(path: str | Path) -> Unpacked:
    """Read and validate a pack without writing anything."""
    path = Path(path)
    where = str(path)
    try:
        size = path.stat().st_size
    except OSError as e:
        raise PackError(where, f"cannot read: {e.strerror or e}") from None
    if not path.is_file():
        raise PackError(where, "not a regular file")
    if size > PACK_MAX_BYTES:
        raise PackError(where, f"too large: {size:,} bytes (a pack is at most {PACK_MAX_BYTES:,})")
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as e:
        raise PackError(where, f"not a world pack (not a zip file: {e})") from None
    with zf:
        infos = zf.infolist()
        _check_members(where, infos)
        manifest = _manifest(where, _read(zf, where, infos[0], MANIFEST_MAX_BYTES))
        world_path, map_path = manifest["world"]["path"], manifest["map"]["path"]
        by_name = {i.filename: i for i in infos}
        for expected in (world_path, map_path):
            if expected not in by_name:
                raise PackError(where, f"the manifest names {expected!r}, which the pack does not hold")
        if set(by_name) != {MANIFEST, world_path, map_path}:
            extra = sorted(set(by_name) - {MANIFEST, world_path, map_path})
            raise PackError(where, f"unexpected member {extra[0]!r} (a pack holds the manifest, the world "
                                   f"and its map, nothing else)")
        texts = {}
        for key, member, limit in (("world", world_path, WORLD_MAX_BYTES), ("map", map_path, MAP_MAX_BYTES)):
            data = _read(zf, where, by_name[member], limit)
            if hashlib.sha256(data).hexdigest() != manifest[key]["sha256"]:
                raise PackError(f"{where}:{member}", "its sha256 differs from the manifest's (a damaged "
                                                     "or altered pack)")
            try:
                texts[key] = data.decode("utf-8")
            except UnicodeDecodeError as e:
                raise PackError(f"{where}:{member}", f"not UTF-8 text ({e.reason} at byte {e.start})") from None
    wlabel, mlabel = f"{where}:{world_path}", f"{where}:{map_path}"
    world = load_world_text(wlabel, texts["world"], mlabel, texts["map"])
    ref = parse_toml(wlabel, texts["world"])["map"]  # (valid: load_world_text read it)
    if ref != f"../{map_path}":
        raise PackError(f"{wlabel}:{TomlLines(texts['world']).line_of(('map',)) or 1}",
                        f"map = {ref!r}: in a pack the world names its map as {'../' + map_path!r}")
    return Unpacked(world, texts["world"], texts["map"], world_path, map_path)


def _check_members(where: str, infos: list[zipfile.ZipInfo]) -> None:
    if len(infos) > 3:
        raise PackError(where, f"{len(infos):,} members: a pack holds the manifest, the world and its map")
    if not infos or infos[0].filename != MANIFEST:
        raise PackError(where, f"not a world pack: its first member must be {MANIFEST}")
    seen: set[str] = set()
    for info in infos:
        name = info.filename
        label = f"{where}:{name}"
        if name in seen:
            raise PackError(label, "a duplicate member name")
        seen.add(name)
        if name.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", name):
            raise PackError(label, "an absolute path: members must be relative (worlds/NAME.toml)")
        if "\\" in name or "\0" in name:
            raise PackError(label, "a backslash or NUL in a member name (members are worlds/NAME.toml)")
        if ".." in name.split("/"):
            raise PackError(label, "'..' in a member name: it would land outside the target folder")
        mode = info.external_attr >> 16
        if stat.S_ISLNK(mode):
            raise PackError(label, "a symbolic link: a pack holds plain files only")
        if info.is_dir() or (mode and not stat.S_ISREG(mode)):
            raise PackError(label, "not a plain file: a pack holds plain files only")
        if info.flag_bits & 0x1:
            raise PackError(label, "encrypted: a pack's members are plain")
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise PackError(label, f"compression method {info.compress_type} (a pack uses deflate or none)")
        if name != MANIFEST and not _MEMBER_NAME.match(name):
            raise PackError(label, "unexpected member name (a pack holds manifest.json, worlds/NAME.toml "
                                   "and maps/NAME.toml; names of letters, digits, '.', '_' and '-')")


def _read(zf: zipfile.ZipFile, where: str, info: zipfile.ZipInfo, limit: int) -> bytes:
    """A member's bytes, checked against its declared size and capped as read (a zip bomb whose
    header lies about its size stops at the cap)."""
    label = f"{where}:{info.filename}"
    if info.file_size > limit:
        raise PackError(label, f"too large: {info.file_size:,} bytes (at most {limit:,})")
    try:
        with zf.open(info) as f:
            data = f.read(limit + 1)
    except Exception as e:  # BadZipFile (a bad CRC), zlib.error, EOFError: a corrupt member
        raise PackError(label, f"damaged: {e}") from None
    if len(data) > limit:
        raise PackError(label, f"too large: over {limit:,} bytes when read (a zip bomb?)")
    return data


def _manifest(where: str, data: bytes) -> dict:
    label = f"{where}:{MANIFEST}"
    try:
        text = data.decode("utf-8")
        deep = too_deep(text)
        if deep is not None:
            raise PackError(f"{label}:{deep[0]}:{deep[1]}", f"nested too deeply: more than {MAX_NESTING} "
                                                            f"levels of arrays and objects")
        m = json.loads(text)
    except (UnicodeDecodeError, ValueError) as e:
        raise PackError(label, f"not valid JSON ({e})") from None
    except RecursionError:  # (too_deep should have found it)
        raise PackError(label, f"nested too deeply: more than {MAX_NESTING} levels of arrays and objects") from None
    if not isinstance(m, dict):
        raise PackError(label, "not a JSON object")
    fmt = m.get("format")
    if not isinstance(fmt, int) or isinstance(fmt, bool):
        raise PackError(label, f"format {fmt!r} is not a version number")
    if fmt > FORMAT:
        raise PackError(label, f"pack format {fmt}: made by a newer smalltown (this one reads format {FORMAT})")
    if fmt < 1:
        raise PackError(label, f"pack format {fmt} is unknown")
    for key, folder in (("world", "worlds"), ("map", "maps")):
        entry = m.get(key)
        if not isinstance(entry, dict) or not isinstance(entry.get("path"), str) \
                or not isinstance(entry.get("sha256"), str):
            raise PackError(label, f'{key!r} must be {{"path": "{folder}/NAME.toml", "sha256": "..."}}')
        match = _MEMBER_NAME.match(entry["path"])
        if not match or match.group(1) != folder:
            raise PackError(label, f"{key}.path {entry['path'][:120]!r}: expected {folder}/NAME.toml")
        if not re.fullmatch(r"[0-9a-f]{64}", entry["sha256"]):
            raise PackError(label, f"{key}.sha256 is not a SHA-256 hex digest")
    return m


def unpack(path: str | Path, to: str | Path = ".", force: bool = False) -> Path:
    """Validate a pack, then install its world and map under `to` (worlds/ and maps/); returns
    the installed world file. An existing file with other content is replaced only with `force`."""
    pk = read_pack(path)
    root = Path(to)
    targets = [(root / pk.world_path, pk.world_text), (root / pk.map_path, pk.map_text)]
    for target, _ in targets:  # DIR/worlds, DIR/maps: a link there would send the files elsewhere
        folder = target.parent
        if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
            raise PackError(str(folder), "a symbolic link or not a folder: refusing to install through it "
                                         "(install with -o DIR into a folder whose worlds/ and maps/ are plain folders)")
    for target, text in targets:
        if target.is_symlink() or (target.exists() and not target.is_file()):
            raise PackError(str(target), "not a plain file: refusing to install over it")
        if target.exists() and not force and target.read_bytes() != text.encode("utf-8"):
            raise PackError(str(target), "a different file is already there (pass --force to replace "
                                         "it, or -o DIR to install elsewhere)")
    _install(targets)
    return root / pk.world_path


def _install(targets: list[tuple[Path, str]]) -> None:
    """Write each file aside in its folder, then rename them into place (the map first: a world
    never names a map not yet there). A write that fails (a full disk, a read-only folder) names
    the file it could not write and leaves nothing it made: no temporary file, no new folder."""
    made: list[Path] = []  # folders made here, outermost first
    aside: list[tuple[str, Path]] = []
    try:
        for target, text in targets:
            _make_folders(target.parent, made)
            aside.append((_write_aside(target, text.encode("utf-8"), "; nothing was installed"), target))
        for tmp, target in reversed(aside):
            try:
                os.replace(tmp, target)
            except OSError as e:
                raise PackError(str(target), f"cannot install it: {e.strerror or e}") from None
    except BaseException:
        for tmp, _ in aside:
            Path(tmp).unlink(missing_ok=True)
        for folder in reversed(made):
            try:
                folder.rmdir()  # (only if empty: a file installed already stays)
            except OSError:
                pass
        raise


def _make_folders(folder: Path, made: list[Path]) -> None:
    missing = [p for p in (folder, *folder.parents) if not p.exists()][::-1]
    for p in missing:
        try:
            p.mkdir()
        except FileExistsError:
            continue
        except OSError as e:
            raise PackError(str(p), f"cannot make this folder: {e.strerror or e}; nothing was installed") from None
        made.append(p)


def _write_aside(target: Path, data: bytes, note: str = "") -> str:
    """`data` in a new temporary file beside `target` (renamed into place by the caller), readable
    as any other the user makes (0644 less the umask; a temporary file alone would be 0600)."""
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    except OSError as e:
        raise PackError(str(target), f"cannot write it: {e.strerror or e}{note}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())  # (a full disk may only say so here)
            os.fchmod(f.fileno(), 0o644 & ~_umask())
    except BaseException as e:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(e, OSError):
            raise PackError(str(target), f"cannot write it: {e.strerror or e}{note}") from None
        raise
    return tmp


def _write_atomic(target: Path, data: bytes) -> None:
    """Write aside, then rename into place."""
    tmp = _write_aside(target, data)
    try:
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0o022)  # (read by setting it: there is no other way; set back at once)
    os.umask(mask)
    return mask
