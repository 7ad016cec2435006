"""Definition items from a tree-sitter tree: the part of syntax shared by the chunker
and :func:`codevouch.syntax.definitions.find_definitions`.

An *item* is a top-level (or container-member) node with the comments, attributes and
decorators directly above it (no blank line between).  Items that define symbols (see
``spec.LanguageSpec``) carry qualified names.  Pure: no file or git I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from tree_sitter import Node

from codevouch.syntax.languages import get_parser, get_spec
from codevouch.syntax.spec import DefRule, LanguageSpec

__all__ = ["Def", "Item", "Syntax", "def_name", "node_text", "parse", "rows"]



@dataclass(frozen=True)
class Def:
    name: str  # qualified name
    node: Node  # the defining node itself (inside any wrapper)
    rule: DefRule


@dataclass(frozen=True)
class Item:
    start: int  # 0-based row, inclusive (includes attached comments)
    end: int  # 0-based row, inclusive
    defs: tuple[Def, ...]  # empty for non-definition code
    nodes: tuple[Node, ...]  # syntax nodes covered (for window cut points)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(d.name for d in self.defs)

    @property
    def splittable(self) -> Def | None:
        """The container definition this item can be split into members by."""
        if len(self.defs) == 1 and self.defs[0].rule.container:
            return self.defs[0]
        return None


def rows(node: Node) -> tuple[int, int]:
    start, end = node.start_point, node.end_point
    # Some grammars include the trailing newline (end at column 0 of the next
    # row); that row holds nothing of the node.
    end_row = end.row - 1 if end.column == 0 and end.row > start.row else end.row
    return start.row, end_row


def node_text(node: Node | None) -> str:
    if node is None or node.text is None:
        return ""
    return node.text.decode("utf-8", "replace")


def _base_type_name(node: Node | None) -> str:
    """``Foo`` from ``Foo<T>``, ``&'a mut foo::Foo`` and the like (Rust impls)."""
    while node is not None and node.type not in ("type_identifier", "primitive_type"):
        inner = node.child_by_field_name("type") or node.child_by_field_name("name")
        if inner is None:
            break
        node = inner
    return node_text(node)


def _go_receiver_type(node: Node) -> str:
    receiver = node.child_by_field_name("receiver")
    stack = [receiver] if receiver is not None else []
    while stack:  # first type identifier, depth first: handles *T, T[K], (t T)
        current = stack.pop()
        if current.type == "type_identifier":
            return node_text(current)
        stack.extend(reversed(current.named_children))
    return ""


def def_name(node: Node, rule: DefRule) -> str:
    """The name ``node`` defines under ``rule`` (unqualified); "" when it defines nothing."""
    if rule.name == "go_closure":
        return _go_closure_name(node)
    if rule.value_types is not None:
        value = node.child_by_field_name(rule.value_field)
        if value is None or value.type not in rule.value_types:
            return ""
    named = _NAMERS.get(rule.name)
    if named is not None:
        return named(node)
    name = "".join(node_text(node.child_by_field_name(rule.name_field)).split())
    if rule.name == "path":
        name = _PATH_SEPARATORS.sub(".", name).strip(".")
    elif rule.name == "string":
        name = name.strip("\"'`")
    elif rule.name == "go_receiver" and name:
        receiver = _go_receiver_type(node)
        name = f"{receiver}.{name}" if receiver else name
    return name


def _scoped(node: Node | None) -> str:
    """A C++ name as a dotted path: ``a::b::C`` -> ``a.b.C``, template arguments dropped."""
    if node is None:
        return ""
    if node.type == "qualified_identifier":
        scope, name = _scoped(node.child_by_field_name("scope")), _scoped(node.child_by_field_name("name"))
        return f"{scope}.{name}" if scope and name else name
    if node.type in ("template_type", "template_function", "template_method"):
        return _scoped(node.child_by_field_name("name"))
    if node.type == "nested_namespace_specifier":
        return ".".join(filter(None, (_scoped(c) for c in node.named_children)))
    return "".join(node_text(node).split())


def _declared_function(node: Node) -> str:
    """The function a C/C++ declarator chain declares (``int *Book::find(int)`` -> ``Book.find``);
    "" for a variable or a function pointer (``int (*cb)(int)``)."""
    current = node.child_by_field_name("declarator")
    while current is not None:
        if current.type == "function_declarator":
            inner = current.child_by_field_name("declarator")
            return "" if inner is None or inner.type.endswith("_declarator") else _scoped(inner)
        if current.type not in ("pointer_declarator", "reference_declarator", "attributed_declarator"):
            return ""
        current = current.child_by_field_name("declarator") or (
            current.named_children[-1] if current.named_children else None)
    return ""


def _declared_type(node: Node) -> str:
    """The first type name in the ``declarator`` field, depth first (``typedef int (*cb_t)(int)``)."""
    stack = [d] if (d := node.child_by_field_name("declarator")) is not None else []
    while stack:
        current = stack.pop()
        if current.type in ("type_identifier", "primitive_type"):
            return node_text(current)
        stack.extend(reversed(current.named_children))
    return ""


_NAMERS = {
    "js_member": lambda node: _js_member_name(node.child_by_field_name("left")),
    "impl_type": lambda node: _base_type_name(node.child_by_field_name("type")),
    "scoped": lambda node: _scoped(node.child_by_field_name("name")),
    "declarator": _declared_function,
    "declared_type": _declared_type,
}


