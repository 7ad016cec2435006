"""Definitions as an independent tool sees them, written here, never with codevouch's parser:
Python's `ast`; for Rust, a tree-sitter query of this benchmark's own; for C, C++, C#, Kotlin,
Swift, Ruby, Lua, PHP, Scala and shell, a tree-sitter walk of its own (the grammars' wheels, none
of codevouch's tables).

Every function and class counts, nested ones included, each under its qualified name
(`outer.inner`, `Class.method.inner`; Rust: `Type.method` for impl members). These serve
twice: as the snippets another tool would hand to the validator (with that tool's spelling:
`outer.<locals>.inner`, `Type::method`), and as the ground truth of what became of them.
"""
from __future__ import annotations

import ast
import re
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
    """Every definition of a .py, .rs, C, C++, C#, Kotlin, Swift, Ruby, Lua, PHP, Scala or shell
    file (a script with no extension whose `#!` line names a shell too); [] for other files or
    unparsable Python and Rust."""
    if path.endswith(".py"):
        return _python(text)
    if path.endswith(".rs"):
        return _rust(text)
    return _walked(path, text)


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


# -- C, C++, C#, Kotlin, Swift, Ruby, Lua, PHP, Scala, shell: one walk of this benchmark's own over each
# grammar's tree.
# Names are qualified with dots by the definitions around them, as codevouch's records spell them
# (a C++ `ns::Type::method` defined out of its class is `ns.Type.method`; a C# namespace and a
# Kotlin companion object qualify nothing). Comments directly above a definition belong to it.

# language -> (grammar module, {node type: is a function}, node types that qualify what they hold)
_WALKED: dict[str, tuple[str, dict[str, bool], frozenset[str]]] = {
    "c": ("tree_sitter_c", {"function_definition": True, "struct_specifier": False, "union_specifier": False,
                            "enum_specifier": False, "type_definition": False}, frozenset()),
    "cpp": ("tree_sitter_cpp", {"function_definition": True, "struct_specifier": False, "union_specifier": False,
                                "enum_specifier": False, "class_specifier": False, "type_definition": False,
                                "namespace_definition": False},
            frozenset({"struct_specifier", "union_specifier", "class_specifier", "namespace_definition"})),
    "csharp": ("tree_sitter_c_sharp", {"class_declaration": False, "struct_declaration": False,
                                       "interface_declaration": False, "record_declaration": False,
                                       "enum_declaration": False, "method_declaration": True,
                                       "constructor_declaration": True, "destructor_declaration": True,
                                       "property_declaration": True, "local_function_statement": True},
               frozenset({"class_declaration", "struct_declaration", "interface_declaration", "record_declaration",
                          "method_declaration", "constructor_declaration", "local_function_statement"})),
    "kotlin": ("tree_sitter_kotlin", {"class_declaration": False, "object_declaration": False,
                                      "function_declaration": True},
               frozenset({"class_declaration", "object_declaration", "function_declaration"})),
    "swift": ("tree_sitter_swift", {"class_declaration": False, "protocol_declaration": False,
                                    "function_declaration": True, "init_declaration": True,
                                    "protocol_function_declaration": True},
              frozenset({"class_declaration", "protocol_declaration", "function_declaration", "init_declaration"})),
    # Ruby: `class Billing::Invoice` qualifies as Billing.Invoice; `def self.build` is `build` in its
    # class; `class << self` qualifies nothing (not a kind: walked through).
    "ruby": ("tree_sitter_ruby", {"module": False, "class": False, "method": True, "singleton_method": True},
             frozenset({"module", "class"})),
    # Lua: `function M.f` and `function M:f` are both M.f, `local function f` is f; a function in a
    # function (or in a `do ... end` block) is listed too, qualified by nothing.
    "lua": ("tree_sitter_lua", {"function_declaration": True}, frozenset()),
    # PHP: a namespace qualifies nothing; a named function inside a function or method is global
    # in PHP, so it is listed qualified by its class-like scope only.
    "php": ("tree_sitter_php", {"class_declaration": False, "interface_declaration": False,
                                "trait_declaration": False, "enum_declaration": False,
                                "function_definition": True, "method_declaration": True},
            frozenset({"class_declaration", "interface_declaration", "trait_declaration", "enum_declaration"})),
    # Scala: a class and its companion object both qualify as the type's name; `package object p`
    # qualifies its members as p.f; a def inside a def is listed under it, as Kotlin's are.
    "scala": ("tree_sitter_scala", {"class_definition": False, "object_definition": False,
                                    "trait_definition": False, "enum_definition": False, "package_object": False,
                                    "function_definition": True, "function_declaration": True},
              frozenset({"class_definition", "object_definition", "trait_definition", "enum_definition",
                         "package_object", "function_definition"})),
    # Shell: `f() {...}` and `function f {...}`; a function defined in a function is global once
    # run, so it is qualified by nothing; a `#!` line is no comment of the function below it.
    "bash": ("tree_sitter_bash", {"function_definition": True}, frozenset()),
}
_GRAMMAR_ENTRY = {"php": "language_php"}      # the grammar that reads a file with its HTML around `<?php`
_SUFFIXES = {".c": "c", ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".hpp": "cpp", ".hh": "cpp",
             ".cs": "csharp", ".kt": "kotlin", ".kts": "kotlin", ".swift": "swift", ".rb": "ruby", ".lua": "lua",
             ".php": "php", ".scala": "scala", ".sc": "scala", ".sh": "bash", ".bash": "bash"}
