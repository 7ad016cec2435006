"""Code that moved to another file: which line to look for, and what the candidates say (pure).

A snippet whose symbol left its file (or whose file is gone without a traceable rename) may
live on elsewhere in the working tree. Its definition line (`def helper(x):`) is the needle:
one `git grep -F` for all such needles together (facts.find_elsewhere) lists the files that
hold it, and `best_move` picks the definition there.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from codevouch.validator import symbols
from codevouch.validator.text import find_lines

# Lines that mention a name without defining it: comments, decorators, attributes.
_NOT_A_DEFINITION = ("#", "//", "/*", "*", "@", "--")
_MIN_NEEDLE = 6      # shorter lines (`fn f(`) would match too much to mean anything


def needle(symbol: str | None, text: str | None, path: str) -> str | None:
    """The line of `text` that defines the snippet's (first) symbol, stripped; None if none does."""
    names = symbols.symbol_names(symbol)
    if not names or not text:
        return None
    own = symbols.own_name(symbols.spellings(names[0], path)[0])
    word = re.compile(rf"(?<![\w$]){re.escape(own)}(?![\w$])")
    for line in text.split("\n"):
        stripped = line.strip()
        if stripped.startswith(_NOT_A_DEFINITION) or not word.search(stripped):
            continue
        return stripped if len(stripped) >= _MIN_NEEDLE else None
    return None


@dataclass(frozen=True)
class Move:
    path: str
    start_line: int
    end_line: int
    symbol: str
    same_text: bool       # the snippet's text is there verbatim, inside that definition


def best_move(symbol: str | None, text: str | None, path: str,
              candidates: dict[str, tuple[str, dict[str, list[tuple[int, int]]]]]) -> Move | None:
    """The definition of the snippet's symbol among candidate files (path -> (text, definitions)).

    A candidate counts only when it defines the symbol by its own name. `same_text` (the code
    is still current, elsewhere) needs both the snippet's text verbatim inside the definition
    and the same qualified name: small functions with common names (`index`, `run`) recur
    across files, and an identical body under another class or function is not this code
    moved. Ranking: same text (the whole definition before a part of one), then the qualified
    name, then the path order. A part of a definition that several files hold verbatim under
    that name (a namespace's `namespace leveldb {`, open in every file of it) moved to none of
    them in particular: no move. A whole definition found so (a small helper copied into several
    files) is that code wherever it is.
    """
    names = symbols.symbol_names(symbol)
    if not names:
        return None
    wanted = symbols.spellings(names[0], path)
    ranked = [found for cand, (content, defs) in sorted(candidates.items())
              for found in _moves_in(cand, find_lines(text, content) if text and text.strip() else [], defs, wanted)]
    same = [(key, move) for key, move in ranked if move.same_text]
    if len({move.path for _, move in same}) > 1 and all(key[1] for key, _ in same):     # parts only
        return None
    return min(ranked, key=lambda r: r[0])[1] if ranked else None


def _moves_in(cand: str, hits: list[tuple[int, int]], defs: dict[str, list[tuple[int, int]]],
              wanted: list[str]) -> list[tuple[tuple[int, bool, int, str], Move]]:
    """Each definition of the snippet's own name in file `cand` (the snippet's text found at
    `hits` there), as a move with its rank: same text first, then (among those) the text being
    the whole definition rather than a part of it, then the qualified name, then the path."""
    own = symbols.own_name(wanted[0])
    out: list[tuple[tuple[int, bool, int, str], Move]] = []
    for name, ranges in defs.items():
        if symbols.own_name(name) != own:
            continue
        exact = any(name == w or name.endswith("." + w) for w in wanted)
        for start, end in ranges:
            inside = [h for h in hits if start <= h[0] and h[1] <= end or h[0] <= start and end <= h[1]]
            if inside and exact:
                move = Move(cand, inside[0][0], inside[0][1], name, True)
            else:
                move = Move(cand, start, end, name, False)
            whole = move.same_text and inside[0][0] <= start and end <= inside[0][1]
            out.append(((0 if move.same_text else 1, not whole, 0 if exact else 1, cand), move))
    return out
