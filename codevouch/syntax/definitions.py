"""Where each symbol is defined in a file: qualified name -> line ranges (pure)."""

from __future__ import annotations

from codevouch.syntax.languages import SUPPORTED_LANGUAGES, detect_language, get_spec
from codevouch.syntax.tree import Item, Syntax, parse

__all__ = ["Definitions", "find_definitions", "resolve_language"]

# qualified symbol -> (start, end) line ranges, 1-based inclusive, in file order
Definitions = dict[str, list[tuple[int, int]]]


def resolve_language(path: str, language: str | None) -> str | None:
    """``language`` when given and supported, else the language of ``path``'s extension."""
    if language is None:
        return detect_language(path)
    return language if language in SUPPORTED_LANGUAGES else None


def find_definitions(text: str, path: str, language: str | None = None) -> Definitions:
    """Every qualified symbol defined in ``text`` -> its (start, end) line
    ranges (1-based, inclusive, with decorators and doc comments), in file
    order.  Names are exactly those the chunker uses as symbols;
    ``<module>`` is not a definition and never appears.  Nested functions
    are part of their parent and are not listed.  Unsupported language or a
    parser failure -> ``{}``.
    """
    lang = resolve_language(path, language)
    if lang is None or not text.strip():
        return {}
    syntax = Syntax(get_spec(lang))
    try:
        root = parse(text, lang)
    except Exception:  # noqa: BLE001 - never crash on odd input
        return {}
    found: Definitions = {}

    def collect(items: list[Item]) -> None:
        for item in items:
            for definition in item.defs:
                found.setdefault(definition.name, []).append((item.start + 1, item.end + 1))
                if definition.rule.container:
                    collect(syntax.members(definition))

    collect(syntax.items(root.named_children, ""))
    return found
