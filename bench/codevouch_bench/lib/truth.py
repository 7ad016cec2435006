"""Ground truth for freshness, computed without the validator: git's own rename detection on
the two releases, and the benchmark's own parsers (codevouch_bench/lib/tooldefs.py: Python's `ast`, a
tree-sitter query for Rust) on both versions of each changed file.

Each snippet of release N (a codevouch chunk, or a whole definition as another tool hands it
over) gets one class describing what happened to its code in N+1.
"""
from __future__ import annotations

import hashlib
import os
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from codevouch_bench.lib.corpus import GIT_ENV, git
from codevouch_bench.lib.tooldefs import Def, by_name, definitions, may_define

FRESH = ("usable", "stale-but-ok")

# class -> verdicts that are right for it. The order is the table's row order.
EXPECTED: dict[str, frozenset[str]] = {
    "unchanged-file": frozenset(FRESH),
    "function-identical": frozenset({"stale-but-ok"}),
    "other-code-intact": frozenset({"stale-but-ok"}),
    "function-moved-to-file": frozenset({"stale-but-ok"}),
    "other-code-elsewhere": frozenset({"stale-but-ok", "historical-only"}),
    "function-moved-chunk-split": frozenset({"stale-but-ok", "historical-only"}),
    "function-moved-chunk-intact": frozenset({"stale-but-ok", "historical-only"}),
    "function-moved-in-file": frozenset({"stale-but-ok", "historical-only"}),
    "function-identical-chunk-split": frozenset({"stale-but-ok", "historical-only"}),
    "function-changed-chunk-intact": frozenset({"stale-but-ok", "historical-only"}),
    "function-changed": frozenset({"historical-only"}),
    "function-removed": frozenset({"historical-only"}),
    "other-code-changed": frozenset({"historical-only"}),
    "file-deleted": frozenset({"historical-only"}),
    "file-renamed-identical": frozenset({"stale-but-ok"}),
}
MEANING: dict[str, str] = {
    "unchanged-file": "file identical in N+1 (same blob)",
    "function-identical": "file changed; every definition the snippet names has identical source "
                          "and the snippet's lines are still there as a block",
    "other-code-intact": "file changed; the snippet names no function (module code, class header) "
                         "and its lines are still there as a block",
    "function-moved-to-file": "a definition the snippet names left its file (or the file is gone, no rename), "
                              "another file of N+1 defines the same qualified name with identical source, "
                              "and the snippet's lines are there as a block",
    "other-code-elsewhere": "file gone, no rename detected; the snippet names no function, and exactly one "
                            "file of N+1 holds its lines as a block: moved there, or a look-alike (a common "
                            "header); with no name to go by, the truth cannot tell",
    "function-moved-chunk-split": "as function-moved-to-file, but the snippet's lines are not there as a block: "
                                  "it shows code around the definition that changed or stayed behind",
    "function-moved-chunk-intact": "a definition the snippet names left its file; another file defines its own "
                                   "name with the snippet's lines intact, but not identically or not under the "
                                   "same qualified name (changed elsewhere, or a look-alike)",
    "function-moved-in-file": "a definition the snippet names no longer exists under that qualified name, "
                              "but the same file defines its own name elsewhere (another class) with the "
                              "snippet's lines intact",
    "function-identical-chunk-split": "file changed; the chunk's functions are identical but no longer "
                                      "adjacent (code added between them), so the chunk as a block is gone",
    "function-changed-chunk-intact": "a window of a function that changed elsewhere: this chunk's own "
                                     "lines are unchanged",
    "function-changed": "a definition the snippet names changed, and so did the snippet's lines",
    "function-removed": "a definition the snippet names no longer exists (not in the file, not moved)",
    "other-code-changed": "the snippet names no function, and its lines are no longer in the file",
    "file-deleted": "file gone, no rename detected, its code not found elsewhere (a block of module code "
                    "that several files of N+1 hold is code of no file in particular: not found)",
    "file-renamed-identical": "git -M: renamed, content identical (the same blob id on both sides); "
                              "a file renamed and edited is judged at its new path like a changed file",
}
# Code the snippet shows no longer exists (as is, at its path): a fresh label here is false-fresh.
STALE_TRUTH = frozenset({"function-changed", "function-removed", "other-code-changed", "file-deleted"})
# The snippet's code is current: a historical-only label here is false-stale. A file renamed with
# identical content is the same code at a new path, as a function moved to another file is.
FRESH_TRUTH = frozenset({"unchanged-file", "function-identical", "other-code-intact", "function-moved-to-file",
                         "file-renamed-identical"})
# Neither: reported, counted in neither rate.
AMBIGUOUS = frozenset(EXPECTED) - STALE_TRUTH - FRESH_TRUTH


@dataclass(frozen=True)
class FileFate:
    status: str                 # unchanged | modified | deleted | renamed
    new_path: str | None
    identical: bool


