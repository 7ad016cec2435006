"""Where another tool's window of text sits in a file, verbatim (pure: no I/O).

Text splitters (LangChain's, LlamaIndex's) hand over windows, not whole lines: a window may
start or end mid-line, has its leading and trailing whitespace stripped by default, may have
been read with CRLF where the file now has LF (or the other way round), and may carry a
character offset instead of line numbers. Those are the only differences forgiven; one
changed character inside the text is a changed window.

What is forgiven is what the window lacks, never what it holds: blanks it kept must be there.
Guards that keep the tolerance exact:
- a window that starts (ends) with a word character is not found right after (before) another
  one: `x = f()` is not inside `max = f()`, unless its own version shows it was cut there inside
  a word (a splitter falls back to cutting a token longer than its window at a character);
- where the snippet's own version of the file is at hand, the window must have the same
  surroundings as there: a window that began at a line's indentation (or ended at its end)
  must still, with the same indentation (trailing blanks), so a re-indented or extended line
  is a changed line; a window cut mid-line may sit mid-line;
- without that version, a window must begin at a line's indentation (at the line's start
  when the window kept its blanks) and end at the line's end, trailing blanks aside;
- a window found in several places is placed where its own version's lines are now: where
  the window sits in a run of lines that both versions share (edits above or below it moved
  it, nothing changed it), it is at that run's new place; else where its own lines or offset
  point; a block of MIN_SPAN lines or more, at the one place nearest to them; a shorter window
  (a closing brace, `return None`, `pass`) nowhere else: never "somewhere".
"""
from __future__ import annotations

import re
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

from codevouch.caches import clearable
from codevouch.validator.text import BOM

MAX_PLACES = 200    # a window that occurs more often than this cannot be placed
MIN_SPAN = 3        # lines a repeated window needs to be placed by nearness (see _nearest)


@dataclass(frozen=True)
class Place:
    """Where a window's text is in a file: its lines (1-based, the window's first and last line),
    its character offset there, and how the place was chosen."""
    start_line: int
    end_line: int
    offset: int        # offset of the window's first non-blank character in the file as given
    count: int         # how many places the text occurs in (MAX_PLACES at most)
    own: bool          # at the line or offset the snippet gives
    carried: bool = False   # where its own version's lines are now (_carried)


@dataclass(frozen=True)
class Window:
    """A window as the matcher needs it: its text and where the snippet says it is. The text is
    not stripped here: blanks a window kept at an end must be in the file too."""
    body: str                  # the text, with "\r\n" as "\n"
    start_line: int | None = None
    start_char: int | None = None

    @classmethod
    def of(cls, text: str, start_line: int | None = None, start_char: int | None = None) -> Window:
        """A trailing "\r" goes too: whole lines of a CRLF file, cut at "\n" (split_lines), end with
        the "\r" of the "\r\n" whose "\n" the cut left out."""
        return cls(text.replace("\r\n", "\n").removesuffix("\r"), start_line, start_char)


def _word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def locate(window: Window, hay: str, old: str | None = None) -> Place | None:
    """The place of `window` in `hay` (a file's text), or None: not there verbatim, or there more
    than once and at none of the places its lines or offset point to.

    `old` is the snippet's own version of the file, when known: where the window sits there
    decides what must surround it now. A window that began at a line's indentation (or ended at
    its end) there must do so here, with the same indentation (and trailing blanks): a whole-line
    chunk stays a whole-line match, and a re-indented line is a changed line."""
    if not window.body.strip():
        return None      # blank text is everywhere and proves nothing
    found = _locate(window, hay, old)
    if found is None and BOM in (window.body[:1], hay[:1], (old or "")[:1]):
        # A leading byte-order mark is not content (text.find_lines_verbatim): an editor adds or
        # drops it. Offsets stay those of the file as given.
        shift = len(BOM) if hay.startswith(BOM) else 0
        found = _locate(replace(window, body=window.body.removeprefix(BOM)), hay.removeprefix(BOM),
                        old.removeprefix(BOM) if old is not None else None)
        return replace(found, offset=found.offset + shift) if found is not None else None
    return found


def _locate(window: Window, hay: str, old: str | None) -> Place | None:
    """locate, the texts as given."""
    if not window.body.strip():
        return None
    # Where the window sits in its own version, found once: what must surround it, and where it is now.
    own = _own_place(window, old) if old is not None else None
    edges = _edges(window, old, own) if old is not None and own is not None else None
    anchor = _carried(window, old, hay, own) if old is not None and own is not None else None
    found = _places(window, hay, edges, anchor)
    if found is None:
        return None
    places, raw = found
    span = window.body.count("\n")
    offset, line, mine = places[0]
    return Place(line, line + span, raw(offset), len(places), mine, offset == anchor)


