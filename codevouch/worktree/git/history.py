"""HEAD's history asked about one path or word: the newest commit that touched a path, which
paths the history ever had, the newest commit that changed how often a word occurs (git's
pickaxe), a commit's first parent.

Every `log` passes NO_PROGRAMS, and paths follow `--` as literal pathspecs, never patterns.
"""
from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from codevouch.worktree.git._process import NO_PROGRAMS, zsplit
from codevouch.worktree.git.runner import run


def last_commit_touching(repo: Path, path: str) -> str | None:
    """The newest commit on HEAD that changed `path` (None when it never existed there)."""
    out = run(repo, "--literal-pathspecs", "log", "-1", *NO_PROGRAMS, "--format=%H", "HEAD", "--", path,
              ok_codes=(0, 128))
    return out.decode().strip() or None


def paths_in_history(repo: Path, paths: Iterable[str]) -> set[str]:
    """Which of `paths` HEAD's history ever had (check-refs' test of a gone path, for many):
    one `git log -1` for a single path (it stops at the newest commit touching it), else one
    walk of the history listing the commits' changed paths among them. Empty without commits."""
    wanted = sorted(set(paths))
    if len(wanted) == 1:
        return set(wanted) if last_commit_touching(repo, wanted[0]) is not None else set()
    if not wanted:
        return set()
    out = run(repo, "--literal-pathspecs", "log", *NO_PROGRAMS, "--format=", "--name-only", "-z",
              "--no-renames", "HEAD", "--", *wanted, ok_codes=(0, 128))
    return {p.lstrip("\n") for p in zsplit(out)} & set(wanted)


def last_commit_mentioning(repo: Path, word: str) -> str | None:
    """The newest commit on HEAD that changed how often `word` occurs (git's pickaxe, -S)."""
    if not word or "\n" in word:
        return None
    out = run(repo, "log", "-1", *NO_PROGRAMS, "--format=%H", f"-S{word}", "HEAD", "--", ok_codes=(0, 128))
    return out.decode().strip() or None


def parent_commit(repo: Path, commit: str) -> str | None:
    out = run(repo, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{commit}^1^{{commit}}",
              ok_codes=(0, 1))
    return out.decode().strip() or None
