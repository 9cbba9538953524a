"""The README and docs/ stand alone: every link to a file of the repository finds it (and a
`#heading` in a Markdown file finds that heading, as GitHub spells its anchor), nothing points
outside the repository or at an issue number, and the README's test command is what CI runs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]

FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.M | re.S)
CODE = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
OUTSIDE = re.compile(r"\.\./shared|\bSPEC\.md\b|\bDESIGN\.md\b|\bSPEC\s*§|\bissues?\s+#?\d+|\(#\d+\)", re.I)


def prose(text: str) -> str:
    """The text a reader sees as prose: fenced code blocks and inline code taken out."""
    return CODE.sub("", FENCE.sub("", text))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: link text kept, lower case, punctuation dropped, spaces to -."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip())
    return re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every heading's anchor in a Markdown file (a repeated one gets -1, -2, … as on GitHub)."""
    seen: dict[str, int] = {}
    out = set()
    for line in FENCE.sub("", path.read_text(encoding="utf-8")).splitlines():
        m = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            base = slug(m.group(1))
            n = seen.get(base, 0)
            seen[base] = n + 1
            out.add(base if n == 0 else f"{base}-{n}")
    return out


def links(path: Path) -> list[str]:
    return LINK.findall(prose(path.read_text(encoding="utf-8")))


def broken(path: Path, root: Path = ROOT) -> list[str]:
    """The links of a document that find no file under root, or no heading in it."""
    bad = []
    for target in links(path):
        if re.match(r"[a-z][a-z0-9+.-]*:", target, re.I):  # http:, mailto: …: not ours to check
            continue
        file, _, anchor = target.partition("#")
        dest = (path.parent / file).resolve() if file else path
        if dest != root and root not in dest.parents:
            bad.append(f"{target}: outside the repository")
        elif not dest.exists():
            bad.append(f"{target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            bad.append(f"{target}: no such heading")
    return bad


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_local_link_finds_its_file_and_heading(doc: Path) -> None:
    assert broken(doc) == []


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_nothing_points_outside_the_repository_or_at_an_issue(doc: Path) -> None:
    text = doc.read_text(encoding="utf-8")
    found = [(text.count("\n", 0, m.start()) + 1, m.group()) for m in OUTSIDE.finditer(text)]
    assert found == [], f"{doc.relative_to(ROOT)}: line, text"


def test_the_checker_finds_a_missing_file_a_missing_heading_and_an_outside_link(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "b.md").write_text("# Saves: the `format`, × forks\n## Limits\n## Limits\n"
                                            "```\n# not a heading\n```\n")
    a = tmp_path / "docs" / "a.md"
    a.write_text("[ok](b.md#saves-the-format--forks) [ok](b.md#limits-1) [ok](../docs/) [code](b.md#not-a-heading)\n"
                 "[gone](c.md) `[in code](d.md)` [web](https://example.org/x.md) [self](#nowhere)\n"
                 "[out](../../shared/SPEC.md)\n```\n[fenced](e.md)\n```\n")
    assert broken(a, tmp_path) == ["b.md#not-a-heading: no such heading", "c.md: no such file",
                                   "#nowhere: no such heading", "../../shared/SPEC.md: outside the repository"]


def test_the_readmes_test_command_is_what_ci_runs() -> None:
    ci = [line for line in (ROOT / ".ci" / "run").read_text().splitlines()
          if line.strip() and not line.startswith(("#", "set ", "cd "))]
    assert len(ci) == 1
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"```sh\n{ci[0].strip()}\n```" in readme
