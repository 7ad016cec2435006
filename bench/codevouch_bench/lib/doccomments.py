"""Doc comment -> function queries for Rust, Go, JavaScript and TypeScript.

The benchmark's own parsing: the tree-sitter grammars straight from their wheels and a
walk written here, never codevouch's chunker or its definition finder, so the ground truth
cannot inherit the code under test's mistakes.

A target is a function or method with a body whose doc comment sits directly above it
(attributes, decorators and `export` in between allowed): `///` in Rust, `/** */` in
JS/TS, a `//` block in Go. Every doc comment in the file is blanked (characters turned into
spaces, so every line and column stays where it was), like `ast`-stripped Python docstrings.
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache
from typing import Any

from codevouch_bench.lib.docstrings import MIN_WORDS, Target, first_sentence, strip_python

SUFFIX_LANGUAGE = {".rs": "rust", ".go": "go", ".js": "javascript", ".mjs": "javascript",
                   ".cjs": "javascript", ".jsx": "javascript", ".ts": "typescript", ".mts": "typescript",
                   ".cts": "typescript", ".tsx": "tsx"}

# Nodes that define a function with a body, per language.
FUNCTIONS = {
    "rust": {"function_item"},
    "go": {"function_declaration", "method_declaration"},
    "javascript": {"function_declaration", "generator_function_declaration", "method_definition"},
}
FUNCTIONS["typescript"] = FUNCTIONS["tsx"] = FUNCTIONS["javascript"]
# `const f = () => {}` / `obj.f = function () {}`: the value that makes a binding a function.
FUNCTION_VALUES = {"arrow_function", "function_expression", "function", "generator_function"}
# Nodes that may stand between a doc comment and the definition it documents.
BETWEEN = {"attribute_item", "decorator"}
# Wrappers whose range (and whose preceding comment) belongs to the definition inside.
WRAPPERS = {"export_statement", "lexical_declaration", "variable_declaration", "expression_statement"}
# Containers whose name qualifies the functions inside them.
CONTAINERS = {"impl_item": "type", "trait_item": "name", "class_declaration": "name", "class": "name",
              "abstract_class_declaration": "name", "mod_item": None}


@cache
def _parser(language: str) -> Any:
    from tree_sitter import Language, Parser

    if language == "rust":
        import tree_sitter_rust as mod
        lang = mod.language()
    elif language == "go":
        import tree_sitter_go as mod
        lang = mod.language()
    elif language == "javascript":
        import tree_sitter_javascript as mod
        lang = mod.language()
    else:
        import tree_sitter_typescript as mod
        lang = mod.language_tsx() if language == "tsx" else mod.language_typescript()
    return Parser(Language(lang))


def is_doc_comment(language: str, text: str) -> bool:
    if language == "rust":
        return (text.startswith("///") and not text.startswith("////")) or text.startswith("//!") \
            or (text.startswith("/**") and not text.startswith("/**/"))
    if language == "go":
        return text.startswith("//") or text.startswith("/*")
    return text.startswith("/**") and not text.startswith("/**/")


def comment_prose(language: str, texts: list[str]) -> str:
    """The words of a doc comment: markers gone, JSDoc tags and Rust/Go code fences left out."""
    lines: list[str] = []
    for text in texts:
        body = text
        if body.startswith("/*"):
            body = body[3:] if body.startswith("/**") else body[2:]
            body = body[:-2] if body.endswith("*/") else body
            for line in body.split("\n"):
                lines.append(re.sub(r"^\s*\*? ?", "", line))
        else:
            lines.append(re.sub(r"^//[/!]? ?", "", body.rstrip("\n")))
    out: list[str] = []
    for line in lines:
        if line.lstrip().startswith("@") or line.lstrip().startswith("```"):
            break  # tags and examples follow the summary; the summary is what a person asks
        out.append(line)
    return "\n".join(out)


def _name(node: Any) -> str | None:
    field = node.child_by_field_name("name")
    return field.text.decode("utf-8", "replace") if field is not None else None


def _binding_name(node: Any) -> str | None:
    """`const f = () => {}` -> f; `a.b.f = function () {}` -> f; None when it binds no function."""
    if node.type in ("lexical_declaration", "variable_declaration"):
        for decl in node.named_children:
            value = decl.child_by_field_name("value")
            if decl.type == "variable_declarator" and value is not None and value.type in FUNCTION_VALUES:
                return _name(decl)
    if node.type == "expression_statement" and node.named_children:
        expr = node.named_children[0]
        if expr.type == "assignment_expression":
            right = expr.child_by_field_name("right")
            left = expr.child_by_field_name("left")
            if right is not None and left is not None and right.type in FUNCTION_VALUES:
                return re.split(r"[.\[\]'\"]+", left.text.decode("utf-8", "replace").strip("]'\""))[-1]
    return None


def _go_receiver(node: Any) -> str | None:
    recv = node.child_by_field_name("receiver")
    if recv is None:
        return None
    words = re.findall(r"[A-Za-z_]\w*", recv.text.decode("utf-8", "replace"))
    return words[-1] if words else None


def _definitions(node: Any, language: str, prefix: str) -> Iterator[tuple[str, Any, Any]]:
    """(qualified name, anchor node whose preceding comment is the doc, defining node)."""
    for child in node.named_children:
        inner, anchor = child, child
        while inner.type == "export_statement" and inner.named_children:
            declared = [c for c in inner.named_children if c.type not in ("comment", "decorator")]
            if not declared:
                break
            inner = declared[0]
        name: str | None = None
        if inner.type in FUNCTIONS[language] and inner.child_by_field_name("body") is not None:
            name = _name(inner)
            recv = _go_receiver(inner) if language == "go" else None
            if name and recv:
                name = f"{recv}.{name}"
        elif inner.type in WRAPPERS:
            name = _binding_name(inner)
        if inner.type == "function_signature":
            # A TypeScript overload: its doc comment documents the implementation below it.
            overload = _name(inner)
            if overload:
                yield prefix + overload, anchor, inner
        if name:
            yield prefix + name, anchor, inner
        if inner.type in CONTAINERS:
            field = CONTAINERS[inner.type]
            label = inner.child_by_field_name(field) if field else inner.child_by_field_name("name")
            qual = label.text.decode("utf-8", "replace") if label is not None else ""
            qual = re.split(r"[<\s]", qual)[0]
            body = inner.child_by_field_name("body")
            if body is not None:
                yield from _definitions(body, language, prefix + (qual + "." if qual else ""))
        elif inner.type not in FUNCTIONS[language] and name is None:
            # Namespaces, blocks of `mod` and the like: look inside without qualifying.
            body = inner.child_by_field_name("body")
            if body is not None and inner.type in ("namespace_declaration", "internal_module", "module"):
                yield from _definitions(body, language, prefix)


def _doc_above(anchor: Any, language: str) -> list[Any]:
    """The contiguous doc-comment nodes right above `anchor` (attributes/decorators may sit between)."""
    docs: list[Any] = []
    node, row = anchor.prev_named_sibling, anchor.start_point[0]
    while node is not None and node.end_point[0] >= row - 1:
        if node.type in BETWEEN:
            row, node = node.start_point[0], node.prev_named_sibling
            continue
        if "comment" not in node.type:
            break
        text = node.text.decode("utf-8", "replace")
        if not is_doc_comment(language, text) or text.startswith("//!"):
            break
        docs.insert(0, node)
        row, node = node.start_point[0], node.prev_named_sibling
    return docs


def _all_doc_comments(root: Any, language: str) -> Iterator[Any]:
    stack = [root]
    while stack:
        node = stack.pop()
        if "comment" in node.type:
            text = node.text.decode("utf-8", "replace")
            if language != "go" and is_doc_comment(language, text):
                yield node
        stack.extend(node.children)


def strip_doc_comments(text: str, path: str) -> tuple[str, list[Target]]:
    """The file with doc comments blanked, and one target per documented function."""
    suffix = path[path.rfind("."):] if "." in path else ""
    language = SUFFIX_LANGUAGE.get(suffix)
    if language is None:
        return text, []
    data = text.encode("utf-8")
    tree = _parser(language).parse(data)
    targets: list[Target] = []
    blank: list[Any] = list(_all_doc_comments(tree.root_node, language))
    overload_docs: dict[str, list[Any]] = {}
    for qual, anchor, inner in _definitions(tree.root_node, language, ""):
        docs = _doc_above(anchor, language)
        if inner.type == "function_signature":
            if docs and qual not in overload_docs:
                overload_docs[qual] = docs
            continue
        docs = docs or overload_docs.pop(qual, [])
        if not docs:
            continue
        if language == "go":
            blank.extend(docs)  # Go has no doc syntax: a comment block above a func is its doc
        prose = comment_prose(language, [d.text.decode("utf-8", "replace") for d in docs])
        query = first_sentence(prose)
        if language == "go":
            # Go docs start with the function's own name ("Execute uses ..."): that word would
            # hand a lexical search the answer, so it goes.
            short = qual.split(".")[-1]
            query = re.sub(rf"^(A|An|The)?\s*{re.escape(short)}\b\s*", "", query)
        if len(query.split()) < MIN_WORDS:
            continue
        last = docs[-1]
        # Rust's line comments own their newline: their end point is on the next row.
        end_row = last.end_point[0] - (1 if last.text.endswith(b"\n") else 0)
        start = end_row + 2  # 1-based line after the doc comment
        targets.append(Target(query, path, qual, start, inner.end_point[0] + 1, inner.start_point[0] + 1))
    out = bytearray(data)
    for node in blank:
        for i in range(node.start_byte, node.end_byte):
            if out[i] not in (0x0A, 0x0D):
                out[i] = 0x20
    lines = [line.rstrip() if not line.strip() else line for line in out.decode("utf-8", "replace").split("\n")]
    return "\n".join(lines), targets


def strip_docs(path: str, text: str) -> tuple[str, list[Target]]:
    """Any file the benchmarks parse, docs blanked, and its targets: Python's docstrings by `ast`,
    the doc comments of the other languages by the walk above; other files as they are."""
    return strip_python(text, path) if path.endswith(".py") else strip_doc_comments(text, path)
