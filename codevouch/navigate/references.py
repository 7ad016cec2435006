"""`references NAME`: where a name is used in the working tree now.

One `git grep -w` for the name's last part over the working tree (tracked and untracked files,
never ignored ones; a deleted file is not there to match), then each matching line read through
tree-sitter: a use is an identifier node spelling the name, classified by where it stands:
`call`, `import`, `inheritance`, `type`, or `name` (any other use). Definitions of the name,
comments and strings are not uses. No type inference: `exact` where the syntax ties the use to
the name (an import of it, or a bare use in a file that defines or imports it), `by-name` where
only the spelling does (`obj.cancel_order()` calls some `cancel_order`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codevouch.errors import InputError
from codevouch.printable import one_line
from codevouch.syntax import registry
from codevouch.syntax.definitions import Found, walk
from codevouch.syntax.languages import detect_language, get_spec
from codevouch.worktree import gitio
from codevouch.worktree.files import read_text
from codevouch.worktree.paths import locate

if TYPE_CHECKING:
    from tree_sitter import Node

    from codevouch.syntax.spec import LanguageSpec

MOST_FILES = 500          # files parsed for one call; the rest are counted in the note
CONTEXT_CHARS = 200
_NAME = re.compile(r"^[A-Za-z_$][\w$]*(?:(?:\.|::)[A-Za-z_$][\w$]*){0,20}$")
_CALLS = ("call", "call_expression", "method_invocation", "invocation_expression", "new_expression",
          "object_creation_expression", "composite_literal")
_INHERITS = ("superclasses", "argument_list_superclass", "class_heritage", "extends_clause", "implements_clause",
             "superclass", "super_interfaces", "base_list", "extends_type_clause")


@dataclass(frozen=True)
class Reference:
    path: str
    line: int
    kind: str              # call | import | inheritance | type | name
    resolution: str        # exact | by-name
    enclosing: str | None  # the qualified name of the definition the use lies in (None: top level)
    context: str           # the line, stripped and escaped, at most CONTEXT_CHARS

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "line": self.line, "kind": self.kind, "resolution": self.resolution,
                "enclosing": self.enclosing, "context": self.context}


@dataclass(frozen=True)
class References:
    """`Index.references`' answer, in path and line order; `note` when the limit left some out."""
    name: str
    references: tuple[Reference, ...]
    note: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "references": [r.to_json() for r in self.references], "note": self.note}


def references(root: Path, name: str, limit: int, max_bytes: int) -> References:
    """The uses of `name` (bare or qualified; the last part is what is looked for) in the working
    tree, at most `limit`."""
    if not _NAME.match(name):
        raise InputError(f"{one_line(name[:80])!r} is not a name: give an identifier, optionally qualified "
                         "(`cancel_order`, `OrderService.cancel_order`).")
    if limit < 1:
        raise InputError(f"the limit must be at least 1, got {limit}.")
    parts = name.replace("::", ".").split(".")
    last = parts[-1]
    by_file: dict[str, list[tuple[int, str]]] = {}
    for path, number, text in gitio.grep_word_lines(root, last):
        by_file.setdefault(path, []).append((number, text))
    files = sorted(by_file)
    read = [(path, *_in_file(root, path, by_file[path], last, max_bytes)) for path in files[:MOST_FILES]]
    # Where files declare their package (Go's is its directory), a bare use in a file beside the
    # definition names it without an import.
    package_dirs = {path.rpartition("/")[0] for path, _, defines in read if defines and _packaged(path)}
    found: list[Reference] = []
    for path, uses, defines in read:
        tied = defines or any(r.kind == "import" for r in uses) or \
            (_packaged(path) and path.rpartition("/")[0] in package_dirs)
        found += [replace(r, resolution=_resolution(r.kind, r.context, last, tied)) for r in uses]
    notes = []
    if len(files) > MOST_FILES:
        notes.append(f"{len(files) - MOST_FILES} more files mention {last} and were not read (at most {MOST_FILES})")
    if len(found) > limit:
        notes.append(f"{len(found) - limit} more references not listed (at most {limit}; raise the limit)")
    return References(name, tuple(found[:limit]), "; ".join(notes) or None)


