"""The working tree as git sees it: what `git status` reports, the files `ls-files` lists, and
this process's private, refreshed copy of the index, which keeps a repeated status from hashing
every racily clean file again (see the comment above _Copy).
"""
from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from codevouch import caches
from codevouch.errors import GitError
from codevouch.kept import Kept, Seen
from codevouch.worktree.git._process import zsplit
from codevouch.worktree.git.runner import Answered, Later, Pending, run
from codevouch.worktree.git.unchanged import in_scope, tree_state


@dataclass(frozen=True)
class WorktreeStatus:
    """Paths that differ from HEAD in the index or the working tree, and untracked files."""
    changed: frozenset[str]     # modified, added, deleted, renamed (both sides), type-changed
    untracked: frozenset[str]

    def is_clean(self, path: str) -> bool:
        return path not in self.changed and path not in self.untracked


STATUS_ARGS = ("status", "--porcelain=v1", "-z", "--no-renames", "--ignore-submodules=all")


def worktree_status(repo: Path, untracked: bool = True, toplevel: bool = False) -> WorktreeStatus:
    """What `git status` reports. untracked=False leaves the untracked files out (a third of
    the cost on a large tree); a tracked file removed from the index still counts as changed.
    toplevel: `repo` is the top of its work tree (repo_root's answer), so the status may use
    this process's refreshed copy of the index (see _private_index)."""
    return parse_status(start_worktree_status(repo, untracked, toplevel).result())


def start_worktree_status(repo: Path, untracked: bool = True, toplevel: bool = False) -> Later:
    """worktree_status started in the background: `parse_status(pending.result())`."""
    args = (*STATUS_ARGS, f"--untracked-files={'all' if untracked else 'no'}")
    # Looked at before git starts: a write while it runs shows at the next look (unchanged.py).
    seen = tree_state(repo) if toplevel else None
    key = (os.path.abspath(repo), args)
    if (kept := _ANSWERS.get(key, seen)) is not None:
        return Answered(kept)
    if toplevel:
        # Part of the call's look (unchanged.one_look): where no look can stand for it (a tree over
        # unchanged.MAX_ENTRIES, a racy write), a search across repositories asked git twice a call
        # for each such repository, for its bound and for its overlay.
        return in_scope(f"status {' '.join(args)}", key[0], lambda: _Shared(_started(repo, args, key, seen, True)))
    return _started(repo, args, key, seen, False)


def _started(repo: Path, args: tuple[str, ...], key: tuple[str, tuple[str, ...]], seen: Seen | None,
             toplevel: bool) -> Pending:
    private = _private_index(Path(repo)) if toplevel else None
    # Our own copy of the index, refreshed when it was taken (see _private_index): the status
    # trusts the stat data git verified then instead of hashing every racily clean file again.
    env = {"GIT_INDEX_FILE": private} if private is not None else None
    if seen is None or seen.racy:
        return Pending(repo, *args, env=env)
    return _Kept(lambda out: _keep(key, seen, out), repo, *args, env=env)


# A toplevel's last status, kept while its work tree and git directory look as they did before it
# ran (unchanged.tree_state): a warm call over many repositories asks git only about those touched.
_ANSWERS: Kept[tuple[str, tuple[str, ...]], bytes] = Kept("codevouch.worktree.gitio.statuses")
_ANSWER_MAX_BYTES = 64 << 10


def _keep(key: tuple[str, tuple[str, ...]], seen: Seen, out: bytes) -> None:
    if len(out) <= _ANSWER_MAX_BYTES:      # a tree with that much changed is asked each time
        _ANSWERS.put(key, seen, out)


class _Shared:
    """One started status given to each asker of a call (start_worktree_status, a Later): read
    once, by whichever thread asks first, the others wait for it."""

    def __init__(self, started: Pending) -> None:      # no process of its own: `started`'s
        self._started = started
        self._lock = threading.Lock()

    def done(self) -> bool:
        return self._started.done()

    def result(self) -> bytes:
        with self._lock:
            return self._started.result()


class _Kept(Pending):
    """A status started now whose answer, once read, is kept (`keep`)."""

    def __init__(self, keep: Callable[[bytes], None], repo: Path | str, *args: str,
                 env: dict[str, str] | None = None) -> None:
        super().__init__(repo, *args, env=env)
        self._keep: Callable[[bytes], None] | None = keep

    def result(self) -> bytes:
        out = super().result()
        if self._keep is not None:
            self._keep(out)
            self._keep = None
        return out


# --- a private, refreshed copy of the index ------------------------------------------------------
#
# `git status` compares each tracked file's stat data with what the index recorded, and hashes a
# file whose stat data differ, or that is "racily clean": modified in the same second as the
# index was written (git's racy-git rule: then equal stat data prove nothing). A fresh clone's
# files are all racily clean, and codevouch never writes the repository's index, so every status
# hashed the whole tree again (55 ms per call on SQLAlchemy's 26 MB). Instead the status of a
# toplevel we know reads a copy of the index that this process owns, in a private temporary
# directory, refreshed by `git update-index --refresh` when it is taken (written back with the
# stat data git verified, as a `git status` in a terminal refreshes .git/index). Git's own racy-git rules decide what to
# trust, against the copy's own time stamp: the copy keeps the original's mtime, so nothing is
# trusted that the original would not have had rehashed, and an entry git writes back in the
# second its file changed is smudged by git and hashed again on the next status. The copy is
# taken again whenever the real index file changes (stat: inode, size, mtime, ctime): a `git add`,
# a commit, a checkout. Never used with a split index (its shared part lives in the git
# directory, which git would then write).

