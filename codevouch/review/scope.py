"""What a review covers: the scope flags resolved to two sides of a diff, and the diff read.

Sides: a commit id, INDEX (git's staging area) or WORKTREE. Local scopes compare HEAD, the
index and the working tree; `A..B` compares two commits, `A...B` B with its merge-base with
A, `--base BRANCH` the working tree with its merge-base with BRANCH.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

from codevouch.errors import InputError
from codevouch.review.patch import FilePatch, added_file, parse_patch
from codevouch.worktree import gitio

INDEX = ":index"
WORKTREE = ":worktree"
_EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"   # git's empty tree: the side before a first commit
_LOCAL = ("staged", "unstaged", "untracked")


@dataclass(frozen=True)
class Scope:
    """A resolved scope: what the diff runs between, and whether untracked files join it."""
    kind: str                 # all | staged | unstaged | untracked | range | base (or a "+" join of local kinds)
    old: str                  # commit id, INDEX, or _EMPTY_TREE
    new: str                  # commit id, INDEX or WORKTREE
    tracked: bool             # diff the tracked files old -> new
    untracked: bool           # add untracked files (not ignored) as new files
    description: str

    def to_json(self) -> dict[str, object]:
        return {"kind": self.kind, "old": self.old, "new": self.new, "untracked": self.untracked,
                "description": self.description}


class ScopeFlags(TypedDict, total=False):
    """The local scope flags of a review, as review's keywords (`--staged`, `--unstaged`,
    `--untracked`: combinable; `--all`; `--base BRANCH`): with a revision, all that
    resolve_scope reads. They pass as one from review through build_review to resolve_scope,
    which checks that they do not conflict."""
    staged: bool
    unstaged: bool
    untracked: bool
    all_local: bool
    base: str | None


def resolve_scope(root: Path, revision: str | None = None, staged: bool = False, unstaged: bool = False,
                  untracked: bool = False, all_local: bool = False, base: str | None = None) -> Scope:
    """The scope the flags ask for; every local change when none is given. Raises
    UnknownRevision for a revision git cannot resolve, InputError for flags that conflict."""
    local = [name for name, on in zip(_LOCAL, (staged, unstaged, untracked)) if on]
    chosen = sum(bool(x) for x in (revision, base, local or all_local))
    if chosen > 1:
        raise InputError("choose one scope: a range (A..B or A...B), --base BRANCH, or local "
                         "changes (--staged, --unstaged, --untracked, --all).")
    if revision:
        return _range_scope(root, revision)
    head = gitio.head_commit(root)
    if base:
        mb = gitio.merge_base(root, base, "HEAD")
        return Scope("base", mb, WORKTREE, True, True,
                     f"{base} merge-base {mb[:7]} -> working tree (untracked files included)")
    if all_local or not local or set(local) == set(_LOCAL):
        return Scope("all", head or _EMPTY_TREE, WORKTREE, True, True,
                     f"all local changes: HEAD {_short(head)} -> working tree (untracked files included)")
    tracked_old, tracked_new = {
        ("staged",): (head or _EMPTY_TREE, INDEX),
        ("unstaged",): (INDEX, WORKTREE),
        ("staged", "unstaged"): (head or _EMPTY_TREE, WORKTREE),
    }.get(tuple(n for n in local if n != "untracked"), (head or _EMPTY_TREE, WORKTREE))
    has_tracked = any(n != "untracked" for n in local)
    words = {"staged": "staged changes", "unstaged": "unstaged changes", "untracked": "untracked files"}
    return Scope("+".join(local), tracked_old, tracked_new if has_tracked else WORKTREE, has_tracked,
                 "untracked" in local, " and ".join(words[n] for n in local))


def _short(commit: str | None) -> str:
    return commit[:7] if commit else "(no commits yet)"


def _range_scope(root: Path, revision: str) -> Scope:
    if "..." in revision:
        a, _, b = revision.partition("...")
        new = gitio.resolve_commit(root, b or "HEAD")
        old = gitio.merge_base(root, a or "HEAD", new)
        return Scope("range", old, new, True, False,
                     f"{revision}: merge-base {old[:7]} -> {b or 'HEAD'} {new[:7]}")
    if ".." in revision:
        a, _, b = revision.partition("..")
        old, new = gitio.resolve_commit(root, a or "HEAD"), gitio.resolve_commit(root, b or "HEAD")
        return Scope("range", old, new, True, False, f"{revision}: {old[:7]} -> {new[:7]}")
    raise InputError(f"{revision!r} is not a range; write A..B (B against A) or A...B "
                     "(B against its merge-base with A).")


# The most untracked files a review reads, in path order, as the overlay searches at most
# retriever.overlay.FILE_LIMIT: 50,000 untracked files ran past 300 s and 5 GB. The rest are
# listed as left out, unread.
UNTRACKED_LIMIT = 500


def read_patches(root: Path, scope: Scope, cap: int) -> tuple[list[FilePatch], dict[str, str]]:
    """The scope's changed files as patches (untracked ones made here), and a note per path
    whose content could not be read (symlink, unreadable, huge, past UNTRACKED_LIMIT).
    Working-tree files over `cap` bytes (max_file_bytes), and tracked paths that are now a FIFO
    or a device, are not diffed: listed with why."""
    from codevouch.worktree.changes import read_worktree
    from codevouch.worktree.files import undiffable_worktree_files

    patches: list[FilePatch] = []
    notes: dict[str, str] = {}
    if scope.tracked:
        undiffable = undiffable_worktree_files(root, cap) if scope.new == WORKTREE else {}
        huge = frozenset(undiffable)
        if scope.old == INDEX:
            raw = gitio.diff_patch(root, leave_out=huge)
        elif scope.new == INDEX:
            raw = gitio.diff_patch(root, scope.old, cached=True)
        elif scope.new == WORKTREE:
            raw = gitio.diff_patch(root, scope.old, leave_out=huge)
        else:
            raw = gitio.diff_patch(root, scope.old, scope.new)
        patches = parse_patch(raw.decode("utf-8", "surrogateescape"))
        for path in _changed(root, scope, huge):
            notes[path] = undiffable[path]
            patches.append(FilePatch("modified", path, path, "100644", "100644"))
    if scope.untracked:
        listed = sorted(gitio.untracked_files(root))
        for k, path in enumerate(listed):
            if k >= UNTRACKED_LIMIT:
                note: str | None = (f"not read: past the first {UNTRACKED_LIMIT} untracked files (of {len(listed)}); "
                                    "review fewer at a time")
                text = None
            else:
                text, note = read_worktree(root, path)
            if note:
                notes[path] = note
            patches.append(added_file(path, text, note))
    return sorted(patches, key=lambda p: p.path), notes


def _changed(root: Path, scope: Scope, huge: frozenset[str]) -> list[str]:
    """The tracked files of `huge` that the scope changes (a raw diff of those alone, which
    compares stat data and blob ids: it reads no file git can tell changed by its size)."""
    if not huge:
        return []
    changes = _index_changes(root, huge) if scope.old == INDEX else \
        gitio.diff_trees(root, scope.old, None, renames=False, paths=huge)
    return sorted({c.new_path or c.old_path or "" for c in changes if c.status != "D"} - {""})


def _index_changes(root: Path, huge: frozenset[str]) -> list[gitio.Change]:
    """The files of `huge` that differ between the index and the working tree."""
    status = gitio.worktree_status(root, untracked=False)
    return [gitio.Change("M", p, p, None, None) for p in sorted(huge & status.changed)]