def _packaged(path: str) -> bool:
    """Whether `path`'s language has files declare their package (spec.Language.package_clause)."""
    lang = registry.of_path(path)
    return lang is not None and lang.package_clause is not None


def _in_file(root: Path, path: str, lines: list[tuple[int, str]], last: str,
             max_bytes: int) -> tuple[list[Reference], bool]:
    """The uses of `last` on the grep's `lines` of `path` (their resolution decided by the caller),
    and whether the file defines `last`."""
    lang = detect_language(path)
    loc = locate(root, path)
    text = read_text(root, loc.real, max_bytes) if lang and loc.inside and loc.exists and loc.real else None
    if lang is None or not isinstance(text, str):
        return [], False
    spec = get_spec(lang)
    walked = walk(text, lang)     # one parse: the tree the uses are looked up in, and its definitions
    if walked is None:
        return [], False
    tree, defs = walked
    out = []
    for number, line in lines:
        for match in re.finditer(rf"(?<![\w$]){re.escape(last)}(?![\w$])", line):
            col = len(line[:match.start()].encode("utf-8", "surrogatepass"))
            node = tree.descendant_for_point_range((number - 1, col), (number - 1, col + len(last.encode())))
            kind = _kind(node, spec, last) if node is not None else None
            if kind is not None:
                out.append(Reference(path, number, kind, "by-name", _enclosing(defs, number),
                                     one_line(line.strip())[:CONTEXT_CHARS]))
                break
    return out, any(d.name.split(".")[-1] == last for d in defs)


def _kind(node: Node, spec: LanguageSpec, last: str) -> str | None:
    """What a use of the identifier `node` is; None when it is no use (not an identifier of that
    name: a comment, a string; or the name a definition defines)."""
    if node.child_count or node.text is None or node.text.decode("utf-8", "replace") != last \
            or "comment" in node.type or "string" in node.type:
        return None
    parent = node.parent
    if parent is not None and (parent.type in spec.definitions and parent.child_by_field_name("name") == node
                               or _declares(node, parent)):
        return None
    return _by_place(node, spec)


def _declares(node: Node, parent: Node) -> bool:
    """Whether `node` declares a name of its own: a parameter (`def f(session)`, Go's `s *Server`),
    a keyword argument's name (`f(session=s)`), a `global` or `nonlocal` statement: another thing
    spelled the same, not a use of it (a parameter's default or type is a use)."""
    kind = parent.type
    if kind in ("parameters", "lambda_parameters", "global_statement", "nonlocal_statement", "formal_parameters"):
        return True
    if "parameter" in kind:
        named = parent.child_by_field_name("name") or parent.child_by_field_name("pattern")
        if named is not None:
            return bool(named == node)
        return bool(parent.named_children and parent.named_children[0] == node)
    return kind == "keyword_argument" and parent.child_by_field_name("name") == node


def _by_place(node: Node, spec: LanguageSpec) -> str:
    """The kind of a use by what holds it, up to the statement or definition it stands in."""
    kind = "name"
    current, child = node.parent, node
    while current is not None:
        t = current.type
        if "import" in t or t in ("use_declaration", "preproc_include"):
            return "import"
        if t in _INHERITS:
            return "inheritance"
        if t in _CALLS:
            # The called part (`f`, `obj.f`, `new F`) is a call; an argument is a plain use.
            return "call" if current.child_by_field_name("arguments") != child and kind == "name" else kind
        if "type" in t and kind == "name":
            kind = "type"
        if t in spec.definitions or t in ("block", "expression_statement", "module", "source_file"):
            break
        child, current = current, current.parent
    return kind


def _resolution(kind: str, line: str, last: str, tied: bool) -> str:
    """exact where the syntax ties the use to the name: an import naming it, or a bare use (not
    `obj.name`) in a file that defines or imports it; by-name otherwise."""
    if kind == "import":
        return "exact"
    qualified = re.search(rf"[\w$)\]]\s*(?:\.|->|::)\s*{re.escape(last)}(?![\w$])", line) is not None
    return "exact" if tied and not qualified else "by-name"


def _enclosing(defs: list[Found], line: int) -> str | None:
    around = [d for d in defs if d.start <= line <= d.end]
    return min(around, key=lambda d: d.end - d.start).name if around else None
