"""What a review covers: the scope flags resolved to two sides of a diff, and the diff read.

Sides: a commit id, INDEX (git's staging area) or WORKTREE. Local scopes compare HEAD, the
index and the working tree; `A..B` compares two commits, `A...B` B with its merge-base with
A, `--base BRANCH` the working tree with its merge-base with BRANCH.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

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


def read_patches(root: Path, scope: Scope) -> tuple[list[FilePatch], dict[str, str]]:
    """The scope's changed files as patches (untracked ones made here), and a note per path
    whose content could not be read (symlink, unreadable, huge)."""
    from codevouch.worktree.changes import read_worktree

    patches: list[FilePatch] = []
    if scope.tracked:
        if scope.old == INDEX:
            raw = gitio.diff_patch(root)
        elif scope.new == INDEX:
            raw = gitio.diff_patch(root, scope.old, cached=True)
        elif scope.new == WORKTREE:
            raw = gitio.diff_patch(root, scope.old)
        else:
            raw = gitio.diff_patch(root, scope.old, scope.new)
        patches = parse_patch(raw.decode("utf-8", "surrogateescape"))
    notes: dict[str, str] = {}
    if scope.untracked:
        for path in gitio.untracked_files(root):
            text, note = read_worktree(root, path)
            if note:
                notes[path] = note
            patches.append(added_file(path, text, note))
    return sorted(patches, key=lambda p: p.path), notes