@dataclass(frozen=True)
class Edges:
    """What surrounded the window in its own version."""
    before: str | None        # the blanks before it on its first line; None: code
    after: str | None         # the blanks after it on its last line; None: code
    in_word_start: bool       # it began inside a word (cut at a character): it may again
    in_word_end: bool         # it ended inside a word


LOOSE = True                  # _fits' edges: anything may surround the window


def _places(window: Window, hay: str, edges: Edges | None | bool,
            anchor: int | None = None) -> tuple[list[tuple[int, int, bool]], Callable[[int], int]] | None:
    """The chosen place first ((LF offset, start line, own)), with every place it was chosen
    from, and the map from LF offsets to offsets in `hay`; None when there is no place to choose.
    `anchor`: the LF offset its own version's place is at now (_carried), chosen before all others."""
    lf = hay.replace("\r\n", "\n") if "\r" in hay else hay
    # LF-text offsets of the "\r"s dropped from "\r\n" (to give offsets in the file as given).
    crs = _dropped(hay) if lf is not hay else []

    def raw(offset: int) -> int:
        return offset + bisect_left(crs, offset)

    places: list[tuple[int, int, bool]] = []
    scan = _Scan(lf)
    pos = lf.find(window.body)
    while pos != -1 and len(places) < MAX_PLACES:
        scan.move(pos)
        if _fits(window, scan, pos, edges):
            places.append((pos, scan.line, scan.line == window.start_line or window.start_char in (pos, raw(pos))))
        elif _line_spent(scan, pos, edges):      # no later start on this line fits either: the next line
            newline = lf.find("\n", pos)
            pos = -1 if newline == -1 else lf.find(window.body, newline + 1)
            continue
        pos = lf.find(window.body, pos + 1)
    if anchor is not None and all(p[0] != anchor for p in places) and lf.startswith(window.body, anchor):
        at = _Scan(lf)      # past the first MAX_PLACES: its own place is known
        at.move(anchor)
        if _fits(window, at, anchor, edges):
            places.append((anchor, at.line, at.line == window.start_line or window.start_char in (anchor, raw(anchor))))
    chosen = _chosen(window, places, anchor)
    return (chosen, raw) if chosen is not None else None


def _chosen(window: Window, places: list[tuple[int, int, bool]],
            anchor: int | None) -> list[tuple[int, int, bool]] | None:
    """`places` with the chosen one first: where its own version's place is now (`anchor`), else
    at its own lines or offset, else the one nearest to them; None when none can be chosen."""
    if not places:
        return None
    carried = [p for p in places if p[0] == anchor]
    if carried:
        return carried + [p for p in places if p[0] != anchor]
    mine = [p for p in places if p[2]]
    if len(places) > 1 and not mine:
        near = _nearest(window, places)
        return [near] + [p for p in places if p is not near] if near is not None else None
    return mine + [p for p in places if not p[2]]


def _nearest(window: Window, places: list[tuple[int, int, bool]]) -> tuple[int, int, bool] | None:
    """Among several places, none at the window's own position: the one nearest to it, for a
    window of MIN_SPAN lines or more (a block repeated in a file, such as a docstring shared by
    a sync and an async method, shifted by edits above it), when exactly one is nearest. A
    shorter window (a brace, `return None`, `pass`) is never placed by nearness."""
    if window.body.strip().count("\n") + 1 < MIN_SPAN:
        return None
    if window.start_line is not None:
        key = [abs(line - window.start_line) for _, line, _ in places]
    elif window.start_char is not None:
        key = [abs(offset - window.start_char) for offset, _, _ in places]
    else:
        return None
    best = min(key)
    return places[key.index(best)] if key.count(best) == 1 else None


def _carried(window: Window, old: str, hay: str, own: tuple[int, int]) -> int | None:
    """The LF offset in `hay` where the window is now, carried from its place in its own version
    (`old`, at `own`: _own_place) through a run of lines both versions share; None when its lines
    changed."""
    pos, line = own
    old_lf, lf = old.replace("\r\n", "\n"), hay.replace("\r\n", "\n")
    first = line - 1                            # 0-based, in old
    last = first + window.body.count("\n")
    column = pos - _line_starts(old_lf)[first]
    lines = _split(old_lf)
    for a, b, size in _shared_runs(old_lf, lf):
        # The run must hold code beyond the window's own lines: a lone `return None` matched
        # with a blank line says nothing about which of its copies it is.
        if a <= first and last < a + size and \
                any(lines[k].strip() for k in range(a, a + size) if not first <= k <= last):
            return _line_starts(lf)[first + b - a] + column
    return None


