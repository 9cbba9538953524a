"""report.md holds names, answers and texts from saves and models: rendered by a Markdown viewer
(here CommonMark with tables, as GitHub's is), each shows as the text itself: no link, image, HTML
tag, heading, list, code or extra table column comes of it."""

from __future__ import annotations

import html
import re

from markdown_it import MarkdownIt

from smalltown.eval.report import Doc

HOSTILE = [
    "[x](javascript:alert(1))",
    "![img](http://evil.example/track.png)",
    "<img src=x onerror=alert(1)> <script>alert(1)</script> &lt;b&gt;",
    "a | b | c",
    "`rm -rf ~` and ``x``",
    "*bold* __under__ ~~gone~~ \\*",
    "# not a heading ##",
    "line one\n# heading\n- item\n+ item\n1. first\n2) second\n    indented code\n===\n---\n> quote",
]


def _render(md: str) -> str:
    return MarkdownIt("commonmark").enable("table").render(md)


def _text(rendered: str) -> str:
    """What a reader sees: the tags gone, entities decoded."""
    return html.unescape(re.sub(r"<[^>]+>", "", rendered))


def test_text_from_a_save_is_shown_as_text_in_every_block_of_report_md():
    doc = Doc(HOSTILE[0])
    for i, text in enumerate(HOSTILE):
        doc.heading(text, 2 + i % 2)
        doc.para(text)
        doc.table(["agent", "answer"], [[text, text], ["plain", text]])
        doc.figure(f"plot-{i}", "<svg></svg>", text)
        doc.details(f"memories behind: {text}", [text, "plain"])
    rendered = _render(doc.markdown())
    tags = set(re.findall(r"<(/?[a-z0-9]+)", rendered))
    # the document's own structure only: its headings, paragraphs, tables, figures (img), details
    assert tags <= {"h1", "/h1", "h2", "/h2", "h3", "/h3", "p", "/p", "table", "/table", "thead", "/thead",
                    "tbody", "/tbody", "tr", "/tr", "th", "/th", "td", "/td", "img", "em", "/em", "br",
                    "details", "/details", "summary", "/summary", "ul", "/ul", "li", "/li"}, tags
    assert "<a " not in rendered and "<script" not in rendered and "<code" not in rendered
    assert rendered.count("<h1>") == 1 and rendered.count("<h2>") + rendered.count("<h3>") == len(HOSTILE)
    assert rendered.count("<img") == len(HOSTILE)  # the plots; no image from a text
    assert all(src.startswith("plots/") for src in re.findall(r'<img src="([^"]*)"', rendered))
    for row in re.findall(r"<tr>(.*?)</tr>", rendered, re.DOTALL):
        assert row.count("<td>") + row.count("<th>") == 2, row  # no column added by a '|'
    assert rendered.count("<li>") == 2 * len(HOSTILE)  # the details' items; no list from a text
    assert rendered.count("<em>") == len(HOSTILE)  # the figure captions; no emphasis from a text
    seen = _text(rendered)
    for text in HOSTILE:
        for line in text.split("\n"):
            assert line.strip() in seen, line  # every character shown, as itself