SUFFIXES = (".py", ".rs", ".h", *_SUFFIXES)
# The benchmark's own reading of a script with no extension: a first line `#!/bin/sh`,
# `#!/usr/bin/env bash` (options allowed) names a shell.
_SHELL_LINE = re.compile(r"#![ \t]*(?:\S*/)?(?:env[ \t]+(?:-\S+[ \t]+)*)?(?:ba|da|k|z)?sh(?:[ \t]|$)")


def may_define(path: str) -> bool:
    """Whether `definitions` may find any in `path`: a known suffix, or no extension at all (a
    script whose `#!` line names a shell)."""
    name = path.rsplit("/", 1)[-1]
    return path.endswith(SUFFIXES) or "." not in name.lstrip(".")


def _walked_language(path: str, text: str) -> str | None:
    if path.endswith(".h"):
        # The benchmark's own reading of a header: C++ when it says class, namespace or template.
        return "cpp" if re.search(r"^\s*(class|namespace|template)\b|::", text, re.MULTILINE) else "c"
    found = next((lang for suffix, lang in _SUFFIXES.items() if path.endswith(suffix)), None)
    if found is None and may_define(path) and _SHELL_LINE.match(text.split("\n", 1)[0]):
        return "bash"
    return found


@lru_cache(maxsize=8)
def _walk_parser(module: str, entry: str = "language") -> Any:
    import importlib

    import tree_sitter
    return tree_sitter.Parser(tree_sitter.Language(getattr(importlib.import_module(module), entry)()))


def _c_name(node: Any) -> str:
    """The name a C/C++ definition gives: a function's through its declarator (pointers, references),
    a typedef's declared type, a tagged type's or namespace's `name`; `::` as dots, no template
    arguments."""
    if node.type in ("function_definition", "type_definition"):
        current = node.child_by_field_name("declarator")
        while current is not None and current.type != "function_declarator" and node.type == "function_definition":
            current = current.child_by_field_name("declarator") or next(
                (c for c in current.named_children if c.type.endswith("declarator")), None)
        target = current.child_by_field_name("declarator") if current is not None and node.type == "function_definition" \
            else current
        if node.type == "type_definition":
            while target is not None and target.type not in ("type_identifier", "primitive_type"):
                target = target.child_by_field_name("declarator") or (
                    target.named_children[0] if target.named_children else None)
        raw = target.text.decode() if target is not None else ""
    else:
        if node.child_by_field_name("body") is None and node.type != "namespace_definition":
            return ""       # `struct s *p` names a type, defines none
        name = node.child_by_field_name("name")
        raw = name.text.decode() if name is not None else ""
    while re.search(r"<[^<>]*>", raw) and "operator" not in raw:
        raw = re.sub(r"<[^<>]*>", "", raw)
    return "".join(raw.split()).replace("::", ".")


def _last_token_row(node: Any) -> int:
    """The row of a node's last token that is code: Scala's grammar ends a body written as an
    indented block (`def f =` and the body on the next lines) where the next definition begins,
    the comments above that one and the blank lines before it included."""
    for child in reversed(node.children):
        if "comment" in child.type or child.start_byte == child.end_byte:
            continue
        return _last_token_row(child) if child.child_count else child.end_point.row
    return node.end_point.row


