"""The signature lines of a definition: what goes back above a window cut out of its body.

The chunker splits a long function into line windows that all carry its symbol; a window
from the middle of the body no longer shows the name, parameters or decorators. This finds
those lines in the current file (pure: text in, line numbers out).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from codevouch.syntax.definitions import resolve_language
from codevouch.syntax.languages import get_spec
from codevouch.syntax.tree import Item, Syntax, parse

if TYPE_CHECKING:
    from tree_sitter import Node

__all__ = ["enclosing", "finder", "signature_span"]


def signature_span(text: str, path: str, symbol: str, line: int,
                   language: str | None = None) -> tuple[int, int] | None:
    """1-based inclusive (first, last) lines of the decorators, comments and signature of
    `symbol`'s definition that contains `line`, when `line` starts after them (the snippet
    is a window cut out of the body); None when the snippet starts at the definition, the
    symbol is not defined around `line`, or the language is unsupported."""
    found = enclosing(text, path, symbol, line, language)
    return found[1] if found else None


Spans = tuple[tuple[int, int], tuple[int, int] | None]


def enclosing(text: str, path: str, symbol: str, line: int, language: str | None = None) -> Spans | None:
    """((first, last) lines of `symbol`'s whole definition around `line`, decorators and
    comments included; its signature_span or None), or None when not found."""
    find = finder(text, path, language)
    return find(symbol, line) if find else None


def finder(text: str, path: str, language: str | None = None) -> Callable[[str, int], Spans | None] | None:
    """`enclosing` for one file, parsed once: (symbol, line) -> spans. None when the language
    is unsupported or the text does not parse."""
    lang = resolve_language(path, language, text)
    if lang is None or not text.strip():
        return None
    syntax = Syntax(get_spec(lang))
    try:
        top = syntax.items(parse(text, lang).named_children, "")
    except Exception:  # noqa: BLE001 - never crash on odd input
        return None

    def find(items: list[Item], symbol: str, row: int) -> Spans | None:
        for item in items:
            if not item.start <= row <= item.end:
                continue
            for definition in item.defs:
                if definition.name == symbol:
                    return (item.start + 1, item.end + 1), _span(item.start, definition.node, row)
                if definition.rule.container and symbol.startswith(definition.name + "."):
                    return find(syntax.members(definition), symbol, row)
        return None

    return lambda symbol, line: find(top, symbol, line - 1)


def _span(start: int, node: Node, row: int) -> tuple[int, int] | None:
    body = node.child_by_field_name("body")
    if body is None:
        return None
    body_row, body_col = body.start_point.row, body.start_point.column
    # `func f() {`: the body opens on the signature's last line; `def f():` + newline: the
    # body starts below it (at its indentation, so nothing else precedes it on that line).
    opens_inline = body_row == node.start_point.row or body_col > _indent(node, body_row)
    last = body_row if opens_inline else body_row - 1
    last = min(last, row - 1)
    return (start + 1, last + 1) if last >= start else None


def _indent(node: Node, row: int) -> int:
    source = node.text or b""
    first_row = node.start_point.row
    lines = source.split(b"\n")
    offset = row - first_row
    if not 0 <= offset < len(lines):
        return 0
    text = lines[offset]
    return len(text) - len(text.lstrip())
