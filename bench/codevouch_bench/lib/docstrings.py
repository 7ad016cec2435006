"""Docstring -> function queries: strip docs from real code, keep where each function is.

Python: `ast` finds every docstring (module, class, function); its lines become blank, or
`pass` when the docstring was the whole body, so every line number stays valid.
Other languages: codevouch_bench/lib/doccomments.py (tree-sitter walks of the benchmark's own).
"""
from __future__ import annotations

import ast
import re
from dataclasses import asdict, dataclass
from typing import Any

MIN_WORDS = 4


@dataclass(frozen=True)
class Target:
    """One query and the function it must find."""
    query: str
    path: str
    qualname: str       # Class.method, as codevouch names symbols
    start_line: int     # 1-based, decorators included
    end_line: int
    def_line: int       # the `def`/`fn` line itself: a window "names" the function when it holds it

    @property
    def name(self) -> str:
        return re.split(r"\.|::", self.qualname)[-1]

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def first_sentence(doc: str) -> str:
    """First paragraph, cut at the first sentence end; whitespace collapsed."""
    para = doc.strip().split("\n\n", 1)[0]
    para = " ".join(para.split())
    match = re.search(r"(?<=[.!?])\s+(?=[A-Z`\"'(])", para)  # "e.g. this" is no sentence end
    return para[:match.start()] if match else para


def _docstring_node(node: ast.AST) -> ast.Constant | None:
    body = getattr(node, "body", None)
    if not body or not isinstance(body[0], ast.Expr):
        return None
    value = body[0].value
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        return value
    return None


def _defs(tree: ast.Module) -> list[tuple[str, ast.AST]]:
    """(qualified name, node) of module-level and class-level defs; nested functions belong to
    their parent (as in codevouch's chunker), so they are not targets."""
    out: list[tuple[str, ast.AST]] = []

    def walk(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                out.append((prefix + node.name, node))
                if isinstance(node, ast.ClassDef):
                    walk(node.body, prefix + node.name + ".")
    walk(tree.body, "")
    return out


def def_ranges(text: str) -> dict[str, tuple[int, int]]:
    """Qualified name -> (first line incl. decorators, last line) of each def; {} if unparsable."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return {}
    ranges: dict[str, tuple[int, int]] = {}
    for name, node in _defs(tree):
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        ranges.setdefault(name, (first, node.end_lineno or node.lineno))
    return ranges


def strip_python(text: str, path: str) -> tuple[str, list[Target]]:
    """The file with every docstring blanked out, and one target per documented function."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return text, []
    lines = text.split("\n")
    targets: list[Target] = []
    owners = [tree] + [n for _, n in _defs(tree)] + [
        n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    blanked: set[int] = set()
    for qual, node in _defs(tree):
        doc = _docstring_node(node)
        if doc is None or not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        query = first_sentence(doc.value)
        if len(query.split()) >= MIN_WORDS:
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            targets.append(Target(query, path, qual, first, node.end_lineno or node.lineno, node.lineno))
    for node in owners:
        doc = _docstring_node(node)
        if doc is None or id(doc) in blanked:
            continue
        blanked.add(id(doc))
        start, end = doc.lineno - 1, (doc.end_lineno or doc.lineno) - 1
        only_body = len(getattr(node, "body", [])) == 1 and not isinstance(node, ast.Module)
        head = lines[start][:doc.col_offset]
        tail = lines[end][doc.end_col_offset or 0:]
        filler = "pass" if only_body else ""
        if head.strip() or tail.strip():
            # `def f(): "doc"` on one line, or code after the closing quotes: keep that code.
            lines[start] = head + (filler or "None") + (tail if start == end else "")
            if start != end:
                lines[end] = " " * len(lines[end][:doc.end_col_offset or 0]) + tail
            for i in range(start + 1, end):
                lines[i] = ""
        else:
            lines[start] = head + filler if filler else ""
            for i in range(start + 1, end + 1):
                lines[i] = ""
    out = "\n".join(lines)
    try:
        ast.parse(out)
    except SyntaxError:  # never feed a broken file to the indexers; keep it, drop its queries
        return text, []
    return out, targets
