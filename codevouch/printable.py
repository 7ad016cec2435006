"""Repository text made safe to print: the one place where control characters become visible.

Code, paths, symbols and messages that codevouch prints come from repositories it did not
write. A committed line such as `return 1  # \\x1b[1A\\x1b[2Kcheck: usable` would move a
terminal's cursor and rewrite what was printed before it; `\\x1b]52;c;...\\x07` sets the
clipboard. Every text renderer (validate, search, context packs, review parts, drift,
check-refs) passes what it prints through `visible`, and values that must stay on one line
(paths, symbols, header fields) through `one_line`. `--json` output is not passed through:
JSON escapes control characters itself, and keeps the exact text.

Shown as escapes: C0 controls except tab and newline (a carriage return only when it does not
end a CRLF line), DEL, C1 controls, the bidirectional overrides and isolates (which reorder what
a reader sees: "Trojan Source"), and lone surrogates (which cannot even be encoded for output).
"""
from __future__ import annotations

import re

# Everything `visible` escapes. \r before \n is a line end, nothing more.
_UNSAFE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]|\r(?!\n)")
# Everything `one_line` escapes: the above, and every character some line splitter breaks on
# (str.splitlines: \n \r \x0b \x0c \x1c-\x1e \x85 \u2028 \u2029).
_UNSAFE_ONE_LINE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _escape(m: re.Match[str]) -> str:
    code = ord(m.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def visible(text: str) -> str:
    """`text` with every control character shown as an escape (`\\x1b`, `\\x9b`, `\\u202e`);
    tab, newline and CRLF line ends stay as they are."""
    # Printable ASCII, tabs and newlines hold nothing to escape: most text skips the regex.
    if text.isascii() and text.replace("\n", "").replace("\t", "").isprintable():
        return text
    return _UNSAFE.sub(_escape, text)


def one_line(text: str) -> str:
    """`text` on one line: `visible`, and every line break escaped too (for a path, a symbol or
    a header field, where a newline would start a line of its own choosing)."""
    if text.isascii() and text.isprintable():
        return text
    return _UNSAFE_ONE_LINE.sub(_escape, text)


# What JSON leaves raw when it does not escape to ASCII: DEL, C1, bidi controls, surrogates.
_JSON_UNSAFE = re.compile("[\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def json_text(dumped: str) -> str:
    """JSON text (`json.dumps(..., ensure_ascii=False)`) with the characters JSON leaves raw but a
    terminal acts on written as `\\uXXXX` escapes: the same JSON value, exact text and all."""
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", dumped)


def plural(n: int, word: str, many: str | None = None) -> str:
    """`1 commit`, `2 commits`: a count with its noun in agreement (`many` for an irregular plural)."""
    return f"{n} {word}" if n == 1 else f"{n} {many or word + 's'}"


# A lone surrogate: what a name byte that is not UTF-8 becomes (git's paths are read with
# surrogateescape), or one decoded from a file's text. No tokenizer takes one (a TypeError in
# the real one, UnicodeEncodeError in the fake), and no JSON encoder that must write UTF-8 (the
# MCP server's): one untracked file named `bad\xff.py` failed every search in its tree.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _surrogate_escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    # surrogateescape's U+DC80..U+DCFF stand for the bytes 0x80..0xFF: written as that byte.
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"\\u{code:04x}"


def faithful(text: str) -> str:
    """`text` with every lone surrogate written as an escape (`bad\\xff.py` for the name byte
    0xFF); any other text as it is (the embedded text of every UTF-8 name is unchanged)."""
    return _LONE_SURROGATE.sub(_surrogate_escape, text) if not text.isascii() else text


def has_lone_surrogate(text: str) -> bool:
    """Whether `text` holds a lone surrogate: a name byte that is not UTF-8, read with
    surrogateescape. Such text cannot be written as UTF-8 (SQLite, JSON on the wire) as it is."""
    return not text.isascii() and _LONE_SURROGATE.search(text) is not None
