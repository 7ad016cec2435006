"""`outline PATH`: what a working-tree file defines (kind, qualified name, signature, current
lines), or a directory's files and their top-level definitions, bounded."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codevouch.navigate import read_source
from codevouch.printable import one_line
from codevouch.syntax.outline import Definition, outline
from codevouch.worktree import gitio
from codevouch.worktree.files import read_text
from codevouch.worktree.paths import locate

# The most files a directory's outline reads, and the most definitions one answer lists.
MOST_FILES = 200
MOST_ENTRIES = 2000

# A comment between a header and its body (Python's `def f():  # why`) is not the signature.
_TRAILING_COMMENT = re.compile(r"(?<=[:{)])\s+(?:#|//).*$")
_CONTAINERS = {"class", "struct", "interface", "trait", "enum", "type", "impl", "record", "object", "module",
               "namespace", "protocol", "union"}


@dataclass(frozen=True)
class Entry:
    """One definition of an outline, as the working tree has it now."""
    path: str
    kind: str           # class (any container: struct, interface, type ...), method or function
    name: str           # qualified, as the index names it (`OrderService.cancel_order`)
    signature: str      # the defining text before its body, whitespace collapsed
    start_line: int
    end_line: int

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "kind": self.kind, "name": self.name, "signature": self.signature,
                "start_line": self.start_line, "end_line": self.end_line}

    def line(self) -> str:
        """For people: `L12-L30 method OrderService.cancel_order: def cancel_order(self, order):`."""
        indent = "    " * self.name.count(".")
        return one_line(f"{indent}L{self.start_line}-L{self.end_line} {self.kind} {self.name}: {self.signature}")


@dataclass(frozen=True)
class Outline:
    """`Index.outline`'s answer: the entries in file order, and a note for what was left out
    (files of no supported language, files refused, the bounds)."""
    path: str
    entries: tuple[Entry, ...]
    notes: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "entries": [e.to_json() for e in self.entries], "notes": list(self.notes)}


def kind_of(d: Definition) -> str:
    """class for a container (by the keyword its signature starts with), else method when it lies
    inside another definition, else function."""
    words = re.sub(r"[({]", " ", d.signature).split()[:4]
    if any(w in _CONTAINERS for w in words):
        return "class"
    return "method" if "." in d.name else "function"


def _entry(path: str, d: Definition) -> Entry:
    return Entry(path, kind_of(d), d.name, _TRAILING_COMMENT.sub("", d.signature), d.start, d.end)


def outline_path(root: Path, given: str, limit: int) -> Outline:
    """The outline of `given` (a file: every definition; a directory: each file's top-level ones),
    read from the working tree now. InputError for a path refused (navigate.refusal)."""
    if given in ("", ".", "./") or os.path.realpath(given if os.path.isabs(given) else root / given) == os.path.realpath(root):
        return _directory(root, "", limit)      # the repository's top: its files' top-level definitions
    loc = locate(root, given)
    if loc.inside and loc.rel is not None and loc.real is not None and os.path.isdir(root / loc.real) \
            and not os.path.islink(root / (loc.rel or ".")):
        return _directory(root, loc.rel, limit)
    source = read_source(root, given, limit)
    found = outline(source.text, source.path)
    if found is None:
        return Outline(source.path, (), (f"{one_line(source.path)}: no supported language, or it does not parse",))
    entries = tuple(_entry(source.path, d) for d in found)
    return _bounded(source.path, entries, ())


def _directory(root: Path, rel: str, limit: int) -> Outline:
    prefix = "" if rel in ("", ".") else rel.rstrip("/") + "/"
    files = sorted(p for p in gitio.worktree_files(root) if p.startswith(prefix))
    notes = [f"{len(files) - MOST_FILES} more files not read (at most {MOST_FILES})"] if len(files) > MOST_FILES else []
    entries: list[Entry] = []
    for path in files[:MOST_FILES]:
        # git listed it: not ignored. Still never through a symlink out of the repository, a FIFO or a device.
        where = locate(root, path)
        text = read_text(root, where.real, limit) if where.inside and where.exists and where.real else None
        if not isinstance(text, str):
            continue
        found = outline(text, path) or []
        entries += [_entry(path, d) for d in found if "." not in d.name]
    return _bounded(rel or ".", tuple(entries), tuple(notes))


def _bounded(path: str, entries: tuple[Entry, ...], notes: tuple[str, ...]) -> Outline:
    if len(entries) > MOST_ENTRIES:
        notes += (f"{len(entries) - MOST_ENTRIES} more definitions not listed (at most {MOST_ENTRIES})",)
    return Outline(path, entries[:MOST_ENTRIES], notes)
