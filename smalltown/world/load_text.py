"""Reading a world or map text: bounded in size, parsed as TOML with its nesting bounded, and
validated against its schema, each problem with its line (world/load.py builds the world)."""

from __future__ import annotations

import tomllib
from pathlib import Path

from pydantic import BaseModel, ValidationError

from smalltown.world.errors import Problem, WorldError
from smalltown.world.names import suggestion
from smalltown.world.toml_lines import MAX_NESTING, TomlLines, too_deep

# A world or map from a stranger is data of bounded size (the bundled ones are tens of kB). A world
# holds at most 1,000 agents (world/schema.py): `world generate` writes 1.8 to 2.1 MB for 1,000
# (1,000 rural agents between 50 towns the most); a hand-written persona (a description of 600
# characters, a routine of 20 items) is about 3 kB, 3 MB for 1,000. 4 MB admits both, with room,
# and stays the bound it is: checking a 4 MB world takes seconds, not minutes (docs/world-format.md).
WORLD_MAX_BYTES = 4_000_000
MAP_MAX_BYTES = 4_000_000
MAP_MAX_SIDE = 1000  # tiles, each way


def read_text_capped(path: Path, limit: int, label: str | None = None) -> str:
    """A file's text, refusing one over `limit` bytes without reading it all (nor waiting on a
    device or pipe named as a world)."""
    label = label or str(path)
    if path.exists() and not path.is_file():
        raise WorldError([Problem(label, None, "not a regular file")])
    with open(path, "rb") as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise WorldError([Problem(label, None, f"too large: over {limit:,} bytes (the limit)")])
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise WorldError([Problem(label, None, f"cannot read: not UTF-8 text ({e.reason} at byte {e.start})")]) from None


def check_size(source: str, text: str, limit: int) -> None:
    """Refuse a text held in memory (a save's, a pack's) over `limit` bytes, as a file would be."""
    if len(text.encode("utf-8")) > limit:
        raise WorldError([Problem(source, None, f"too large: over {limit:,} bytes (the limit)")])


def parse_toml(source: str, text: str) -> dict:
    """tomllib's reading of a world or map text, its errors as problems with their line; nesting
    is bounded first (tomllib recurses into each level: 2,000 would be a RecursionError)."""
    if text.startswith("\ufeff"):  # (tomllib says only "Invalid statement")
        raise WorldError([Problem(source, 1, "starts with a byte-order mark (U+FEFF): save it as UTF-8 "
                                             "without one", 1)])
    deep = too_deep(text)
    if deep is not None:
        raise WorldError([Problem(source, deep[0], f"nested too deeply: more than {MAX_NESTING} levels of "
                                                   f"arrays and inline tables", deep[1])])
    try:
        return tomllib.loads(text)
    except RecursionError:  # (too_deep should have found it)
        raise WorldError([Problem(source, None, f"nested too deeply: more than {MAX_NESTING} levels of arrays "
                                                f"and inline tables")]) from None
    except tomllib.TOMLDecodeError as e:
        msg = str(e)
        line = col = None
        # tomllib ends its messages with "(at line L, column C)"
        if "(at line " in msg:
            head, _, tail = msg.rpartition(" (at line ")
            nums = tail.rstrip(")").split(", column ")
            line, col = int(nums[0]), int(nums[1]) if len(nums) > 1 else None
            msg = head
        raise WorldError([Problem(source, line, f"TOML syntax: {msg}", col)]) from None


def parse_text(source: str, text: str, schema: type[BaseModel]) -> tuple[BaseModel, TomlLines]:
    """A text read into `schema`, with its line finder; every schema problem at its line."""
    raw = parse_toml(source, text)
    lines = TomlLines(text)
    try:
        return schema.model_validate(raw), lines
    except ValidationError as e:
        problems = []
        for err in e.errors():
            loc = tuple(err["loc"])
            field = ".".join(str(p) for p in loc) or "(top level)"
            msg = err["msg"]
            if err["type"] == "missing":
                msg = "required field is missing"
            elif err["type"] == "extra_forbidden":
                msg = "unknown field" + suggestion(str(loc[-1]), fields_at(schema, loc[:-1]))
            elif err["type"] == "value_error":
                msg = msg.removeprefix("Value error, ")
            problems.append(Problem(source, lines.line_of(loc) or 1, f"{field}: {msg}"))
        raise WorldError(problems) from None


def fields_at(schema: type[BaseModel], path: tuple) -> list[str]:
    """The fields a table at `path` in a `schema` document may have (for "did you mean"); [] where
    the path leads to no model (a dict of free keys)."""
    import typing

    model: object = schema
    keyed = False  # the next part is a key of a table of free keys (sectors."Lin house")
    for part in path:
        if isinstance(part, int) or keyed:
            keyed = False
            continue  # an item of a list, a table's key: its model is the list's, the table's
        if not (isinstance(model, type) and issubclass(model, BaseModel)) or part not in model.model_fields:
            return []
        annotation = model.model_fields[part].annotation
        keyed = typing.get_origin(annotation) is dict
        kinds, model = [annotation], None
        while kinds:  # list[X], X | None: the model inside
            kind = kinds.pop()
            if isinstance(kind, type) and issubclass(kind, BaseModel):
                model = kind
                break
            kinds.extend(typing.get_args(kind))
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        return []
    return [f.alias or name for name, f in model.model_fields.items()]


def grid(text: str) -> list[str]:
    """A map layer's rows, without trailing blank lines or carriage returns."""
    rows = text.split("\n")
    while rows and rows[-1] == "":
        rows.pop()
    return [r.rstrip("\r") for r in rows]
