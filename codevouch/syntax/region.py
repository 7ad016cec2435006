"""The top-level block of a file around some lines, found from indentation alone (pure).

Naming the definition around a few lines needs the definitions of the whole file, and a
parse costs milliseconds per file. Top-level code starts at column 0 in every supported
language, so the block around lines `start..end` runs from the nearest column-0 line at or
above `start` (with the decorators, attributes and comments stacked on it) to the line
before the next column-0 line below `end` (closing brackets at column 0 stay with the block).
Parsed alone, that block names its definitions exactly as the whole file would, provided it
parses without errors: a column-0 line inside a multi-line string can mislead the cut, and
then the parse of the piece fails and the caller falls back to the whole file.
"""

from __future__ import annotations

__all__ = ["region_context", "top_level_region"]

_ATTACHED = ("@", "#", "//", "/*", "*")   # decorators, attributes, comments: stacked onto a block
_CLOSING = ("}", ")", "]")


def _starts_block(line: str) -> bool:
    return bool(line) and not line[0].isspace() and not line.startswith(_CLOSING + _ATTACHED)


def top_level_region(lines: list[str], start: int, end: int) -> tuple[int, int]:
    """0-based inclusive rows of the top-level block holding rows start..end (0-based)."""
    first, last, _, _ = region_context(lines, start, end)
    return first, last


def region_context(lines: list[str], start: int, end: int) -> tuple[int, int, int, int]:
    """top_level_region's (first, last), and the rows lo..hi-1 it looked at to find them: the
    same rows at a shifted place decide the same block there (hi == len(lines) or lo == 0 when
    the cut reached an end of the file, which a shifted place must reach too)."""
    # The two scans are _starts_block inlined: they visit every row of a large class.
    not_blocks = _CLOSING + _ATTACHED
    first = start
    while first > 0:
        line = lines[first]
        if line and not line[0].isspace() and not line.startswith(not_blocks):
            break
        first -= 1
    while first > 0 and lines[first - 1].startswith(_ATTACHED):
        first -= 1
    stop, count = end + 1, len(lines)
    while stop < count:
        line = lines[stop]
        if line and not line[0].isspace() and not line.startswith(not_blocks):
            break
        stop += 1
    last = stop - 1
    while last > end and (not lines[last].strip() or lines[last].startswith(_ATTACHED)):
        last -= 1      # the next block's comments and decorators are its own
    return first, last, max(first - 1, 0), min(stop + 1, len(lines))
