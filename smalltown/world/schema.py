"""The shape of world and map files, checked by pydantic; errors keep their key path."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from smalltown.world.model import TILE_KINDS

Name = Field(min_length=1, max_length=120)
TileIn = tuple[int, int]
Kind = Literal[TILE_KINDS]  # type: ignore[valid-type]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=False)


class ObjectIn(_Strict):
    name: str = Name
    tiles: list[TileIn] = Field(min_length=1)
    state: str = Field(default="idle", min_length=1, max_length=200)


class ArenaIn(_Strict):
    code: str = Field(min_length=1, max_length=1)
    objects: list[ObjectIn] = Field(default_factory=list)

    @field_validator("code")
    @classmethod
    def _code_char(cls, v: str) -> str:
        if v == "." or v.isspace():
            raise ValueError('"." and blanks mean "no arena" and cannot be a code')
        return v


class SectorIn(_Strict):
    arenas: dict[str, ArenaIn] = Field(min_length=1)


class AgentIn(_Strict):
    name: str = Name
    age: int = Field(ge=0, le=150)
    traits: str = Field(min_length=1, max_length=400)
    description: str = Field(min_length=1, max_length=8000)
    home: str = Name
    spawn: TileIn
    knows: list[str] = Field(default_factory=list)


class WorldIn(_Strict):
    name: str = Name
    map: str = Field(min_length=1)
    start: datetime
    step_seconds: int = Field(default=10, gt=0, le=3600)
    seed: int = 0
    settings: dict[str, bool | int | float] = Field(default_factory=dict)  # overrides of config.Settings
    sectors: dict[str, SectorIn] = Field(min_length=1)
    agents: list[AgentIn] = Field(min_length=1)


class LayersIn(_Strict):
    tiles: str = Field(min_length=1)
    arenas: str = Field(min_length=1)


class MapIn(_Strict):
    name: str = ""
    legend: dict[str, Kind]
    layers: LayersIn

    @field_validator("legend")
    @classmethod
    def _one_char(cls, v: dict[str, str]) -> dict[str, str]:
        for glyph in v:
            if len(glyph) != 1 or glyph.isspace():
                raise ValueError(f"legend key {glyph!r} must be a single visible character")
        return v
