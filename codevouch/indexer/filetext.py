"""Turning a file's bytes into indexable text, or a reason not to. Pure functions."""
from __future__ import annotations

from codevouch.syntax.lines import BINARY_SNIFF, decode
from codevouch.worktree.rules import Rules

__all__ = ["decode", "skip_reason"]

_MINIFIED_LINE = 1000        # one line this long in a code file: minified or generated data
_MINIFIED_AVERAGE = 300      # or lines this long on average


def skip_reason(data: bytes, rules: Rules) -> str | None:
    """Why a file's content is not embedded: empty, binary, huge or minified; None to index it."""
    if not data.strip():
        return "empty"
    if len(data) > rules.max_file_bytes:
        return f"huge (>{rules.max_file_bytes} bytes)"
    if b"\0" in data[:BINARY_SNIFF]:
        return "binary"
    lines = data.split(b"\n")
    longest = max(len(line) for line in lines)
    if longest > _MINIFIED_LINE and (longest > 10 * _MINIFIED_LINE or len(data) / len(lines) > _MINIFIED_AVERAGE):
        return "minified (very long lines)"
    return None
