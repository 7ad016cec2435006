"""Where a snippet's code is in a file now: the Current a decision points at (pure: no I/O).

Found by its text (find_text, pick: which occurrence), by its own lines (claimed), by its
symbol's definition (find_symbol), and named by the definition that encloses it
(named_range). decide.py chooses among them; nothing here decides a verdict.
"""
from __future__ import annotations

from codevouch.validator import symbols
from codevouch.validator.facts import Facts, WorkFile
from codevouch.validator.model import Current, Snippet
from codevouch.validator.text import nearest


def find_text(s: Snippet, text: str | None, real: str, work: WorkFile, facts: Facts) -> Current | None:
    """Where `text` is in the file `real` now, the occurrence pick() chooses; None when it is
    not there, or blank."""
    if not text or not text.strip():
        return None      # blank text "occurs" everywhere and proves nothing
    hits = facts.hits(text, real)
    return pick(s, hits, real, work, facts, needle=text) if hits else None


def pick(s: Snippet, hits: list[tuple[int, int]], real: str, work: WorkFile, facts: Facts,
         identical: bool = False, needle: str | None = None) -> Current:
    """Several occurrences: prefer one inside the snippet's symbol, then the nearest to its old lines.

    At the snippet's own lines the snippet's symbol is kept without parsing the file (parsing
    every referenced file just to re-derive a name the indexer already gave was most of the
    validator's time) when the file is identical to the indexed one, or when the text holds
    the definitions it names (or names none): code that stayed put, verbatim, with its
    definition lines, is still what it was. So is code pushed up or down with its whole
    top-level block unchanged, when the snippet spells its symbol as codevouch does. Wherever
    else the code moved, the name is re-derived from the current file.
    """
    own_lines = (s.start_line, s.end_line) if s.start_line is not None and s.end_line is not None else None
    if identical and own_lines is not None and own_lines in hits:
        # The file is the indexed one and the text is at the snippet's own lines: that is the
        # chunk the index cut there, whatever repeats of its text the file holds elsewhere, so
        # no parse is needed to tell the occurrences apart (a large file's was most of a
        # validated search's tail).
        hits = [own_lines]
    if len(hits) > 1 and symbols.symbol_names(s.symbol):
        defs = facts.defs(real)
        own = [h for h in hits if symbols.in_symbol(defs, s.symbol, *h, path=real)]
        hits = own or hits
    start, end = nearest(hits, s.start_line)
    if s.symbol and (start, end) == (s.start_line, s.end_line):
        text = _hit_text(needle, real, start, end, facts)
        if identical or facts.unchanged_through(s, real, end) or facts.intact_block(s, real, start, end) \
                or holds_its_definitions(s.symbol, text, real, facts):
            return Current(real, start, end, text, s.symbol)
    elif s.symbol and symbols.own_spelling(s.symbol, real) and facts.intact_block(s, real, start, end):
        # Shifted by lines added or removed above it, with the top-level block around it as it
        # was: the same code under the same names. Another tool's spelling is re-derived.
        return Current(real, start, end, _hit_text(needle, real, start, end, facts), s.symbol)
    return named_range(real, start, end, work, facts, s.symbol)


def _hit_text(needle: str | None, real: str, start: int, end: int, facts: Facts) -> str:
    """The working-tree lines of a hit: the needle itself when it was found verbatim (only a
    CRLF-tolerant hit differs from it)."""
    return needle if needle is not None and facts.verbatim(needle, real) else facts.lines(real, start, end)


def holds_its_definitions(symbol: str | None, text: str, path: str, facts: Facts) -> bool:
    """Whether `text` holds, at its outermost level, a definition of each name in `symbol` (by
    its own name); True for a symbol that names no definition (`<module>`)."""
    names = symbols.symbol_names(symbol)
    return not names or symbols.holds_definitions(facts.text_defs(text, path), names, path)


def claimed(s: Snippet, real: str, work: WorkFile, facts: Facts) -> Current | None:
    """The snippet's own line range in the (unchanged) working-tree file."""
    if s.start_line is None or s.end_line is None or s.start_line > facts.line_total(real):
        return None
    end = min(s.end_line, facts.line_total(real))
    if s.symbol and end == s.end_line:
        return Current(real, s.start_line, end, facts.lines(real, s.start_line, end), s.symbol)
    return named_range(real, s.start_line, end, work, facts, s.symbol)


def find_symbol(s: Snippet, real: str, work: WorkFile, facts: Facts) -> Current | None:
    """The symbol's definition now: looked for in the top-level block at the snippet's old
    lines first (a fraction of a parse), then in the whole file."""
    names = symbols.symbol_names(s.symbol)
    if not names:
        return None
    found = None
    if s.start_line is not None and s.start_line <= facts.line_total(real):
        near = facts.defs_near(real, s.start_line, min(s.end_line or s.start_line, facts.line_total(real)))
        if all(symbols.resolve(near, n, real) for n in names):
            found = symbols.lookup(near, s.symbol, s.start_line, real)
    found = found or symbols.lookup(facts.defs(real), s.symbol, s.start_line, real)
    if found is None:
        return None
    start, end, name = found
    return Current(real, start, end, facts.lines(real, start, end), name)


def named_range(real: str, start: int, end: int, work: WorkFile, facts: Facts, fallback: str | None) -> Current:
    """A located range, named by the definition that encloses it now (which may differ from
    the snippet's symbol: a method moved to another class keeps its text, not its name)."""
    if not symbols.supported(real):
        return Current(real, start, end, facts.lines(real, start, end), fallback)
    name = symbols.enclosing(facts.defs_near(real, start, end), start, end) or symbols.MODULE_SYMBOL
    return Current(real, start, end, facts.lines(real, start, end), name)
