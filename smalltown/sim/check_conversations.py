"""`save check`'s conversations: each row of the conversations table as the simulation writes it
(JSON of the right shape, between two agents of the world, each side's chat one of its own
memories, nothing oversized). Problems name the table, the row and the field."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Callable

from smalltown.store import conversations as conv
from smalltown.store.save import Save
from smalltown.store.schema import TIME_FMT
from smalltown.world.model import World


def read_time(text: object) -> datetime | None:
    """A time as the save writes it, or None for anything else."""
    try:
        return datetime.strptime(text, TIME_FMT) if isinstance(text, str) else None
    except ValueError:
        return None


def check_conversations(save: Save, world: World | None, names: set[str], now: datetime | None,
                        add: Callable[[str, str], None]) -> None:
    """Each row of the conversations table: its fields as the simulation writes them. Problems
    name the table, the row and the field."""
    owners = save.memory_owners()
    facts = {f.name for f in world.facts} if world is not None else None
    for cid, _tick, time, end, place, initiator, other, reason, lines, chats, rels in save.reader().raw_conversations():
        def bad(field_name: str, message: str) -> None:
            add("conversations", f"conversations row {cid}: {field_name}: {message}")

        pair = []
        for label, name in (("initiator", initiator), ("other", other)):
            if not isinstance(name, str) or (names and name not in names):
                bad(label, f"{name!r} is not an agent of the world")
            else:
                pair.append(name)
        if initiator == other and isinstance(initiator, str):
            bad("other", f"{other!r} is the initiator too: a conversation is between two agents")
        if len(set(pair)) < 2:
            pair = None  # who may speak is not known: the sides are not checked against it
        start, stop = read_time(time), read_time(end)
        if start is None:
            bad("time", f"{time!r} is not a time")
        elif now is not None and start > now:
            bad("time", f"{time} is after the save's clock")
        if stop is None:
            bad("end_time", f"{end!r} is not a time")
        elif start is not None and stop < start:
            bad("end_time", f"{end} is before its start ({time})")
        for label, text in (("place", place), ("reason", reason)):
            if not isinstance(text, str):
                bad(label, f"{text!r} is not text")
            elif len(text) > conv.MAX_TEXT:
                bad(label, f"{len(text):,} characters (at most {conv.MAX_TEXT:,})")
        parsed = {}
        for label, text, kind in (("lines", lines, list), ("chats", chats, dict), ("relationships", rels, dict)):
            if isinstance(text, str) and len(text) > conv.MAX_JSON:
                bad(label, f"{len(text):,} characters of JSON (at most {conv.MAX_JSON:,})")
                continue
            try:
                value = json.loads(text) if isinstance(text, str) else None
            except ValueError:
                value = None
            if not isinstance(value, kind):
                bad(label, f"not a JSON {'list' if kind is list else 'object'}")
                continue
            parsed[label] = value
        _check_lines(parsed.get("lines"), pair, owners, facts, bad)
        for name, mid in (parsed.get("chats") or {}).items():
            if pair is not None and name not in pair:
                bad(f"chats[{name!r}]", "not one of the two who talked")
            elif not isinstance(mid, int) or isinstance(mid, bool):
                bad(f"chats[{name!r}]", f"{mid!r} is not a memory id")
            elif mid not in owners:
                bad(f"chats[{name!r}]", f"memory {mid} does not exist")
            elif owners[mid] != name:
                bad(f"chats[{name!r}]", f"memory {mid} is {owners[mid]}'s, not {name}'s")
        for name, text in (parsed.get("relationships") or {}).items():
            if pair is not None and name not in pair:
                bad(f"relationships[{name!r}]", "not one of the two who talked")
            elif not isinstance(text, str):
                bad(f"relationships[{name!r}]", f"{text!r} is not text")
            elif len(text) > conv.MAX_TEXT:
                bad(f"relationships[{name!r}]", f"{len(text):,} characters (at most {conv.MAX_TEXT:,})")


def _check_lines(lines: list | None, pair: list[str] | None, owners: dict[int, str], facts: set[str] | None,
                 bad: Callable[[str, str], None]) -> None:
    if lines is None:
        return
    if len(lines) > conv.MAX_LINES:
        bad("lines", f"{len(lines):,} lines (at most {conv.MAX_LINES:,})")
        return
    for i, line in enumerate(lines):
        at = f"lines[{i}]"
        if not isinstance(line, dict):
            bad(at, "not a JSON object")
            continue
        speaker, text = line.get("speaker"), line.get("text")
        if not isinstance(speaker, str):
            bad(f"{at}.speaker", f"{speaker!r} is not a name")
        elif pair is not None and speaker not in pair:
            bad(f"{at}.speaker", f"{speaker!r} is not one of the two who talked ({' and '.join(pair)})")
        if not isinstance(text, str):
            bad(f"{at}.text", f"{text!r} is not text")
        elif len(text) > conv.MAX_TEXT:
            bad(f"{at}.text", f"{len(text):,} characters (at most {conv.MAX_TEXT:,})")
        tells, named = line.get("tells", []), line.get("facts", [])
        if not isinstance(tells, list) or len(tells) > conv.MAX_TELLS:
            bad(f"{at}.tells", f"not a list of at most {conv.MAX_TELLS} memory ids")
        else:
            for mid in tells:
                if not isinstance(mid, int) or isinstance(mid, bool) or mid not in owners:
                    bad(f"{at}.tells", f"memory {mid!r} does not exist")
        if not isinstance(named, list) or not all(isinstance(f, str) for f in named):
            bad(f"{at}.facts", "not a list of fact names")
        elif facts is not None:
            for f in named:
                if f not in facts:
                    bad(f"{at}.facts", f"{f!r} is not a fact of the world")
