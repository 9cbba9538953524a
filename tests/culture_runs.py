"""Scripted runs of the bundled many-town worlds (worlds/towns.toml, worlds/towns-lantern.toml) with
the culture preset, shared by the culture tests: each (world, hours, settings) is run once a
session, and eval culture's measures of it computed once."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from functools import cache
from pathlib import Path

from helpers import ROOT, cli

DOCTRINE_WORLDS = ("towns", "towns-lantern")  # two doctrines, same kind of world
_DIR = Path(tempfile.mkdtemp(prefix="culture-runs-"))
atexit.register(shutil.rmtree, _DIR, True)


@cache
def culture_run(world: str, hours: int = 12, *sets: str) -> Path:
    """The save of `world` (a bundled world's stem) run `hours` game hours headless and scripted
    under the culture preset, with `sets` ("travel=false", ...) on top."""
    save = _DIR / f"{world}-{hours}h-{'-'.join(s.replace('=', '_') for s in sets) or 'culture'}.sqlite"
    cli("run", ROOT / "worlds" / f"{world}.toml", "-o", save, "--headless", "--until", f"+{hours}h",
        "--set", "architecture=culture", *(x for s in sets for x in ("--set", s)), check=True)
    return save


@cache
def culture_measures(world: str, hours: int = 12, *sets: str) -> dict:
    """eval culture's measures of that run's save (measure_culture's dict)."""
    from smalltown.eval.culture import measure_culture, read_culture
    from smalltown.store.save import open_reader

    reader = open_reader(culture_run(world, hours, *sets))
    try:
        return measure_culture(read_culture(reader))
    finally:
        reader.close()


@cache
def culture_save(world: str, hours: int = 12, *sets: str):
    """That run's save as eval culture reads it (`CultureSave`: its lines, rises' inputs and the
    agents' tiles at each game hour's end)."""
    from smalltown.eval.culture import read_culture
    from smalltown.store.save import open_reader

    reader = open_reader(culture_run(world, hours, *sets))
    try:
        return read_culture(reader)
    finally:
        reader.close()