@clearable
@lru_cache(maxsize=8)
def _split(text: str) -> list[str]:
    return text.split("\n")


@clearable
@lru_cache(maxsize=8)
def _line_starts(text: str) -> tuple[int, ...]:
    starts, at = [0], text.find("\n")
    while at != -1:
        starts.append(at + 1)
        at = text.find("\n", at + 1)
    return tuple(starts)


@clearable
@lru_cache(maxsize=8)
def _shared_runs(old: str, new: str) -> tuple[tuple[int, int, int], ...]:
    """Runs of lines the two texts share, as (start in old, start in new, length), 0-based, in
    linear time whatever the texts (a patience diff's anchoring): each line that occurs once in
    each text, in the longest order both texts keep, extended over the equal lines around it;
    then the common first lines; the common last lines only where no line anchors a run (they
    may align a repeated line with the wrong copy). Cached: a file's windows share the pair."""
    a, b = _split(old), _split(new)
    runs: list[tuple[int, int, int]] = []
    end_a = end_b = 0
    for i, j in _anchors(a, b):
        if i < end_a:
            continue       # inside the run before it: the equal lines it was extended over
        start_i, start_j = i, j
        while start_i > end_a and start_j > end_b and a[start_i - 1] == b[start_j - 1]:
            start_i, start_j = start_i - 1, start_j - 1
        end_a, end_b = i + 1, j + 1
        while end_a < len(a) and end_b < len(b) and a[end_a] == b[end_b]:
            end_a, end_b = end_a + 1, end_b + 1
        runs.append((start_i, start_j, end_a - start_i))
    head = _common_length(a, b)
    runs.append((0, 0, head))
    if len(runs) == 1:
        tail = _common_length(a[head:][::-1], b[head:][::-1])
        runs.append((len(a) - tail, len(b) - tail, tail))
    return tuple(r for r in runs if r[2])


def _anchors(a: Sequence[str], b: Sequence[str]) -> list[tuple[int, int]]:
    """(i, j) of the lines that occur once in `a` and once in `b`, the longest chain of them
    in the same order in both (patience sorting: a longest increasing subsequence of j)."""
    once_a = {line: i for i, line in enumerate(a) if line.strip()}
    seen_a = Counter(a)
    seen_b = Counter(b)
    pairs = sorted((once_a[line], j) for j, line in enumerate(b)
                   if seen_b[line] == 1 and seen_a[line] == 1 and line in once_a)
    tops: list[int] = []                   # tops[k]: the least j ending a chain of k + 1
    ends: list[int] = []                   # the pair index at each top
    before: list[int] = [-1] * len(pairs)  # each pair's predecessor in its chain
    for n, (_, j) in enumerate(pairs):
        k = bisect_left(tops, j)
        before[n] = ends[k - 1] if k else -1
        if k == len(tops):
            tops.append(j)
            ends.append(n)
        else:
            tops[k], ends[k] = j, n
    chain, n = [], ends[-1] if ends else -1
    while n != -1:
        chain.append(pairs[n])
        n = before[n]
    return chain[::-1]


