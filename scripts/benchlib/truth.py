"""Ground truth for freshness, computed without the validator: git's own rename detection on
the two releases, and Python's `ast` on both versions of each changed file.

Each indexed chunk of release N gets one class describing what happened to its code in N+1.
"""
from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from benchlib.corpus import git
from benchlib.docstrings import def_ranges

FRESH = ("usable", "stale-but-ok")

# class -> verdicts that are right for it. The order is the table's row order.
EXPECTED: dict[str, frozenset[str]] = {
    "unchanged-file": frozenset(FRESH),
    "function-identical": frozenset({"stale-but-ok"}),
    "other-code-intact": frozenset({"stale-but-ok"}),
    "function-identical-chunk-split": frozenset({"stale-but-ok", "historical-only"}),
    "function-changed-chunk-intact": frozenset({"stale-but-ok", "historical-only"}),
    "function-changed": frozenset({"historical-only"}),
    "function-removed": frozenset({"historical-only"}),
    "other-code-changed": frozenset({"historical-only"}),
    "file-deleted": frozenset({"historical-only"}),
    "file-renamed-identical": frozenset({"historical-only"}),
    "file-renamed-changed": frozenset({"historical-only"}),
}
MEANING: dict[str, str] = {
    "unchanged-file": "file identical in N+1 (same blob)",
    "function-identical": "file changed; every function the chunk names has identical source (ast) "
                          "and the chunk's lines are still there as a block",
    "other-code-intact": "file changed; chunk names no function (module code, class header, non-Python) "
                         "and its lines are still there as a block",
    "function-identical-chunk-split": "file changed; the chunk's functions are identical but no longer "
                                      "adjacent (code added between them), so the chunk as a block is gone",
    "function-changed-chunk-intact": "a window of a function that changed elsewhere: this chunk's own "
                                     "lines are unchanged",
    "function-changed": "a function the chunk names changed, and so did the chunk's lines",
    "function-removed": "a function the chunk names no longer exists in the file",
    "other-code-changed": "chunk names no function, and its lines are no longer in the file",
    "file-deleted": "file gone, no rename detected",
    "file-renamed-identical": "git -M: renamed, content identical",
    "file-renamed-changed": "git -M: renamed and edited",
}
# Code the snippet shows no longer exists (as is, at its path): a fresh label here is false-fresh.
STALE_TRUTH = frozenset({"function-changed", "function-removed", "other-code-changed", "file-deleted",
                         "file-renamed-identical", "file-renamed-changed"})
# The snippet's code is current: a historical-only label here is false-stale.
FRESH_TRUTH = frozenset({"unchanged-file", "function-identical", "other-code-intact"})
# Neither: reported, counted in neither rate.
AMBIGUOUS = frozenset(EXPECTED) - STALE_TRUTH - FRESH_TRUTH


@dataclass(frozen=True)
class FileFate:
    status: str                 # unchanged | modified | deleted | renamed
    new_path: str | None
    identical: bool


def file_fates(repo: Path, old: str, new: str, paths: Iterable[str]) -> dict[str, FileFate]:
    """What happened to each path from commit `old` to `new`, by `git diff -M` (git's defaults)."""
    fields = git(repo, "diff", "--name-status", "-z", "-M", old, new).split("\0")
    renamed: dict[str, tuple[str, bool]] = {}
    changed: dict[str, str] = {}
    i = 0
    while i < len(fields) and fields[i]:
        status = fields[i]
        if status.startswith(("R", "C")):
            if status.startswith("R"):
                renamed[fields[i + 1]] = (fields[i + 2], status == "R100")
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


def chunk_class(path: str, symbol: str, start: int, end: int, fate: FileFate,
                old_text: str, new_text: str | None) -> str:
    if fate.status == "unchanged":
        return "unchanged-file"
    if fate.status == "deleted":
        return "file-deleted"
    if fate.status == "renamed":
        return "file-renamed-identical" if fate.identical else "file-renamed-changed"
    assert new_text is not None
    old_lines, new_lines = old_text.split("\n"), new_text.split("\n")
    intact = block_present(old_lines[start - 1:end], new_lines)
    names = [n.strip() for n in symbol.split(",") if n.strip() and n.strip() != "<module>"]
    old_defs = def_ranges(old_text) if path.endswith(".py") else {}
    # Only functions count as functions: a class-named chunk is usually its header piece.
    funcs = [n for n in names if n in old_defs and _is_function(old_text, old_defs[n])]
    if not funcs:
        return "other-code-intact" if intact else "other-code-changed"
    new_defs = def_ranges(new_text)
    if any(n not in new_defs for n in funcs):
        return "function-removed"
    same = all(_source(old_lines, old_defs[n]) == _source(new_lines, new_defs[n]) for n in funcs)
    if same:
        return "function-identical" if intact else "function-identical-chunk-split"
    return "function-changed-chunk-intact" if intact else "function-changed"


def _source(lines: list[str], span: tuple[int, int]) -> list[str]:
    return lines[span[0] - 1:span[1]]


def _is_function(text: str, span: tuple[int, int]) -> bool:
    for line in text.split("\n")[span[0] - 1:span[1]]:
        stripped = line.strip()
        if stripped.startswith("@") or not stripped:
            continue
        return stripped.startswith(("def ", "async def "))
    return False


# -- the check most teams write ------------------------------------------------------------

def git_blob_id(data: bytes) -> str:
    """git hash-object without filters: sha1 of "blob <size>\\0" + bytes."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def naive_exists_and_hash(repo: Path, path: str, blob_sha: str) -> bool:
    file = repo / path
    return file.is_file() and git_blob_id(file.read_bytes()) == blob_sha


def naive_exists(repo: Path, path: str) -> bool:
    return os.path.isfile(repo / path)
