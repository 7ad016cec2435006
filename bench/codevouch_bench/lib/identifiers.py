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

from codevouch_bench.lib.doccomments import SUFFIX_LANGUAGE, _definitions, _parser
from codevouch_bench.lib.docstrings import Target, _defs
from codevouch_bench.lib.retrieval import Span

_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
MIN_NAME = 4   # `get`, `run`: too short to be a name one searches for


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


def targets(files: dict[str, str], library: Sequence[str]) -> list[Target]:
    """Definitions in `library` files whose short name every parsed file defines once. Their
    `query` is the name; see `words_targets` for the other form."""
    found = {p: definitions(p, t) for p, t in files.items()}
    counts = Counter(short(q) for defs in found.values() for q, *_ in defs)
    out = []
    for path in sorted(library):
        for qual, first, last, line in found.get(path, []):
            name = short(qual)
            if counts[name] == 1 and len(name) >= MIN_NAME and not name.startswith("__"):
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
