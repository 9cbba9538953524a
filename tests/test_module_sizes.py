"""Issue 13: no module of smalltown/ over ~400 lines; a bigger one is split by job (as llm/llama.py,
world/load.py and sim/check.py were)."""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "smalltown"
MAX_LINES = 400



def sizes() -> dict[str, int]:
    return {p.relative_to(PACKAGE).as_posix(): len(p.read_text().splitlines()) for p in PACKAGE.rglob("*.py")}


def test_no_module_is_over_400_lines():
    over = {name: n for name, n in sizes().items() if n > MAX_LINES}
    report = ", ".join(f"{name} ({n} lines)" for name, n in sorted(over.items()))
    assert not over, f"over {MAX_LINES} lines: {report}"
