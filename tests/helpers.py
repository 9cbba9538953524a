"""Paths and small helpers the tests share (tests import this, not each other)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "worlds" / "tiny.toml"
SMALLVILLE = ROOT / "worlds" / "smallville.toml"
GULLHAVEN = ROOT / "worlds" / "gullhaven.toml"
