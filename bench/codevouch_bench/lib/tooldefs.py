"""Definitions as an independent tool sees them, written here, never with codevouch's parser:
Python's `ast` and, for Rust, a tree-sitter query of this benchmark's own.

Every function and class counts, nested ones included, each under its qualified name
(`outer.inner`, `Class.method.inner`; Rust: `Type.method` for impl members). These serve
twice: as the snippets another tool would hand to the validator (with that tool's spelling:
`outer.<locals>.inner`, `Type::method`), and as the ground truth of what became of them.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import lru_cache
from typing import Any


@dataclass(frozen=True)
class Def:
    name: str            # qualified with dots
    spelled: str         # as the other tool names it
    start: int           # 1-based, decorators / attributes included
    end: int
    function: bool       # a function or method (not a class, struct, impl ...)


def definitions(path: str, text: str) -> list[Def]:
    """Every definition of a .py or .rs file; [] for other files or unparsable text."""
    if path.endswith(".py"):
        return _python(text)
    if path.endswith(".rs"):
        return _rust(text)
    return []


def by_name(defs: list[Def]) -> dict[str, list[Def]]:
    out: dict[str, list[Def]] = {}
    for d in defs:
        out.setdefault(d.name, []).append(d)
    return out


def _python(text: str) -> list[Def]:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    out: list[Def] = []

    def walk(body: list[ast.stmt], prefix: str, qual: str) -> None:
        for node in _direct_defs(body):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            name, spelled = prefix + node.name, qual + node.name
            is_function = not isinstance(node, ast.ClassDef)
            out.append(Def(name, spelled, first, node.end_lineno or node.lineno, is_function))
            # __qualname__: functions get `<locals>` before what they contain, classes do not.
            walk(node.body, name + ".", spelled + (".<locals>." if is_function else "."))
    walk(tree.body, "", "")
    return out


def _direct_defs(body: list[ast.stmt]) -> list[Any]:
    """Definitions in a body, also inside if/try/with/for blocks (not inside other defs)."""
    found: list[Any] = []
    stack = list(reversed(body))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.append(node)
            continue
        for field in ("body", "orelse", "finalbody", "handlers"):
            stack.extend(reversed(getattr(node, field, None) or []))
    return found


_RUST_QUERY = "(function_item) @d (struct_item) @d (enum_item) @d (trait_item) @d (mod_item) @d (impl_item) @d"


@lru_cache(maxsize=1)
def _rust_parser() -> Any:
    import tree_sitter
    import tree_sitter_rust
    language = tree_sitter.Language(tree_sitter_rust.language())
    return tree_sitter.Parser(language), tree_sitter.Query(language, _RUST_QUERY)


def _rust_name(node: Any) -> str:
    if node.type == "impl_item":
        target = node.child_by_field_name("type")
        while target is not None and target.type not in ("type_identifier", "primitive_type"):
            target = target.child_by_field_name("type") or target.child_by_field_name("name")
        return target.text.decode() if target is not None else ""
    name = node.child_by_field_name("name")
    return name.text.decode() if name is not None else ""


def _rust(text: str) -> list[Def]:
    import tree_sitter
    parser, query = _rust_parser()
    root = parser.parse(text.encode("utf-8", "surrogatepass")).root_node
    if root.has_error:
        return []
    nodes = tree_sitter.QueryCursor(query).captures(root).get("d", [])
    kinds = {"function_item", "struct_item", "enum_item", "trait_item", "mod_item", "impl_item"}
    out: list[Def] = []
    for node in sorted(nodes, key=lambda n: n.start_byte):
        parts = [_rust_name(node)]
        parent = node.parent
        while parent is not None:
            if parent.type in kinds:
                parts.append(_rust_name(parent))
            parent = parent.parent
        parts.reverse()
        if not all(parts):
            continue
        start = node.start_point.row
        prev = node.prev_named_sibling
        while prev is not None and prev.type in ("attribute_item", "line_comment") \
                and prev.end_point.row >= start - 1:
            start = prev.start_point.row
            prev = prev.prev_named_sibling
        end = node.end_point.row
        out.append(Def(".".join(parts), "::".join(parts), start + 1, end + 1, node.type == "function_item"))
    return out
