"""Symbol lookups over the syntax layer's definitions (pure; tree-sitter parsing, no I/O).

Snippets come from many tools, and each spells a symbol its own way. A lookup accepts:

- codevouch's own qualified names: `OrderService.cancel_order`, `outer.inner`;
- Python's `__qualname__`: `outer.<locals>.inner`;
- module-qualified names: `pkg.mod.Class.method` (the module matching the file's path),
  `pkg/mod.py::Class.method` (pytest), `crate::mod::Type::method` (Rust);
- `Class::method`, `Class#method`;
- Go receivers: `(*Server).Start`, `(Server).Start`, `Server.Start`.
"""
from __future__ import annotations

import re
import textwrap
from collections.abc import Mapping
from pathlib import PurePosixPath

from codevouch.syntax.lines import MODULE_SYMBOL
from codevouch.validator.parsecache import CACHE

Definitions = Mapping[str, list[tuple[int, int]]]

_GO_RECEIVER = re.compile(r"\(\s*\*?\s*([A-Za-z_]\w*)(?:\[[^\]]*\])?\s*\)")
_PATH_LIKE = re.compile(r"[/\\]|\.\w+$")
_RUST_ROOTS = ("crate.", "self.", "super.")


def definitions(text: str, path: str) -> dict[str, list[tuple[int, int]]]:
    """Qualified symbol -> line ranges; {} when the language is unsupported or parsing fails.
    Kept by content across calls (parsecache): the result is shared, never modify it.

    Imported lazily: tree-sitter grammars load only when a symbol is actually looked up.
    """
    from codevouch.syntax.definitions import find_definitions
    from codevouch.syntax.languages import detect_language
    language = detect_language(path, text)
    if language is None:
        return {}
    try:
        return CACHE.get("file", language, text, lambda: find_definitions(text, path))
    except Exception:  # noqa: BLE001 - a parser problem must not fail validation of the others
        return {}


def supported(path: str) -> bool:
    """Whether definitions can be found in files like `path` (a language with a grammar)."""
    from codevouch.syntax.languages import detect_language
    return detect_language(path) is not None


def piece_definitions(text: str, path: str) -> dict[str, list[tuple[int, int]]] | None:
    """Definitions in a top-level block cut out of a file; None unless it parses cleanly.
    Kept by content across calls, like `definitions`."""
    from codevouch.syntax.definitions import find_clean_definitions
    from codevouch.syntax.languages import detect_language
    language = detect_language(path, text)
    if language is None:
        return None
    try:
        return CACHE.get("piece", language, text, lambda: find_clean_definitions(text, path))
    except Exception:  # noqa: BLE001 - the caller falls back to the whole file
        return None


def text_definitions(text: str, path: str) -> dict[str, list[tuple[int, int]]]:
    """The definitions a snippet's own text contains (dedented first: a method cut out of its
    class is indented), with line numbers relative to the text."""
    return definitions(textwrap.dedent(text), path)


def holds_definitions(text_defs: Definitions, names: list[str], path: str) -> bool:
    """Whether a text's outermost definitions (`text_defs`: the definitions in a snippet's own
    text) include each of `names` by its own name: then, wherever that text is found verbatim,
    those definitions exist."""
    spans = [(a, b) for ranges in text_defs.values() for a, b in ranges]
    outermost = {own_name(name) for name, ranges in text_defs.items() for a, b in ranges
                 if not any(c <= a and b <= d and (c, d) != (a, b) for c, d in spans)}
    return bool(names) and all(own_name(spellings(n, path)[0]) in outermost for n in names)


def symbol_names(symbol: str | None) -> list[str]:
    """The real definition names in a chunk symbol (merged chunks join names with ", ")."""
    if not symbol:
        return []
    return [name.strip() for name in symbol.split(", ") if name.strip() and name.strip() != MODULE_SYMBOL]


def own_name(name: str) -> str:
    """The last component: `cancel_order` of `OrderService.cancel_order`."""
    return name.rsplit(".", 1)[-1]


def spellings(name: str, path: str) -> list[str]:
    """Candidate qualified names for a symbol as some tool spelled it, best first."""
    n = name.strip()
    if n.endswith("()"):
        n = n[:-2]
    if "::" in n:
        head, _, tail = n.partition("::")
        n = tail if _PATH_LIKE.search(head) else n   # pytest's `pkg/mod.py::Class::method`
        n = n.replace("::", ".")
    n = _GO_RECEIVER.sub(r"\1", n.replace("#", "."))
    n = n.replace(".<locals>.", ".").replace("<locals>.", "")
    for root in _RUST_ROOTS:
        if n.startswith(root):
            n = n[len(root):]
    out = [n]
    for prefix in _module_prefixes(path):
        if n.startswith(prefix + "."):
            out.append(n[len(prefix) + 1:])
    return list(dict.fromkeys(x for x in out if x))


def own_spelling(symbol: str | None, path: str) -> bool:
    """Whether every name in `symbol` is spelled as codevouch spells it (`Class.method`), with
    no other reading (`pkg.mod.Class`, `(*T).M`, `outer.<locals>.f` all have another one)."""
    names = symbol_names(symbol)
    return bool(names) and all(spellings(name, path) == [name] for name in names)


def _module_prefixes(path: str) -> list[str]:
    """Dotted module names the path can go by, longest first: `src/pkg/mod.py` -> `src.pkg.mod`,
    `pkg.mod`, `mod`, and the directories alone (`src.pkg`, `pkg`): a package's `__init__.py`,
    `index.js` or `mod.rs`, and Java's package before its class. The exact spelling is always
    tried first, so stripping only ever adds candidates."""
    p = PurePosixPath(path)
    parts = [x for x in (*p.parent.parts, p.stem) if x not in ("", ".", "/")]
    found = {".".join(parts[i:]) for i in range(len(parts))}
    found |= {".".join(parts[i:-1]) for i in range(len(parts) - 1)}
    return sorted((x for x in found if x), key=len, reverse=True)


def resolve(defs: Definitions, name: str, path: str) -> str | None:
    """The name under which `defs` defines the symbol `name` (in any spelling above), else None."""
    if name in defs:
        return name
    return next((c for c in spellings(name, path) if c in defs), None)


def lookup(defs: Definitions, symbol: str | None, near: int | None, path: str = "") -> tuple[int, int, str] | None:
    """Current (start, end, symbol) of the snippet's symbol: for a merged symbol, the span
    of the names still defined; for a name defined several times, the range nearest `near`."""
    found: list[tuple[str, tuple[int, int]]] = []
    for name in symbol_names(symbol):
        resolved = resolve(defs, name, path)
        ranges = defs.get(resolved) if resolved else None
        if resolved and ranges:
            pick = ranges[0] if near is None else min(ranges, key=lambda r: (abs(r[0] - near), r[0]))
            found.append((resolved, pick))
    if not found:
        return None
    start = min(r[0] for _, r in found)
    end = max(r[1] for _, r in found)
    return start, end, ", ".join(dict.fromkeys(name for name, _ in found))


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


def in_symbol(defs: Definitions, symbol: str | None, start: int, end: int, path: str = "") -> bool:
    """Whether lines start..end lie within (or exactly cover) a definition of the symbol."""
    names = [r for name in symbol_names(symbol) if (r := resolve(defs, name, path))]
    return any(s <= start and end <= e or (start <= s and e <= end)
               for name in names for s, e in defs.get(name, ()))
