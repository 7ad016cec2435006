"""Pure text helpers: where a snippet's text sits in a file, as whole lines.

Lines are numbered by "\\n" only, 1-based, the same way the indexer numbers chunks
(a chunk's text is "\\n".join(lines[start-1:end])).
"""
from __future__ import annotations

from codevouch.syntax.lines import split_lines

BOM = "\ufeff"
MAX_HITS = 200   # a snippet that occurs more often than this is not a useful location anyway


def slice_lines(text: str, start: int, end: int) -> str:
    return "\n".join(split_lines(text)[start - 1:end])


def line_count(text: str) -> int:
    """The lines a file has, as editors and `wc -l` count them: the empty string after a final
    "\n" is no line (split_lines lists it, and no chunk ever ends on it), an empty file has none,
    and a last line without a "\n" counts."""
    return text.count("\n") + (text != "" and not text.endswith("\n"))


def find_lines(needle: str, hay: str) -> list[tuple[int, int]]:
    """(start_line, end_line) of every place `needle` occurs in `hay` as whole lines.

    Exact first. Only if that finds nothing, line terminators are compared the way git
    does with eol conversion ("\\r\\n" == "\\n"): a CRLF working-tree file holds the same
    content as the LF blob the indexer read, and must not look changed.
    """
    return find_lines_verbatim(needle, hay)[0]


def find_lines_verbatim(needle: str, hay: str) -> tuple[list[tuple[int, int]], bool]:
    """find_lines' hits, and whether they are the needle verbatim: then the lines of `hay` at a
    hit are exactly `needle` (lines split on "\\n" only), and need not be cut out again."""
    hits = _find(needle, hay)
    if not hits and (needle.startswith(BOM) or hay.startswith(BOM)):
        # A leading byte-order mark is not content: an editor adds or drops it, and a snippet
        # read without it is the same text (it sits inside line 1, so line numbers hold).
        return find_lines_verbatim(needle.removeprefix(BOM), hay.removeprefix(BOM))[0], False
    if not hits and ("\r" in hay or "\r" in needle):
        return _find(needle.replace("\r\n", "\n"), hay.replace("\r\n", "\n")), False
    return hits, True


def _find(needle: str, hay: str) -> list[tuple[int, int]]:
    # A trailing "\n" is an empty last line here (the indexer's convention); parse.py strips
    # it beforehand when the snippet's line numbers say it is only a terminator.
    return _whole_line_hits(needle, hay)


# Long needles are looked for by their first PROBE characters, each place checked for the
# whole needle with startswith: str.find picks a linear two-way search for long needles, and
# a short probe's skipping search is two to three times faster here. Exactly the same places
# are found (every occurrence of the needle is one of its probe); a probe that keeps matching
# where the needle does not (MAX_PROBE_MISSES) hands the rest to a plain find.
PROBE = 128
MAX_PROBE_MISSES = 32


def _next(needle: str, hay: str, start: int) -> int:
    """hay.find(needle, start)."""
    if len(needle) <= PROBE:
        return hay.find(needle, start)
    probe = needle[:PROBE]
    pos = hay.find(probe, start)
    misses = 0
    while pos != -1 and not hay.startswith(needle, pos):
        misses += 1
        if misses > MAX_PROBE_MISSES:
            return hay.find(needle, pos)
        pos = hay.find(probe, pos + 1)
    return pos


def _whole_line_hits(needle: str, hay: str) -> list[tuple[int, int]]:
    if not needle:
        return []
    pos = _next(needle, hay, 0)              # C speed; a miss ends here after one pass
    if pos < 0:
        return []
    span = needle.count("\n")
    hits: list[tuple[int, int]] = []
    line, counted = 1, 0                     # line number at offset `counted`
    while pos != -1 and len(hits) < MAX_HITS:
        end = pos + len(needle)
        at_line_start = pos == 0 or hay[pos - 1] == "\n"
        at_line_end = end == len(hay) or hay[end] == "\n"
        if at_line_start and at_line_end:
            # str.count runs in C; a per-file table of line starts built in Python cost more.
            # Counted on from the previous hit, not from the top again.
            line += hay.count("\n", counted, pos)
            counted = pos
            hits.append((line, line + span))
        pos = _next(needle, hay, pos + 1)
    return hits


def nearest(hits: list[tuple[int, int]], line: int | None) -> tuple[int, int]:
    """The hit closest to the old start line (the first one when the line is unknown)."""
    if line is None or len(hits) == 1:
        return hits[0]
    return min(hits, key=lambda h: (abs(h[0] - line), h[0]))
