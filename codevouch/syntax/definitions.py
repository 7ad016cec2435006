"""Where each symbol is defined in a file: qualified name -> line ranges (pure)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import tree_sitter
from tree_sitter import Node

from codevouch.caches import clearable
from codevouch.syntax import registry
from codevouch.syntax.languages import detect_language, get_language, get_spec
from codevouch.syntax.spec import LanguageSpec
from codevouch.syntax.tree import Item, Syntax, def_name, parse, rows

__all__ = ["Definitions", "Found", "definitions_in", "find_clean_definitions", "find_definitions",
           "resolve_language", "walk"]

# qualified symbol -> (start, end) line ranges, 1-based inclusive, in file order
Definitions = dict[str, list[tuple[int, int]]]


def resolve_language(path: str, language: str | None, text: str | None = None) -> str | None:
    """``language`` when given and supported, else the language of ``path``'s extension or name,
    or of ``text`` (registry.of_file: the `#!` line of a file with neither; C++ for a ``.h``
    whose text uses C++)."""
    if language is None:
        return detect_language(path, text)
    return language if language in registry.names() else None


def find_definitions(text: str, path: str, language: str | None = None) -> Definitions:
    """Every qualified symbol defined in ``text`` -> its (start, end) line
    ranges (1-based, inclusive, with decorators and doc comments), in file
    order.  ``<module>`` is not a definition and never appears.

    Top-level definitions and container members are named exactly as the
    chunker names its chunks.  Definitions nested anywhere else are listed
    too, qualified by every definition around them: ``outer.inner`` for a
    function in a function, ``Class.method.Local.run`` for a method of a
    class defined in a method.  Unsupported language or a parser failure ->
    ``{}``.
    """
    return _definitions(text, path, language, clean_only=False) or {}


def find_clean_definitions(text: str, path: str) -> Definitions | None:
    """``find_definitions`` for a piece cut out of a file (``syntax.region``): None unless the
    piece parses without a single error, since only then are its names the file's names."""
    return _definitions(text, path, None, clean_only=True)


def _definitions(text: str, path: str, language: str | None, clean_only: bool) -> Definitions | None:
    lang = resolve_language(path, language, text)
    if lang is None or not text.strip():
        return None if clean_only else {}
    walked = walk(text, lang)
    if walked is None or (clean_only and walked[0].has_error):
        return None
    out: Definitions = {}
    for found in sorted(walked[1], key=lambda f: (f.start, f.node.start_byte)):
        out.setdefault(found.name, []).append((found.start, found.end))
    return out


@dataclass(frozen=True)
class Found:
    """One definition: its qualified name, its lines (1-based, inclusive, with decorators and
    doc comments) and its tree-sitter node."""
    name: str
    start: int
    end: int
    node: Node


def walk(text: str, lang: str) -> tuple[Node, list[Found]] | None:
    """The parse tree and every definition in it, or None when the parser fails.

    The one walk behind every qualified name: the chunker's symbols for top-level
    definitions and container members, `outer.inner` for those nested anywhere else."""
    try:
        root = parse(text, lang)
    except Exception:  # noqa: BLE001 - never crash on odd input
        return None
    return root, definitions_in(root, lang)


def definitions_in(root: Node, lang: str) -> list[Found]:
    """Every definition in a tree already parsed (`walk`): the chunker names what each chunk
    defines from the tree it cut the file by, rather than parsing each chunk again."""
    spec = get_spec(lang)
    syntax = Syntax(spec)
    found: list[Found] = []
    seen: set[tuple[int, int, str]] = set()

    def collect(items: list[Item]) -> None:
        for item in items:
            for definition in item.defs:
                node = definition.node
                seen.add((node.start_byte, node.end_byte, node.type))
                found.append(Found(definition.name, item.start + 1, item.end + 1, node))
                if definition.rule.container:
                    collect(syntax.members(definition))

    collect(syntax.items(root.named_children, ""))
    for node in _definition_nodes(lang, root):
        if (node.start_byte, node.end_byte, node.type) in seen:
            continue
        name = _nested_name(spec, node)
        if name:
            found.append(Found(name, *_nested_range(spec, node), node))
    return found


@clearable
@cache
def _query(lang: str) -> tree_sitter.Query:
    types = sorted(get_spec(lang).definitions)
    return tree_sitter.Query(get_language(lang), " ".join(f"({t}) @d" for t in types))


def _definition_nodes(lang: str, root: Node) -> list[Node]:
    # A query runs in C: finding every definition node costs a fraction of the parse, where
    # a walk over the whole tree in Python would cost as much again.
    return tree_sitter.QueryCursor(_query(lang)).captures(root).get("d", [])


def _nested_name(spec: LanguageSpec, node: Node) -> str:
    """``outer.inner``: the node's own name qualified by every named definition around it;
    "" when it defines nothing or sits in an anonymous class."""
    rule = spec.definitions[node.type]
    name = def_name(node, rule) if rule.nested else ""
    if not name:
        return ""
    parts = [name]
    parent = node.parent
    while parent is not None:
        if parent.type in spec.anonymous:
            return ""
        outer = spec.definitions.get(parent.type)
        if outer is not None and (outer_name := def_name(parent, outer)):
            parts.append(outer_name)
        parent = parent.parent
    return ".".join(reversed(parts))


def _nested_range(spec: LanguageSpec, node: Node) -> tuple[int, int]:
    """Lines of a nested definition with its wrappers (decorators, `export`, `const`) and the
    comments directly above it, as the chunker attaches them to a top-level one."""
    while node.parent is not None and node.parent.type in spec.wrappers:
        node = node.parent
    start, end = rows(node)
    prev = node.prev_named_sibling
    if prev is None and node.parent is not None and node.parent.type in spec.blocks:
        # Python puts comments between `def f():` and the body's first statement on `f`.
        prev = node.parent.prev_named_sibling
    while prev is not None and prev.type in spec.prefix and rows(prev)[1] >= start - 1:
        start = rows(prev)[0]
        prev = prev.prev_named_sibling
    return start + 1, end + 1