# What separates the names of a path in the languages that write one as a definition's name:
# Ruby's `A::B`, PHP's `\A\B`, Lua's `M.f` and `M:f`.
_PATH_SEPARATORS = re.compile(r"::|\\|:|\.")


def _js_member_name(left: Node | None) -> str:
    """``Obj.name`` from the left side of ``Obj.name = function ...`` (``Obj.prototype.name``:
    ``Obj.name``); "" unless it is a chain of plain names (not ``this.x``, ``a[i].x``, ``f().x``),
    and for ``module.exports`` itself, which names no function."""
    parts: list[str] = []
    node = left
    while node is not None and node.type == "member_expression":
        prop = node.child_by_field_name("property")
        if prop is None or prop.type != "property_identifier":
            return ""
        parts.append(node_text(prop))
        node = node.child_by_field_name("object")
    if node is None or node.type != "identifier" or not parts:
        return ""
    names = [node_text(node), *reversed(parts)]
    if names == ["module", "exports"]:
        return ""
    return ".".join(n for n in names[:-1] if n != "prototype") + "." + names[-1] if len(names) > 1 else names[0]


def _go_closure_name(node: Node) -> str:
    """``inner`` from ``inner := func(...) {...}``; "" for any other short declaration."""
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    if left is None or right is None or len(left.named_children) != 1 or len(right.named_children) != 1:
        return ""
    if right.named_children[0].type != "func_literal":
        return ""
    return node_text(left.named_children[0])


class Syntax:
    """Builds items (definitions with qualified names) from a parsed tree."""

    def __init__(self, spec: LanguageSpec) -> None:
        self.spec = spec

    def resolve(self, node: Node, prefix: str) -> tuple[Def, ...]:
        rule = self.spec.definitions.get(node.type)
        if rule is not None:
            name = def_name(node, rule)
            if name:
                return (Def(f"{prefix}.{name}" if prefix else name, node, rule),)
        if node.type in self.spec.wrappers:
            found: list[Def] = []
            for child in node.named_children:
                found.extend(self.resolve(child, prefix))
            return tuple(found)
        return ()

    def items(self, nodes: Iterable[Node], prefix: str) -> list[Item]:
        """Group sibling nodes into items, attaching comments/decorators above."""
        items: list[Item] = []
        pending: list[Node] = []  # prefix nodes waiting for the next sibling
        pending_end = -2

        def flush() -> None:
            nonlocal pending
            if pending:
                items.append(Item(rows(pending[0])[0], pending_end, (), tuple(pending)))
                pending = []

        for node in self._flatten(nodes):
            start, end = rows(node)
            if not pending and items and start <= items[-1].end:
                # Shares a line with the previous item (trailing comment,
                # `a; b` on one line): chunks are whole lines, so join them.
                prev = items[-1]
                defs = prev.defs + self.resolve(node, prefix)
                items[-1] = Item(prev.start, max(prev.end, end), defs, prev.nodes + (node,))
                continue
            if pending and start > pending_end + 1:
                flush()  # a blank line separates the comments from this node
            if node.type in self.spec.prefix:
                pending.append(node)
                pending_end = max(pending_end, end) if len(pending) > 1 else end
                continue
            defs = self.resolve(node, prefix)
            if pending:
                start = rows(pending[0])[0]
                nodes_ = tuple(pending) + (node,)
                pending = []
            else:
                nodes_ = (node,)
            items.append(Item(start, end, defs, nodes_))
        flush()
        return items

    def members(self, definition: Def) -> list[Item]:
        """Member items of a container definition, qualified by its name."""
        node = definition.node
        body = self._body(node)
        if body is None:
            return []
        nodes = list(self._flatten(body.named_children))
        # Python puts comments between `class X:` and the first statement on
        # the class node, not the body; they belong to the first member.
        header_row = node.start_point.row
        nodes.extend(
            c
            for c in node.named_children
            if c.type in self.spec.prefix and c.start_point.row > header_row
            and c.start_byte < body.start_byte
        )
        nodes.sort(key=lambda n: n.start_byte)
        return self.items(nodes, definition.name)

    def _body(self, node: Node) -> Node | None:
        body = node.child_by_field_name("body")
        if body is None and self.spec.bodies:
            body = next((c for c in node.named_children if c.type in self.spec.bodies), None)
        return body

    def _flatten(self, nodes: Iterable[Node]) -> Iterable[Node]:
        for node in nodes:
            if node.type in self.spec.transparent:
                body = node.child_by_field_name("body")
                yield from self._flatten((body if body is not None else node).named_children)
            elif (inner := self._nameless_body(node)) is not None:
                yield from self._flatten(inner)
            else:
                yield node

    def _nameless_body(self, node: Node) -> list[Node] | None:
        """What a container with no name holds (C++'s ``namespace { }``, ``extern "C" { }``):
        its body's children, or the body itself when it is one declaration
        (``extern "C" int f(void);``); None for any other node."""
        rule = self.spec.definitions.get(node.type)
        if rule is None or not rule.container or def_name(node, rule):
            return None
        body = self._body(node)
        if body is None:
            return None
        return list(body.named_children) if body.type in self.spec.blocks else [body]


def parse(text: str, language: str) -> Node:
    """The root node of ``text`` parsed as ``language`` (bytes as UTF-8, lone surrogates kept),
    with what the language's ``blank`` pattern names replaced by spaces first."""
    blank = get_spec(language).blank
    if blank is not None:
        text = blank.sub(lambda m: m.group(0).replace(m.group(1), " " * len(m.group(1)), 1), text)
    source = text.encode("utf-8", "surrogatepass")
    return get_parser(language).parse(source).root_node