def _tail_comments(node: Any) -> list[Any]:
    """The comments a Scala indented block ends with, last first (see `_last_token_row`)."""
    out: list[Any] = []
    for child in reversed(node.children):
        if "comment" in child.type:
            out.append(child)
        elif child.start_byte != child.end_byte:
            return out + _tail_comments(child) if child.child_count else out
    return out


def _misread_class_macros(root: Any) -> list[Any]:
    """The macros of `class LEVELDB_EXPORT TableBuilder {`: the grammar has no preprocessor and
    reads such a head as a function definition returning `class LEVELDB_EXPORT`, named
    `TableBuilder`, its body a block of statements. A function definition's declarator always has a
    parameter list; one that is a bare name, under a class, struct or union head that defines
    nothing, is a class head with one word too many: the word after the keyword (the tagged type's
    `name`) is the macro."""
    found: list[Any] = []
    stack = [root]
    while stack:
        node = stack.pop()
        head, declarator = node.child_by_field_name("type"), node.child_by_field_name("declarator")
        if node.type == "function_definition" and head is not None and declarator is not None \
                and head.type in ("class_specifier", "struct_specifier", "union_specifier") \
                and head.child_by_field_name("body") is None and head.child_by_field_name("name") is not None \
                and declarator.type in ("identifier", "type_identifier"):
            found.append(head.child_by_field_name("name"))
        stack.extend(node.named_children)
    return found


def _without_class_macros(parser: Any, source: bytes, root: Any) -> Any:
    """The tree of `source` with each misread class head's macro blanked (spaces: lines and
    columns kept), as a preprocessor that expands it to nothing or to an attribute would leave it;
    repeated while blanking one reveals another (a class nested in a misread one)."""
    for _ in range(8):
        macros = _misread_class_macros(root)
        if not macros:
            break
        data = bytearray(source)
        for macro in macros:
            data[macro.start_byte:macro.end_byte] = b" " * (macro.end_byte - macro.start_byte)
        source = bytes(data)
        root = parser.parse(source).root_node
    return root


def _walked(path: str, text: str) -> list[Def]:
    lang = _walked_language(path, text)
    if lang is None:
        return []
    module, kinds, scopes = _WALKED[lang]
    parser = _walk_parser(module, _GRAMMAR_ENTRY.get(lang, "language"))
    source = text.encode("utf-8", "surrogatepass")
    root = parser.parse(source).root_node
    if lang == "cpp":
        root = _without_class_macros(parser, source, root)
    out: list[Def] = []

    def name_of(node: Any) -> str:
        if lang in ("c", "cpp"):
            return _c_name(node)
        name = node.child_by_field_name("name")
        if name is None and node.type == "class_declaration":      # Kotlin: the first identifier
            name = next((c for c in node.named_children if c.type in ("type_identifier", "identifier")), None)
        written = "".join(name.text.decode().split()).replace("::", ".") if name is not None else ""
        return written.replace(":", ".") if lang == "lua" else written

    def visit(node: Any, prefix: list[str]) -> None:
        inner = prefix
        if node.type in kinds:
            name = name_of(node)
            if name:
                start = node.start_point.row
                prev = node.prev_named_sibling
                if prev is None and node.parent is not None and node.parent.type == "body_statement":
                    prev = node.parent.prev_named_sibling   # Ruby: a body's first comment sits before it
                while prev is not None and "comment" in prev.type and prev.end_point.row >= start - 1 \
                        and not (lang == "bash" and prev.start_point.row == 0 and prev.text.startswith(b"#!")):
                    start = prev.start_point.row
                    prev = prev.prev_named_sibling
                if lang == "scala" and prev is not None:    # comments the block above swallowed
                    for comment in _tail_comments(prev):
                        if comment.end_point.row < start - 1:
                            break
                        start = comment.start_point.row
                qualified = ".".join([*prefix, name])
                end = _last_token_row(node) if lang == "scala" else node.end_point.row
                out.append(Def(qualified, qualified, start + 1, end + 1, kinds[node.type]))
                if node.type in scopes:
                    inner = [*prefix, name]
        for child in node.named_children:
            visit(child, inner)

    visit(root, [])
    return out
