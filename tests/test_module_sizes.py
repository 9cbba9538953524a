"""Modules of smalltown/ are split by job, not by size: a module does one job, and two halves of one
job belong in one file whatever its length. A module over ~400 lines is named in a warning (in
pytest's warnings summary) as a hint to look for a second job inside it; it fails nothing."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "smalltown"
MAX_LINES = 400


class SizeHint(UserWarning):
    """A module long enough to be read for a second job."""


def sizes() -> dict[str, int]:
    return {p.relative_to(PACKAGE).as_posix(): len(p.read_text().splitlines()) for p in PACKAGE.rglob("*.py")}


def over(found: dict[str, int]) -> dict[str, int]:
    return {name: n for name, n in found.items() if n > MAX_LINES}


def warn_of(long: dict[str, int]) -> None:
    if long:
        report = ", ".join(f"{name} ({n} lines)" for name, n in sorted(long.items()))
        warnings.warn(f"over {MAX_LINES} lines, each to be split if it does two jobs: {report}", SizeHint)


def test_modules_over_400_lines_are_named_in_a_warning():
    warn_of(over(sizes()))


def test_the_warning_names_each_module_over_the_hint_and_no_other():
    with pytest.warns(SizeHint, match=r"sim/big\.py \(401 lines\)") as got:
        warn_of(over({"sim/big.py": 401, "sim/small.py": 400}))
    assert len(got) == 1 and "small" not in str(got[0].message)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warn_of(over({"sim/small.py": 400}))  # (none over: no warning)
