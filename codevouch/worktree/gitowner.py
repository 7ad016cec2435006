"""Whether a repository keeps its git data inside itself: no `.git` file, `.git` link,
`commondir` or `objects/info/alternates` leading into another repository (pure file reads, no
git: checked before git is started, by `gitreads.guard`).

A `.git` *file* (`gitdir: /other/.git`, or `../../other/.git`), a `.git` link, a `commondir` or
an alternates entry naming another repository made `index build` index that repository's objects,
and `search --include-history`, `context` and MCP's search return its content: a downloaded
archive is all it takes to plant one. What is recognised as the repository's own without being
told:
- a git directory inside the work tree (a plain clone);
- a linked worktree (`git worktree add`): its git directory is `COMMON/worktrees/NAME`, and the
  `gitdir` file there leads back to this work tree's `.git` (only the repository that owns
  COMMON writes that file);
- a submodule: its git directory is under `.git/modules/` of a repository that contains it.
Anything else is refused with the pointer named, unless the user's own environment sets
CODEVOUCH_ALLOW_OUTSIDE_GIT_DIR (never the repository: SECURITY.md).
"""
from __future__ import annotations

import os
from pathlib import Path

from codevouch.worktree.safe_read import read_file

_POINTER_CAP = 64 << 10          # a `.git` file, `commondir` or alternates file: a few paths


def outside_git_dir(top: Path) -> str | None:
    """Why the repository whose work tree is `top` reads git data from another directory, in
    words that name the pointer and the way out; None when it is its own (or has no `.git`)."""
    root = top.resolve()
    dot_git = top / ".git"
    if os.path.islink(dot_git):
        git_dir, pointer = dot_git.resolve(), f"{dot_git} is a link to {dot_git.resolve()}"
    elif dot_git.is_dir():
        git_dir, pointer = dot_git.resolve(), ""
    else:
        named = _read_path(dot_git, "gitdir:")
        if named is None:
            return None            # no pointer git would follow: git says what is wrong
        git_dir, pointer = named.resolve(), f"{dot_git} says `gitdir: {named}`"
    common_named = _read_path(git_dir / "commondir", "")
    common = common_named.resolve() if common_named is not None else git_dir
    if not _owned(root, git_dir, common):
        where = pointer or f"{git_dir / 'commondir'} names {common}"
        return _refusal(top, f"its git directory is outside it ({where})")
    for alternate in _alternates(common):
        if not (alternate.is_relative_to(root) or alternate.is_relative_to(common)):
            return _refusal(top, f"{common / 'objects' / 'info' / 'alternates'} borrows objects from {alternate}")
    return None


def _owned(root: Path, git_dir: Path, common: Path) -> bool:
    if git_dir.is_relative_to(root) and common.is_relative_to(root):
        return True
    if git_dir.parent == common / "worktrees":        # a linked worktree its repository lists
        back = _read_path(git_dir / "gitdir", "")
        return back is not None and back.resolve() == (root / ".git").resolve()
    for above in root.parents:                          # a submodule of a repository above it
        modules = above / ".git" / "modules"
        if (above / ".git").is_dir() and not os.path.islink(above / ".git") and \
                git_dir.is_relative_to(modules.resolve()) and common.is_relative_to(modules.resolve()):
            return True
    return False


def _alternates(common: Path) -> list[Path]:
    """The object directories `objects/info/alternates` adds (relative ones to `objects/`)."""
    objects = common / "objects"
    data = read_file(objects / "info" / "alternates", _POINTER_CAP, follow=True)
    if not isinstance(data, bytes):
        return []
    lines = data.decode("utf-8", "surrogateescape").splitlines()
    return [(objects / line.strip()).resolve() for line in lines if line.strip() and not line.startswith("#")]


def _read_path(file: Path, prefix: str) -> Path | None:
    """The path a pointer file names (relative to its directory); None when there is none."""
    data = read_file(file, _POINTER_CAP, follow=True)
    if not isinstance(data, bytes):
        return None
    text = data.decode("utf-8", "surrogateescape").strip()
    if prefix:
        if not text.startswith(prefix):
            return None
        text = text[len(prefix):].strip()
    return file.parent / text if text else None


def _refusal(top: Path, why: str) -> str:
    return (f"{top} reads git data from another directory: {why}. codevouch reads only the repository "
            "you name, so nothing was run. If that directory is yours (a clone made with --shared or "
            "--reference, a git directory kept apart), set CODEVOUCH_ALLOW_OUTSIDE_GIT_DIR=1 in your "
            "environment; else remove the pointer.")
