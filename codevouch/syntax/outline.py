"""A file's definitions as data: qualified name, lines, signature (pure; tree-sitter, no I/O).

drift and review align two versions of a file by these records, so names are exactly the
indexer's qualified symbols (`OrderService.cancel_order`, Go `Server.Start`, Rust `Foo.bar`),
members of containers included. The signature is the defining node's text before its body,
whitespace collapsed (`def cancel(self, order_id: int) -> bool:`); a definition without a
body (a type alias, a Go type spec) is all signature.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Node

__all__ = ["Definition", "outline"]


@dataclass(frozen=True)
class Definition:
    name: str        # qualified name
    start: int       # 1-based inclusive, with decorators and doc comments above it
    end: int
    signature: str


def _body(node: Node) -> Node | None:
    body = node.child_by_field_name("body")
    if body is None:
        # `const f = (a) => {...}`: the body is the function value's.
        value = node.child_by_field_name("value")
        body = value.child_by_field_name("body") if value is not None else None
    return body


def _signature(node: Node, source: bytes) -> str:
    body = _body(node)
    end = body.start_byte if body is not None else node.end_byte
    return " ".join(source[node.start_byte:end].decode("utf-8", "replace").split())


def outline(text: str, path: str, language: str | None = None) -> list[Definition] | None:
    """Every definition in `text`, in file order (containers before their members; those
    nested in functions too, named `outer.inner` as find_definitions names them).

    None when the language is not supported or the parser fails: "no definitions known",
    which callers must not confuse with a file that defines nothing ([]).
    """
    from codevouch.syntax.definitions import resolve_language, walk

    lang = resolve_language(path, language)
    if lang is None:
        return None
    if not text.strip():
        return []
    walked = walk(text, lang)
    if walked is None:
        return None
    source = text.encode("utf-8", "surrogatepass")
    found = [Definition(f.name, f.start, f.end, _signature(f.node, source)) for f in walked[1]]
    found.sort(key=lambda d: (d.start, -d.end))
    return found
