"""The world of `eval matrix`'s condition "priests off": the same world file with its doctrines'
priests emptied, so the agents who were priests live as ordinary agents (their doctrine, its
keywords and gathering stay; nobody holds it from the start, nobody carries its persona lines).

The variant is the world file's own text with each `[[doctrines]]` table's `priests` key set to
[] and its `map` key pointing at the original map, written where the matrix keeps its runs. It is
then loaded and compared with the original: the same agents, towns and doctrines but for the
priests, or it is refused (a world file laid out in a way this rewrite cannot follow)."""

from __future__ import annotations

import json
import tomllib
from dataclasses import replace
from pathlib import Path

from smalltown.eval import EvalError
from smalltown.world.load import load_world
from smalltown.world.toml_lines import TomlLines


def _key_span(lines: list[str], start: int) -> int:
    """The line after the value of the key on line `start` (0-based): the first line from which
    the key's text is whole TOML (a multi-line array is cut nowhere else)."""
    for end in range(start + 1, len(lines) + 1):
        try:
            tomllib.loads("\n".join(lines[start:end]))
            return end
        except tomllib.TOMLDecodeError:
            continue
    raise EvalError(f"line {start + 1}: a value this rewrite cannot follow")


def without_priests_text(text: str, map_path: Path) -> str:
    """The world file's text with no priests in its doctrines and its map named by `map_path`."""
    found = TomlLines(text)
    lines = text.splitlines()
    doc = tomllib.loads(text)
    edits: list[tuple[int, int, str]] = []  # (first line, line after, new text), 0-based
    if "map" in doc:
        m = found.line_of(("map",))
        if m is None:
            raise EvalError("its map key has no line this rewrite can find")
        edits.append((m - 1, _key_span(lines, m - 1), f"map = {json.dumps(str(map_path))}"))
    for k, d in enumerate(doc.get("doctrines", [])):
        if d.get("priests"):
            p = found.line_of(("doctrines", k, "priests"))
            if p is None:
                raise EvalError(f"doctrine {d.get('name')!r}: its priests have no line this rewrite can find")
            edits.append((p - 1, _key_span(lines, p - 1), "priests = []"))
    for first, after, new in sorted(edits, reverse=True):
        lines[first:after] = [new]
    return "\n".join(lines) + "\n"


def world_without_priests(world: Path, out: Path) -> Path:
    """Write the variant of `world` into the folder `out`; returns its path."""
    original = load_world(world)
    doc = tomllib.loads(Path(world).read_text(encoding="utf-8"))
    map_path = (Path(world).parent / doc.get("map", "")).resolve()
    try:
        text = without_priests_text(Path(world).read_text(encoding="utf-8"), map_path)
    except EvalError as e:
        raise EvalError(f"{world}: cannot make its world without priests: {e}") from None
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{Path(world).stem}-no-priests.toml"
    path.write_text(text, encoding="utf-8")
    variant = load_world(path)
    same = ([a.name for a in variant.agents] == [a.name for a in original.agents]
            and variant.towns == original.towns
            and variant.doctrines == [replace(d, priests=()) for d in original.doctrines])
    if not same:
        raise EvalError(f"{world}: its world without priests ({path}) is not the same world but for the priests")
    return path
