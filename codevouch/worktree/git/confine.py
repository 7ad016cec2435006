"""The top of a work tree, refused when git's configuration moves it away from the directory
that holds `.git`.

`core.worktree` (the repository's own config says it) moves the work tree anywhere, and every
read would then search, hash and show that directory's files, outside the repository the user
named. `confined` checks git's answer for a path; `check` runs that answer's git process once
for a repository whose configuration sets `core.worktree` at all (a submodule's does, pointing
back at itself), so every git command `runner` starts is refused before it reads the moved tree.
"""
from __future__ import annotations

import os
from pathlib import Path

from codevouch.errors import GitError, NotARepository
from codevouch.worktree.git._process import _run_raw
from codevouch.worktree.git.filters import _FILTERS, sets_worktree

# repository path -> the configuration (filters._FILTERS's entry) under which its top was checked
_CHECKED: dict[str, object] = {}


def check(repo: Path | str) -> None:
    """NotARepository when git's configuration moves `repo`'s work tree away from its `.git`;
    nothing (and no git process) when the configuration does not set core.worktree."""
    if not sets_worktree(repo):
        return
    key = os.path.abspath(str(repo))
    current = _FILTERS.get(key)
    if current is not None and _CHECKED.get(key) is current:
        return
    try:
        out = _run_raw(repo, ("rev-parse", "--show-toplevel"), extra=())
    except GitError:
        return                # no work tree at all (bare): the command itself says so
    confined(repo, Path(out.decode("utf-8", "surrogateescape").strip()).resolve())
    if current is not None:
        _CHECKED[key] = current


def confined(named: Path | str, top: Path) -> Path:
    """`top` (git's top of the work tree for the path the user `named`), when it is the directory
    that holds the `.git` git found from `named`; else NotARepository.

    `core.worktree` (in .git/config, or a file it includes: the repository's own say) moves the
    work tree anywhere, and every read would then search and show that directory's files, outside
    the repository the user named (a submodule's or a linked worktree's `core.worktree` points
    back at the directory holding its `.git` file, and passes)."""
    holder = dot_git_holder(Path(named))
    if holder is not None and holder == top:
        return top
    where = holder or Path(named)
    raise NotARepository(
        f"git's configuration (core.worktree, in the repository's config or a file it includes) puts the "
        f"work tree of {where} at {top}, not the directory that holds its .git; codevouch refuses a work tree "
        "moved elsewhere, since it would search and show files outside the repository you named. Remove "
        f"the setting (`git -C {where} config --unset core.worktree`) and retry.")


def dot_git_holder(named: Path) -> Path | None:
    """The nearest directory at or above `named` (resolved) holding a `.git` git would take: a
    directory with a HEAD, or a file (a linked worktree's or submodule's `gitdir:` pointer)."""
    start = named.resolve()
    for folder in (start, *start.parents):
        dot_git = os.path.join(folder, ".git")
        if os.path.isfile(dot_git) or os.path.isfile(os.path.join(dot_git, "HEAD")):
            return folder
    return None
