"""Symbol lookups over the syntax layer's definitions (pure; tree-sitter parsing, no I/O)."""
from __future__ import annotations

from collections.abc import Mapping

from codevouch.syntax.lines import MODULE_SYMBOL

Definitions = Mapping[str, list[tuple[int, int]]]


def definitions(text: str, path: str) -> dict[str, list[tuple[int, int]]]:
    """Qualified symbol -> line ranges; {} when the language is unsupported or parsing fails.

    Imported lazily: tree-sitter grammars load only when a symbol is actually looked up.
    """
    from codevouch.syntax.definitions import find_definitions
    try:
        return find_definitions(text, path)
    except Exception:  # noqa: BLE001 - a parser problem must not fail validation of the others
        return {}


def symbol_names(symbol: str | None) -> list[str]:
    """The real definition names in a chunk symbol (merged chunks join names with ", ")."""
    if not symbol:
        return []
    return [name.strip() for name in symbol.split(", ") if name.strip() and name.strip() != MODULE_SYMBOL]


def lookup(defs: Definitions, symbol: str | None, near: int | None) -> tuple[int, int, str] | None:
    """Current (start, end, symbol) of the snippet's symbol: for a merged symbol, the span
    of the names still defined; for a name defined several times, the range nearest `near`."""
    found: list[tuple[str, tuple[int, int]]] = []
    for name in symbol_names(symbol):
        ranges = defs.get(name)
        if ranges:
            pick = ranges[0] if near is None else min(ranges, key=lambda r: (abs(r[0] - near), r[0]))
            found.append((name, pick))
    if not found:
        return None
    start = min(r[0] for _, r in found)
    end = max(r[1] for _, r in found)
    return start, end, ", ".join(name for name, _ in found)


def enclosing(defs: Definitions, start: int, end: int) -> str | None:
    """The innermost definition that contains lines start..end, or the ones inside it when
    the range spans several (a merged chunk); None for top-level code."""
    containing = [(e - s, name) for name, ranges in defs.items() for s, e in ranges
                  if s <= start and end <= e]
    if containing:
        return min(containing)[1]
    inside = sorted((s, e, name) for name, ranges in defs.items() for s, e in ranges
                    if start <= s and e <= end)
    # Only the outermost ones: a merged chunk of methods is "A.f, A.g", not "A.f, A.f.inner".
    outer = [(s, e, name) for s, e, name in inside
             if not any(s2 <= s and e <= e2 and (s2, e2) != (s, e) for s2, e2, _ in inside)]
    names = list(dict.fromkeys(name for _, _, name in outer))
    return ", ".join(names) if names else None


def in_symbol(defs: Definitions, symbol: str | None, start: int, end: int) -> bool:
    """Whether lines start..end lie within (or exactly cover) a definition of the symbol."""
    names = symbol_names(symbol)
    return any(s <= start and end <= e or (start <= s and e <= end)
               for name in names for s, e in defs.get(name, ()))