def file_fates(repo: Path, old: str, new: str, paths: Iterable[str]) -> dict[str, FileFate]:
    """What happened to each path from commit `old` to `new`, by `git diff -M` (git's defaults).
    A rename is identical when both sides have the same blob id (git's own fact, not its
    similarity score: R100 rounds)."""
    fields = git(repo, "diff", "--raw", "--no-abbrev", "-z", "-M", old, new).split("\0")
    renamed: dict[str, tuple[str, bool]] = {}
    changed: dict[str, str] = {}
    i = 0
    while i < len(fields) and fields[i]:
        _, _, old_blob, new_blob, status = fields[i].lstrip(":").split(" ", 4)
        if status.startswith(("R", "C")):
            if status.startswith("R"):
                renamed[fields[i + 1]] = (fields[i + 2], old_blob == new_blob)
            i += 3
        else:
            changed[fields[i + 1]] = status[0]
            i += 2
    fates: dict[str, FileFate] = {}
    for path in paths:
        if path in renamed:
            fates[path] = FileFate("renamed", renamed[path][0], renamed[path][1])
        elif changed.get(path) == "D":
            fates[path] = FileFate("deleted", None, False)
        elif changed.get(path) in ("M", "T"):
            fates[path] = FileFate("modified", path, False)
        else:
            fates[path] = FileFate("unchanged", path, True)
    return fates


def block_present(block: list[str], lines: list[str]) -> bool:
    """The chunk's lines occur, in order and adjacent, as whole lines of the file."""
    n = len(block)
    if n == 0:
        return False
    first = block[0]
    return any(lines[i:i + n] == block for i in range(len(lines) - n + 1) if lines[i] == first)


BOM = "\ufeff"


def source_text(text: str) -> str:
    """A file's text as its language reads it: without a leading UTF-8 byte-order mark. The mark
    is an encoding signature, not a character of the code (Unicode ch. 23.8; C#, Java, Python,
    C and C++ compilers skip it), and a snippet shows code: a file whose only change is a dropped
    mark shows the same code in both releases."""
    return text.removeprefix(BOM)


class NewRelease:
    """Definitions of release N+1's files, parsed on demand (the benchmark's parsers)."""

    def __init__(self, repo: Path, rev: str, paths: Iterable[str]) -> None:
        self.repo, self.rev = repo, rev
        self.all_paths = sorted(p for p in paths if p)
        self.paths = [p for p in self.all_paths if may_define(p)]
        self._defs: dict[str, list[Def]] = {}
        self._text: dict[str, list[str]] = {}
        self._by_own: dict[str, list[tuple[str, Def]]] | None = None

    def lines(self, path: str) -> list[str]:
        if path not in self._text:
            self._text[path] = source_text(git(self.repo, "show", f"{self.rev}:{path}")).split("\n")
        return self._text[path]

    def defs(self, path: str) -> list[Def]:
        if path not in self._defs:
            try:
                self._defs[path] = definitions(path, "\n".join(self.lines(path)))
            except UnicodeDecodeError:      # a binary file with no extension
                self._defs[path] = []
        return self._defs[path]

    def moved(self, name: str, source: list[str], block: list[str], not_in: str | None) -> tuple[str, str] | None:
        """What another file (not `not_in`) holds of definition `name` (old `source`, the
        snippet's `block` of it), and which file: ("identical", path) (same qualified name, same
        source), ("block", path) (its own name defined with the block intact), or None."""
        if self._by_own is None:
            self._by_own = {}
            for path in self.paths:
                for d in self.defs(path):
                    self._by_own.setdefault(d.name.rsplit(".", 1)[-1], []).append((path, d))
        found = None
        for path, d in self._by_own.get(name.rsplit(".", 1)[-1], ()):
            if path == not_in:
                continue
            lines = self.lines(path)[d.start - 1:d.end]
            same_name = d.name == name or d.name.endswith("." + name) or name.endswith("." + d.name)
            if same_name and lines == source:
                return "identical", path
            if found is None and block_present(block, lines):
                found = "block", path
        return found

    def files_with_block(self, block: list[str]) -> list[str]:
        """Every text file of N+1 that holds `block` as whole adjacent lines (git grep for its
        longest line, each candidate then read whole)."""
        needle = max(block, key=len)
        proc = subprocess.run(["git", "-C", str(self.repo), "grep", "-z", "-l", "-I", "-F", "-e", needle,
                               self.rev, "--"], capture_output=True, text=True, env={**os.environ, **GIT_ENV})
        prefix = f"{self.rev}:"
        candidates = [f.removeprefix(prefix) for f in proc.stdout.split("\0") if f]
        return [path for path in candidates if block_present(block, self.lines(path))]


def _shown(defs: list[Def], start: int, end: int) -> list[Def]:
    """The definitions of one name that a snippet of lines start..end shows: those its lines
    overlap (an overloaded name, a getter and its setter, a trait and its companion object, is
    judged by the one the snippet holds, not by the first of that name); all of them when it
    overlaps none."""
    return [d for d in defs if d.start <= end and start <= d.end] or defs


