"""Line numbers for keys in a TOML file.

tomllib reports positions only for syntax errors; validation errors need them too, so this scans
the source for table headers and `key =` lines and maps each key path to its line.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict

Path = tuple[str | int, ...]

_KEY_LINE = re.compile(r"""^\s*((?:[A-Za-z0-9_-]+|"(?:[^"\\]|\\.)*"|'[^']*')(?:\s*\.\s*(?:[A-Za-z0-9_-]+|"(?:[^"\\]|\\.)*"|'[^']*'))*)\s*=""")
_KEY_PART = re.compile(r"""\s*([A-Za-z0-9_-]+|"(?:[^"\\]|\\.)*"|'[^']*')\s*(?:\.|$)""")


def split_key(key: str) -> tuple[str, ...]:
    parts = []
    for m in _KEY_PART.finditer(key.strip()):
        part = m.group(1)
        if part[0] == '"':
            try:
                part = json.loads(part)  # TOML basic-string escapes are JSON's, near enough
            except ValueError:
                part = part[1:-1]
        elif part[0] == "'":
            part = part[1:-1]
        parts.append(part)
    return tuple(parts)


def _strip_comment(line: str) -> str:
    """The line without a trailing `# comment` (a `#` inside quotes is kept)."""
    quote = None
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch == "#":
            return line[:i]
    return line


class TomlLines:
    def __init__(self, text: str):
        self.lines = text.splitlines()
        self.keys: dict[Path, int] = {}
        counts: dict[Path, int] = defaultdict(int)
        table: Path = ()
        in_string: str | None = None
        for no, raw in enumerate(self.lines, start=1):
            line = _strip_comment(raw).strip()
            if in_string:
                if line.count(in_string) % 2 == 1:
                    in_string = None
                continue
            if line.startswith("[[") and line.endswith("]]"):
                path = split_key(line[2:-2])
                table = path + (counts[path],)
                counts[path] += 1
                self.keys.setdefault(table, no)
            elif line.startswith("[") and "]" in line and not _KEY_LINE.match(line):
                table = split_key(line[1 : line.index("]")])
                for k in range(1, len(table) + 1):  # implicit parent tables
                    self.keys.setdefault(table[:k], no)
            else:
                m = _KEY_LINE.match(raw)
                if m:
                    self.keys.setdefault(table + split_key(m.group(1)), no)
                    rest = raw[m.end():]
                    for delim in ('"""', "'''"):
                        if rest.count(delim) % 2 == 1:
                            in_string = delim

    def line_of(self, path: Path) -> int | None:
        """The line of the longest known prefix of `path`; inline-array items one per line."""
        path = tuple(path)
        for k in range(len(path), 0, -1):
            prefix = path[:k]
            if prefix in self.keys:
                line = self.keys[prefix]
                rest = path[k:]
                if rest and isinstance(rest[0], int):
                    return self._array_item(line, rest[0])
                return line
        return None

    def _array_item(self, line: int, index: int) -> int:
        """Line of the index-th `{` item of an inline array that starts at `line`."""
        seen = -1
        for no in range(line, len(self.lines) + 1):
            text = self.lines[no - 1]
            if no > line and _KEY_LINE.match(text) and "{" not in text.split("=")[0]:
                break
            seen += text.count("{")
            if seen >= index:
                return no
        return line


# --- nesting ---------------------------------------------------------------------------------

MAX_NESTING = 32  # arrays and inline tables (or JSON arrays and objects) inside one another
_TOKEN = re.compile(r'"""|\'\'\'|["\'#\[\]{}]')
_BASIC_END = re.compile(r'\\.|"', re.DOTALL)
_ML_BASIC_END = re.compile(r'\\.|"""', re.DOTALL)


def too_deep(text: str, limit: int = MAX_NESTING) -> tuple[int, int] | None:
    """The (line, column) where brackets nest deeper than `limit`, else None. tomllib and json
    parse nesting by recursion, so 2,000 levels end in a RecursionError: this finds them first,
    skipping strings and comments (TOML's and JSON's: a JSON text scans as TOML values do)."""
    depth, pos = 0, 0
    while (m := _TOKEN.search(text, pos)) is not None:
        tok, i = m.group(), m.start()
        if tok == "#":  # a comment: to the end of the line
            pos = text.find("\n", i)
        elif tok == "'''":
            pos = _after_quotes(text, text.find("'''", i + 3), "'")
        elif tok == "'":
            pos = text.find("'", i + 1) + 1 or -1
        elif tok in ('"""', '"'):
            ends = _ML_BASIC_END if tok == '"""' else _BASIC_END
            pos = i + len(tok)
            while (e := ends.search(text, pos)) is not None and e.group()[0] == "\\":
                pos = e.end()  # an escape: the next character is the string's
            pos = -1 if e is None else _after_quotes(text, e.start(), '"') if tok == '"""' else e.end()
        elif tok in "[{":
            depth += 1
            if depth > limit:
                return text.count("\n", 0, i) + 1, i - text.rfind("\n", 0, i)
            pos = i + 1
        else:
            depth = max(0, depth - 1)
            pos = i + 1
        if pos < 0:  # an unclosed string or a last comment: the parser says what is wrong
            return None
    return None


def _after_quotes(text: str, start: int, quote: str) -> int:
    """Past a multi-line string's closing quotes, which may be up to 5 (2 of them the string's)."""
    if start < 0:
        return -1
    end = start + 3
    while end < len(text) and end < start + 5 and text[end] == quote:
        end += 1
    return end
