"""Line numbering shared by the indexer, the validator and everything that cites lines."""

from __future__ import annotations

__all__ = ["BINARY_SNIFF", "MODULE_SYMBOL", "cut_text", "decode", "split_lines"]

# The symbol of code outside any definition (imports, module-level statements).
MODULE_SYMBOL = "<module>"

BINARY_SNIFF = 8000         # git's own heuristic: a NUL in the first 8000 bytes means binary


def split_lines(text: str) -> list[str]:
    """Lines split on ``"\\n"`` only, matching tree-sitter's row numbering.

    Line N (1-based) of a file is ``split_lines(text)[N - 1]``; a chunk's text is exactly
    ``"\\n".join(split_lines(text)[start - 1:end])``.
    """
    return text.split("\n")


def decode(data: bytes) -> str:
    """A file's bytes as text: UTF-8 when it is, else Latin-1 (which maps every byte, so
    nothing is ever dropped); indexer and validator must read a file the same way."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def cut_text(text: str, limit: int) -> tuple[str, int] | None:
    """`text` cut to at most `limit` characters at a line's end: (what is kept, how many whole
    lines that is: 0 when the first line alone is longer than `limit` and its first `limit`
    characters are kept); None when the whole text fits."""
    if len(text) <= limit:
        return None
    end = text.rfind("\n", 0, limit + 1)
    if end < 0:
        return text[:limit], 0
    kept = text[:end]
    return kept, kept.count("\n") + 1
