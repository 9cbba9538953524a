"""Every tunable number in one place; a world file or the command line may override them."""

from __future__ import annotations

from dataclasses import dataclass, fields, replace


@dataclass(frozen=True)
class Settings:
    # perception (SPEC 1; the authors' code used 4-8 tiles, 3-8 things, 5-8 memories)
    vision_radius: int = 4
    attention_bandwidth: int = 3
    retention: int = 5

    def override(self, **changes: object) -> "Settings":
        known = {f.name for f in fields(self)}
        unknown = set(changes) - known
        if unknown:
            raise ValueError(f"unknown setting(s): {', '.join(sorted(unknown))}")
        return replace(self, **changes)