@dataclass
class _Copy:
    key: tuple[int, int, int, int]     # the real index's stat when copied
    path: str                          # the copy


_PRIVATE: dict[str, _Copy] = {}        # the real index file -> our copy
_PRIVATE_LOCK = threading.Lock()
_private_dir: list[str] = []


def _index_file(root: Path) -> str | None:
    """The index file of the work tree whose top is `root` (a `.git` directory, or a `.git` file
    naming one: a linked worktree or a submodule); None when it cannot be told for sure. Kept
    while `.git` and the git directory keep their stat data (a split index adds a file there)."""
    dot_git = os.path.join(root, ".git")
    key = (_stat4(dot_git), str(root))
    kept = _INDEX_FILES.get(str(root))
    if kept is not None and kept[0] == key and kept[2] == _stat4(kept[3]):
        return kept[1]
    found, git_dir = _find_index_file(root)
    if len(_INDEX_FILES) > 256:
        _INDEX_FILES.clear()
    _INDEX_FILES[str(root)] = (key, found, _stat4(git_dir) if git_dir else None, git_dir or dot_git)
    return found


_INDEX_FILES: dict[str, tuple[object, str | None, object, str]] = {}
caches.register("codevouch.worktree.gitio.index_files", _INDEX_FILES.clear, _INDEX_FILES.__len__)


def _find_index_file(root: Path) -> tuple[str | None, str | None]:
    dot_git = os.path.join(root, ".git")
    try:
        if os.path.isdir(dot_git):
            git_dir = dot_git
        else:
            with open(dot_git, "rb") as handle:
                first = handle.read(4096).split(b"\n", 1)[0].decode("utf-8", "surrogateescape").strip()
            if not first.startswith("gitdir: "):
                return None, None
            git_dir = os.path.join(root, first[len("gitdir: "):])
    except OSError:
        return None, None
    if any(name.startswith("sharedindex.") for name in _listdir(git_dir)):
        return None, git_dir    # a split index: its shared part is found (and written) in the git dir
    index = os.path.join(git_dir, "index")
    return (index if os.path.isfile(index) else None), git_dir


def _listdir(path: str) -> list[str]:
    try:
        return os.listdir(path)
    except OSError:
        return []


def _stat4(path: str) -> tuple[int, int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _private_index(root: Path) -> str | None:
    """Our refreshed copy of the index of the work tree at `root` (its top), made or made again
    when the real one changed; None (use the real one) when it cannot be made."""
    real = _index_file(root)
    key = _stat4(real) if real else None
    if real is None or key is None:
        return None
    with _PRIVATE_LOCK:
        found = _PRIVATE.get(real)
        if found is not None and found.key == key and os.path.isfile(found.path):
            return found.path
        try:
            if not _private_dir:
                _private_dir.append(tempfile.mkdtemp(prefix="codevouch-index-"))    # mode 0700
                atexit.register(_drop_private)
            path = found.path if found is not None else os.path.join(_private_dir[0], f"{len(_PRIVATE)}.index")
            tmp = path + ".new"
            shutil.copy2(real, tmp)       # the mtime too: git judges raciness by it
            os.replace(tmp, path)
        except OSError:
            return None
        if _stat4(real) != key:           # written while we copied: use the real one this time
            return None
        try:
            # Refreshed once, here: git hashes what it cannot trust and writes the copy back with
            # the stat data it verified (smudging, by its racy-git rule, any entry whose file
            # changed in the second it writes: that one is hashed again by every status).
            run(root, "-c", "core.splitIndex=false", "update-index", "-q", "--refresh", "--ignore-submodules",
                ok_codes=(0, 1), env={"GIT_INDEX_FILE": path})
        except GitError:
            return None
        _PRIVATE[real] = _Copy(key, path)
        return path


def _drop_private() -> None:
    with _PRIVATE_LOCK:
        _PRIVATE.clear()
        if _private_dir:
            shutil.rmtree(_private_dir.pop(), ignore_errors=True)


caches.register("codevouch.worktree.gitio.private_index", _drop_private, _PRIVATE.__len__)


def parse_status(out: bytes) -> WorktreeStatus:
    changed: set[str] = set()
    untracked: set[str] = set()
    for rec in zsplit(out):
        code, path = rec[:2], rec[3:]
        (untracked if code == "??" else changed).add(path)
    return WorktreeStatus(frozenset(changed), frozenset(untracked))


def untracked_files(repo: Path) -> list[str]:
    """Files git does not track and does not ignore (the `??` of `git status`)."""
    return zsplit(run(repo, "ls-files", "--others", "--exclude-standard", "-z", "--full-name", "--",
                      ":/"))


def worktree_files(repo: Path) -> list[str]:
    """Tracked and untracked (not ignored) files of the working tree, repo-relative."""
    return zsplit(run(repo, "ls-files", "-z", "--cached", "--others", "--exclude-standard"))
