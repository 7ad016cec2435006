"""Identifier queries for the quality figure: a definition's name, and its words.

Ground truth is the benchmark's own parsing (Python's `ast` through codevouch_bench/lib/docstrings.py, the
tree-sitter walk of codevouch_bench/lib/doccomments.py for Rust, Go, JavaScript and TypeScript), never
codevouch's chunker. A target is a function, method or class whose short name is defined exactly
once in the repository's parsed files; its queries are the name as written (`raise_for_status`,
`GZipDecoder`) and its words (`raise for status`, `g zip decoder`: snake and camel case split,
lower case), the latter only for names of two words or more.
"""
from __future__ import annotations

import ast
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from codevouch_bench.lib.doccomments import SUFFIX_LANGUAGE, WRAPPERS, _binding_name, _definitions, _name, _parser
from codevouch_bench.lib.docstrings import Target, _defs
from codevouch_bench.lib.retrieval import Span

_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
MIN_NAME = 4   # `get`, `run`: too short to be a name one searches for
_DECLARATION = re.compile(r"\.(pyi|d\.ts|d\.mts|d\.cts)$")


def words_of(name: str) -> str:
    """`raise_for_status` -> "raise for status"; `GZipDecoder` -> "g zip decoder"."""
    return " ".join(p.lower() for part in name.split("_") for p in _CAMEL.findall(part))


def definitions(path: str, text: str) -> list[tuple[str, int, int, int]]:
    """(qualified name, first line, last line, definition line) of each definition in a file."""
    if path.endswith(".py"):
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            return []
        out = []
        for qual, node in _defs(tree):
            first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])  # type: ignore[attr-defined]
            out.append((qual, first, node.end_lineno or node.lineno, node.lineno))  # type: ignore[attr-defined]
        return out
    language = SUFFIX_LANGUAGE.get(Path(path).suffix)
    if language is None:
        return []
    tree = _parser(language).parse(text.encode("utf-8", "replace"))
    return [(qual, anchor.start_point[0] + 1, node.end_point[0] + 1, node.start_point[0] + 1)
            for qual, anchor, node in _definitions(tree.root_node, language, "")]


def short(qualname: str) -> str:
    return re.split(r"\.|::", qualname)[-1]


# Every node that defines a name, at any depth, per tree-sitter language (the grammars' own node
# types): what makes a name "defined once" counts a class in a test's callback, a function in a
# function and a type as much as the targets' own kinds.
_ANY_DEPTH_JS = {"class_declaration", "function_declaration", "generator_function_declaration", "method_definition"}
_ANY_DEPTH_TS = _ANY_DEPTH_JS | {"abstract_class_declaration", "interface_declaration", "type_alias_declaration",
                                 "enum_declaration", "function_signature", "method_signature",
                                 "abstract_method_signature", "internal_module"}
ANY_DEPTH = {
    "javascript": _ANY_DEPTH_JS, "typescript": _ANY_DEPTH_TS, "tsx": _ANY_DEPTH_TS,
    "go": {"function_declaration", "method_declaration", "type_spec", "type_alias"},
    "rust": {"function_item", "function_signature_item", "struct_item", "enum_item", "union_item", "trait_item",
             "type_item", "mod_item", "macro_definition"},
}
# `module.exports = function () {}` gives the walk the name `exports`: the module's value, no definition.
_NOT_NAMES = {"exports"}


def all_definitions(path: str, text: str) -> list[tuple[str, int]]:
    """(short name, line) of every definition in a file at any depth, by Python's `ast` or the
    file's tree-sitter grammar: the targets' walk (`definitions`), which follows containers only,
    and every defining node below it (a function bound to a name: `const f = () => {}`, too)."""
    found = {(short(q), line) for q, _, _, line in definitions(path, text)}
    if path.endswith((".py", ".pyi")):
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            return sorted(found)
        found |= {(n.name, n.lineno) for n in ast.walk(tree)
                  if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
        return sorted(found)
    language = SUFFIX_LANGUAGE.get(Path(path).suffix)
    if language is None:
        return sorted(found)
    stack = [_parser(language).parse(text.encode("utf-8", "replace")).root_node]
    while stack:
        node = stack.pop()
        stack.extend(node.named_children)
        name = (_name(node) if node.type in ANY_DEPTH[language]
                else _binding_name(node) if node.type in WRAPPERS else None)
        if name:
            found.add((re.split(r"[<\s]", name)[0], node.start_point[0] + 1))
    return sorted(found)


def targets(files: dict[str, str], library: Sequence[str]) -> list[Target]:
    """Definitions in `library` files whose short name every parsed file defines once, at any
    depth (`all_definitions`; a declaration file's `.pyi` or `.d.ts` stubs by the targets' walk
    only, as before: a stub declares the implementation's name, which the figure asks to rank
    first). Their `query` is the name; see `words_targets` for the other form."""
    found = {p: definitions(p, t) for p, t in files.items()}
    named = {p: set(all_definitions(p, t)) if not _DECLARATION.search(p)
             else {(short(q), line) for q, _, _, line in found[p]} for p, t in files.items()}
    counts = Counter(name for defs in named.values() for name, _ in defs)
    out = []
    for path in sorted(library):
        for qual, first, last, line in found.get(path, []):
            name = short(qual)
            if counts[name] == 1 and len(name) >= MIN_NAME and not name.startswith("__") and name not in _NOT_NAMES:
                out.append(Target(name, path, qual, first, last, line))
    return out


def words_targets(named: list[Target]) -> list[Target]:
    return [Target(words_of(t.name), t.path, t.qualname, t.start_line, t.end_line, t.def_line)
            for t in named if len(words_of(t.name).split()) >= 2]


_DEFINING = r"(?:def|class|fn|func|function|struct|enum|trait|interface|type|const|let|var)"


class Grep:
    """`grep -n` for a definition line of a name over every indexed file (sorted by path): the
    lines that open a definition of it (`def NAME`, `class NAME`, `fn NAME`, `func (r T) NAME`,
    `NAME(...) {` for a method), in file order, each a one-line hit."""

    def __init__(self, files: dict[str, str]) -> None:
        self.files = dict(sorted(files.items()))

    def search(self, name: str, k: int = 10) -> list[Span]:
        pattern = re.compile(rf"^\s*(?:export\s+)?(?:default\s+)?(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?"
                             rf"(?:static\s+)?(?:{_DEFINING}\s+(?:\([^)]*\)\s*)?{re.escape(name)}\b|"
                             rf"{re.escape(name)}\s*\([^;]*$)")
        out: list[Span] = []
        for path, text in self.files.items():
            if name not in text:
                continue
            for i, line in enumerate(text.split("\n"), 1):
                if pattern.search(line):
                    out.append(Span(path, i, i, line))
                    if len(out) >= k:
                        return out
        return out