def chunk_class(path: str, symbol: str, start: int, end: int, fate: FileFate,
                old_text: str, new_text: str | None, new: NewRelease | None = None) -> str:
    """What became of a snippet: lines start..end of `path` in release N, naming `symbol`
    (codevouch's chunk symbols, or the qualified name of a whole definition). `new_text` is the
    file in N+1, at `fate.new_path` (None when the file is unchanged, deleted or renamed intact)."""
    if fate.status == "unchanged":
        return "unchanged-file"
    if fate.status == "renamed" and fate.identical:
        return "file-renamed-identical"
    # A file renamed and edited is judged at its new path as a modified file is at its own: each
    # snippet by its own definitions and lines there (function-identical, function-changed, ...).
    # The truth once called every snippet of such a file stale; that contradicted its own
    # function-moved-to-file (a definition with identical source in another file is current), and
    # the product's rule that a snippet whose text is verbatim at its rename target is current
    # (docs/VALIDATION.md): a package move that edits one function leaves the file's other
    # functions current at the new path, as moving those functions one by one would.
    new_path = fate.new_path or path
    old_text = source_text(old_text)
    old_lines = old_text.split("\n")
    block = old_lines[start - 1:end]
    names = [n.strip() for n in symbol.split(",") if n.strip() and n.strip() != "<module>"]
    old_defs = {n: _shown(ds, start, end) for n, ds in by_name(definitions(path, old_text)).items()}
    # Functions count as functions; a class-named chunk is usually its header piece. A whole
    # definition (another tool's snippet) counts whatever its kind.
    funcs = [n for n in names if n in old_defs
             and any(d.function or start <= d.start and d.end <= end for d in old_defs[n])]
    moved = _moved(funcs, old_defs, old_lines, block, None if fate.status == "deleted" else new_path, new)
    if fate.status == "deleted":
        return moved or _other_code_moved(funcs, block, new) or "file-deleted"
    assert new_text is not None
    new_lines = source_text(new_text).split("\n")
    intact = block_present(block, new_lines)
    if not funcs:
        return "other-code-intact" if intact else "other-code-changed"
    new_defs = by_name(definitions(new_path, "\n".join(new_lines)))
    if any(n not in new_defs for n in funcs):
        if moved:
            return moved
        own = {d.rsplit(".", 1)[-1] for d in new_defs}
        if intact and all(n.rsplit(".", 1)[-1] in own for n in funcs):
            return "function-moved-in-file"
        return "function-removed"
    same = all(any(_source(old_lines, d) == _source(new_lines, e) for d in old_defs[n] for e in new_defs[n])
               for n in funcs)
    if same:
        return "function-identical" if intact else "function-identical-chunk-split"
    return "function-changed-chunk-intact" if intact else "function-changed"


def _moved(funcs: list[str], old_defs: dict[str, list[Def]], old_lines: list[str], block: list[str],
           not_in: str | None, new: NewRelease | None) -> str | None:
    """Whether the definitions a snippet names left for other files: each found elsewhere with
    identical source and the snippet's lines there as a block (moved-to-file), identical but the
    lines not there (moved-chunk-split: the snippet also shows code that did not move as it
    was), or each at least with the lines intact (moved-chunk-intact)."""
    if new is None or not funcs:
        return None
    found = []
    for n in funcs:
        fates = [new.moved(n, _source(old_lines, d), block, not_in) for d in old_defs[n]]
        found.append(next((f for f in fates if f and f[0] == "identical"), None) or next((f for f in fates if f), None))
    if all(f and f[0] == "identical" for f in found):
        homes = {f[1] for f in found if f}
        whole = len(homes) == 1 and block_present(block, new.lines(homes.pop()))
        return "function-moved-to-file" if whole else "function-moved-chunk-split"
    return "function-moved-chunk-intact" if all(found) else None


def _other_code_moved(funcs: list[str], block: list[str], new: NewRelease | None) -> str | None:
    """Code of a deleted file that names no function, held as a block by exactly one file of N+1:
    moved there (a file split in several: scopt's `implicit val`s, verbatim in Read.scala), or a
    look-alike (its `package scopt` and `import java.io.File` header), and with no name to go by
    the truth cannot tell which: ambiguous, as a definition found elsewhere under another name is.
    Held by several (`namespace leveldb {`, a licence header), it is code of no file in particular,
    and not found. In a file that is still there, module code whose lines are gone changed in
    place: a copy of them elsewhere is no move.
    """
    if new is None or funcs or not any(line.strip() for line in block):
        return None
    return "other-code-elsewhere" if len(new.files_with_block(block)) == 1 else None


def _source(lines: list[str], d: Def) -> list[str]:
    return lines[d.start - 1:d.end]


# -- the check most teams write ------------------------------------------------------------

def git_blob_id(data: bytes) -> str:
    """git hash-object without filters: sha1 of "blob <size>\\0" + bytes."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def naive_exists_and_hash(repo: Path, path: str, blob_sha: str) -> bool:
    file = repo / path
    return file.is_file() and git_blob_id(file.read_bytes()) == blob_sha


def naive_exists(repo: Path, path: str) -> bool:
    return os.path.isfile(repo / path)
