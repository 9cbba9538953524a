"""Text from a file or a model, made safe to show on a terminal.

A save, a world file or a model's answer is data from a stranger: shown raw, an escape sequence in
it would set the terminal's title, clear the screen or write a link, and Rich or Textual markup in
it would be styled (or crash a print, `[/bold]`). Every front end shows such text through `shown`
(a plain string with every control character made visible) or `shown_text` (the same as a
rich `Text`, which no console or widget reads as markup). Widths stay right: each character made
visible takes the cells it is drawn in.
"""

from __future__ import annotations

import re

from rich.text import Text

# C0 and C1 controls and DEL; bidirectional overrides, isolates and marks (they reorder what
# follows on the line); line and paragraph separators; lone surrogates (unprintable, and fatal
# to an encoder). Newline and tab are handled apart.
_OTHERS = "\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029\ud800-\udfff"
_UNSAFE = re.compile(f"[\x00-\x08\n{_OTHERS}]")
_UNSAFE_LINES = re.compile(f"[\x00-\x08{_OTHERS}]")  # the same but newline
_HIDDEN = re.compile(f"[\x00-\x0a{_OTHERS}]")  # the same and newline and tab
_TAB = "\t"


def _visible(match: re.Match[str]) -> str:
    c = ord(match.group())
    if c < 0x20:
        return chr(0x2400 + c)  # the control pictures: ␀ … ␛ … ␟
    if c == 0x7F:
        return "\u2421"  # ␡
    return f"\\x{c:02x}" if c <= 0xFF else f"\\u{c:04x}"


def shown(value: object, lines: bool = False) -> str:
    """`value` as text a terminal shows as it is: control characters made visible (ESC as ␛,
    NUL as ␀, C1 and bidirectional controls as \\x9b, \\u202e), tabs as spaces. A line break is
    kept only where `lines` says the text is shown over several lines on purpose (a carriage
    return before it is dropped); elsewhere it shows as ␊. Markup is not touched: pass the
    result to Rich or Textual as a `Text` (`shown_text`), never as a markup string."""
    text = value if isinstance(value, str) else str(value)
    if lines:
        text = text.replace("\r\n", "\n")
    if _TAB in text:
        text = "\n".join(line.expandtabs(4) for line in text.split("\n")) if lines else text.replace(_TAB, " ")
    unsafe = _UNSAFE_LINES if lines else _UNSAFE
    return unsafe.sub(_visible, text) if unsafe.search(text) else text


def shown_text(value: object, style: str = "", lines: bool = False) -> Text:
    """`shown(value)` as a rich Text: printed or put in a widget, it is never read as markup."""
    return Text(shown(value, lines), style)


def drop_unshown(text: str) -> str:
    """For text already laid out in cells (a line drawn on screen): every character `shown`
    would make visible (and tab and newline) removed instead, as they take no cell; a lone
    surrogate, which takes one, becomes �. The last guard of the TUI, for text that reached a
    widget without passing through `shown`."""
    return _HIDDEN.sub(_dropped, text) if _HIDDEN.search(text) else text


def _dropped(match: re.Match[str]) -> str:
    return "\ufffd" if "\ud800" <= match.group() <= "\udfff" else ""


def json_shown(text: str) -> str:
    """JSON text (as `json.dumps(..., ensure_ascii=False)` writes it) with every character
    `shown` would make visible written as a \\u escape: the same JSON, safe to print."""
    return _UNSAFE_LINES.sub(lambda m: f"\\u{ord(m.group()):04x}", text)  # a newline is layout
