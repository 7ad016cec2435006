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

__all__ = ["Definition", "Members", "members", "outline"]


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
    if body is None:
        # A grammar that names no body field (Kotlin's `function_body`, `class_body`).
        body = next((c for c in node.named_children if c.type.endswith("_body")), None)
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

    lang = resolve_language(path, language, text)
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


@dataclass(frozen=True)
class Members:
    """A container's outline: its header and each direct member's signature, with lines."""
    name: str
    start: int
    end: int
    text: str       # `L297-L420 class FileResponse(Response):` then one indented line per member


def members(found: list[Definition], symbol: str, line: int, shown_end: int) -> Members | None:
    """The outline of `symbol`'s definition around `line` (its qualified name, from `outline`),
    when that definition holds direct members that end after `shown_end` (the code a hit shows
    stops before them: a class's header chunk, or a hit cut at a size cap); else None."""
    container = next((d for d in found if d.name == symbol and d.start <= line <= d.end), None)
    if container is None or container.end <= shown_end:
        return None
    prefix = symbol + "."
    inner = [d for d in found if d.name.startswith(prefix) and "." not in d.name[len(prefix):]
             and container.start <= d.start and d.end <= container.end]
    if not any(d.end > shown_end for d in inner):
        return None
    lines = [f"L{container.start}-L{container.end} {container.signature}"]
    lines += [f"    L{d.start}-L{d.end} {d.signature}" for d in inner]
    return Members(symbol, container.start, container.end, "\n".join(lines))