def _common_length(a: Sequence[str], b: Sequence[str]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def _own_place(window: Window, old: str) -> tuple[int, int] | None:
    """(LF offset, line) of the window in its own version: at the offset the snippet gives, else
    on the line it gives, else its one place (or the one nearest to its lines); None when that
    version does not hold it there. Direct, not by search: a `{` may occur thousands of times."""
    lf = old.replace("\r\n", "\n") if "\r" in old else old
    if window.start_char is not None:
        pos = window.start_char - (old.count("\r\n", 0, window.start_char) if lf is not old else 0)
        if lf.startswith(window.body, pos):
            return pos, lf.count("\n", 0, pos) + 1
    if window.start_line is not None and window.start_line >= 1:
        starts = _line_starts(lf)
        if window.start_line <= len(starts):
            at = starts[window.start_line - 1]
            stop = lf.find("\n", at)
            pos = lf.find(window.body, at, len(lf) if stop == -1 else stop + len(window.body))
            if pos != -1:
                return pos, window.start_line
    found = _places(window, old, LOOSE)
    return None if found is None else (found[0][0][0], found[0][0][1])


def _edges(window: Window, old: str, own: tuple[int, int]) -> Edges:
    """What surrounds the window on its first and last line in its own version, at `own` (the
    place its lines or offset point to, or its one place: _own_place)."""
    lf = old.replace("\r\n", "\n")
    pos = own[0]
    end = pos + len(window.body)
    prefix = lf[lf.rfind("\n", 0, pos) + 1:pos]
    stop = lf.find("\n", end)
    suffix = lf[end:stop if stop != -1 else len(lf)]
    body = window.body
    return Edges(None if prefix.strip() else prefix, None if suffix.strip() else suffix,
                 _word(body[0]) and pos > 0 and _word(lf[pos - 1]),
                 _word(body[-1]) and end < len(lf) and _word(lf[end]))


def _dropped(hay: str) -> list[int]:
    dropped: list[int] = []
    at = hay.find("\r\n")
    while at != -1:
        dropped.append(at - len(dropped))
        at = hay.find("\r\n", at + 2)
    return dropped


def _cuts_words(body: str, lf: str, pos: int, end: int, cut: Edges | None) -> bool:
    """Whether the occurrence of `body` at `pos` (to `end`) starts right after, or ends right
    before, a word character, where its own version (`cut`) does not show it cut inside a word."""
    if _word(body[0]) and pos > 0 and _word(lf[pos - 1]) and not (cut and cut.in_word_start):
        return True
    return _word(body[-1]) and end < len(lf) and _word(lf[end]) and not (cut and cut.in_word_end)


class _Scan:
    """Where the lines are around the occurrences of a window in a text, met in increasing order:
    each character is looked at a bounded number of times whatever the number of occurrences (a
    short window repeated 500,000 times in one long line cost 22 s per snippet when each one
    sliced its line)."""

    def __init__(self, lf: str) -> None:
        self.lf = lf
        self.line = 1               # the number of the line holding `_at`
        self.start = 0              # where that line starts
        self._at = 0
        self._stop = -1             # the first "\n" (or the text's end) at or after the last end asked
        self._first: tuple[int, int] = (-1, 0)   # (a line's start, its first non-blank at or after it)
        self._trail: tuple[int, int] = (-1, 0)   # (a line's stop, where its trailing blanks begin)

    def move(self, pos: int) -> None:
        newlines = self.lf.count("\n", self._at, pos)
        if newlines:
            self.line += newlines
            self.start = self.lf.rfind("\n", self._at, pos) + 1
        self._at = pos

    def stop(self, end: int) -> int:
        """The end of the line holding offset `end` (its "\n", or the text's end)."""
        if self._stop < end:
            found = self.lf.find("\n", end)
            self._stop = len(self.lf) if found == -1 else found
        return self._stop

    def first_nonblank(self) -> int:
        """The offset of the first non-blank character at or after the current line's start."""
        if self._first[0] != self.start:
            found = _NONBLANK.search(self.lf, self.start)
            self._first = (self.start, found.start() if found else len(self.lf))
        return self._first[1]

    def trailing_blanks(self, stop: int) -> int:
        """Where the blanks that end the line ending at `stop` begin."""
        if self._trail[0] != stop:
            begin = self.lf.rfind("\n", 0, stop) + 1
            self._trail = (stop, begin + len(self.lf[begin:stop].rstrip()))
        return self._trail[1]


_NONBLANK = re.compile(r"\S")     # not str.isspace(), as str.strip() counts blanks


def _line_spent(scan: _Scan, pos: int, edges: Edges | None | bool) -> bool:
    """Whether no occurrence starting after `pos` on its line can fit: the window must start at
    the line's first non-blank (no version of its own), or at its version's indentation, and
    `pos` is past that."""
    if edges is None:
        return scan.first_nonblank() < pos
    return isinstance(edges, Edges) and edges.before is not None and pos - scan.start > len(edges.before)


def _fits(window: Window, scan: _Scan, pos: int, edges: Edges | None | bool) -> bool:
    """Whether the occurrence of the window's body at `pos` (`scan` moved there) is the window
    verbatim (the guards in the module's docstring). `edges`: what must surround it (from its
    own version), None for line edges, LOOSE for any surroundings (to find it in its own
    version: where it was cut there, inside a word or not, is what that version shows)."""
    if edges is LOOSE:
        return True
    lf, body, end = scan.lf, window.body, pos + len(window.body)
    cut = edges if isinstance(edges, Edges) else None
    if _cuts_words(body, lf, pos, end, cut):
        return False
    start, stop = scan.start, scan.stop(end)
    if cut is not None:
        # The surroundings compared only where their lengths agree: once per line at most.
        return ((cut.before is None or (pos - start == len(cut.before) and lf[start:pos] == cut.before))
                and (cut.after is None or (stop - end == len(cut.after) and lf[end:stop] == cut.after)))
    # Without its own version to show where the window was cut, it must sit at line edges (a
    # whole line that grew, `# demo` -> `# demo, edited`, is changed), and blanks the window
    # kept at an end mean it began (ended) there: a kept indentation is the line's own.
    if body[0].isspace() and pos > start or scan.first_nonblank() < pos:
        return False
    return not (body[-1].isspace() and stop > end or scan.trailing_blanks(stop) > end)
