"""Differences between commits, and between a commit and the working tree: `diff --raw` read
into Changes (with git's rename detection), and the unified patch a review reads.

Every diff passes NO_PROGRAMS: no textconv filter or external diff tool that the repository
configured runs.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from codevouch.errors import CommitGone, GitError
from codevouch.worktree.git._process import NO_PROGRAMS
from codevouch.worktree.git.objects import batch_check
from codevouch.worktree.git.runner import Pending, run


@dataclass(frozen=True)
class Change:
    status: str          # A, M, D, T, R (rename), C (copy)
    old_path: str | None
    new_path: str | None
    old_blob: str | None
    new_blob: str | None


_ZERO = "0" * 40


def diff_trees(repo: Path, old: str, new: str | None, renames: bool = True, paths: Iterable[str] | None = None,
               cached: bool = False) -> list[Change]:
    """Changed files between two commits (`new=None`: the working tree's tracked files, or the
    index when cached), with git's rename detection; only `paths` (exactly as named) when given."""
    args = ["diff", "--raw", "-z", "--no-abbrev", *NO_PROGRAMS, *([] if new else ["--ignore-submodules=dirty"])]
    args += ["-M"] if renames else ["--no-renames"]
    args += ["--cached"] if cached else []
    try:
        out = run(repo, *args, old, *([new] if new else []), "--", *_literal(paths or ()))
    except GitError as exc:
        raise _gone_or(repo, (old, new), exc) from exc
    return _parse_raw(out)


def _gone_or(repo: Path, commits: Iterable[str | None], exc: GitError) -> GitError:
    """CommitGone when one of `commits` is not in the repository (what a raw `fatal: bad object`
    from a diff means after a force-push and gc), else `exc` as it was. Asked only on failure."""
    if exc.returncode != 128:
        return exc
    named = [c for c in commits if c]
    found = batch_check(repo, named) if named else {}
    gone = [c for c in named if c not in found]
    if not gone:
        return exc
    return CommitGone(f"commit {gone[0][:12]} is no longer in the repository {repo} (history rewritten, "
                      "by a force-push or an amend, and the old objects garbage-collected)",
                      commit=gone[0], cmd=exc.cmd, returncode=exc.returncode, stderr=exc.stderr)


class PendingDiff:
    """diff_trees started in the background (`result()` gives what it returns)."""

    def __init__(self, repo: Path, old: str, new: str | None, renames: bool = True) -> None:
        args = ["diff", "--raw", "-z", "--no-abbrev", "--no-ext-diff", "--no-textconv"]
        args += ["-M"] if renames else ["--no-renames"]
        self._pending = Pending(repo, *args, old, *([new] if new else []), "--")
        self._repo, self._commits = repo, (old, new)

    def result(self) -> list[Change]:
        try:
            return _parse_raw(self._pending.result())
        except GitError as exc:
            raise _gone_or(self._repo, self._commits, exc) from exc


def _parse_raw(out: bytes) -> list[Change]:
    fields = out.decode("utf-8", "surrogateescape").split("\0")
    changes: list[Change] = []
    i = 0
    while i < len(fields):
        head = fields[i]
        if not head.startswith(":"):
            i += 1
            continue
        _, _, old_sha, new_sha, status = head[1:].split(" ", 4)
        kind = status[0]
        old_path: str | None
        new_path: str | None
        old_blob = None if old_sha == _ZERO else old_sha
        new_blob = None if new_sha == _ZERO else new_sha
        if kind in "RC":
            old_path, new_path = fields[i + 1], fields[i + 2]
            i += 3
        else:
            path = fields[i + 1]
            old_path = None if kind == "A" else path
            new_path = None if kind == "D" else path
            i += 2
        changes.append(Change(kind, old_path, new_path, old_blob, new_blob))
    return changes


def renames_between(repo: Path, old: str, new: str | None) -> dict[str, str]:
    """old path -> new path for every file git sees as renamed from `old` to `new`
    (`new=None`: the working tree, so an uncommitted `git mv` counts)."""
    return {c.old_path: c.new_path for c in diff_trees(repo, old, new)
            if c.status == "R" and c.old_path and c.new_path}


def _literal(paths: Iterable[str], magic: str = "top,literal") -> list[str]:
    return [f":({magic}){p}" for p in sorted(set(paths)) if p and "\0" not in p]


def diff_patch(repo: Path, *revs: str, cached: bool = False, leave_out: Iterable[str] = ()) -> bytes:
    """The unified diff between `revs` (none: index vs working tree; one: that commit vs the
    working tree, or vs the index when cached), with git's rename detection, full blob ids,
    no external diff tools or textconv filters, no colour. `leave_out`: paths (exactly as
    named) not diffed: git reads all of a file to diff it (15 s for a sparse 2 GB file)."""
    args = ["diff", "--patch", "--no-color", *NO_PROGRAMS, "-M", "--full-index",
            "--src-prefix=a/", "--dst-prefix=b/", "--submodule=short", "--no-relative"]
    if not cached and len(revs) < 2:
        # The working tree: no `git status` inside a submodule (it would run with the
        # submodule's own configuration).
        args.append("--ignore-submodules=dirty")
    return run(repo, *args, *(["--cached"] if cached else []), *revs, "--",
               *_literal(leave_out, "top,exclude,literal"))
