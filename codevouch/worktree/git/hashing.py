"""Blob ids of working-tree files as `git add` would store them (one `hash-object --stdin-paths`
for all), and the ids kept by stat data, so that a long-lived caller does not hash an unchanged
file again.

git opens every path it is given, following symlinks, and reads it to its end: a symlink to
/etc/passwd was read, one to a FIFO blocked for ever, one to /dev/zero grew without bound, and
a committed `zero.py -> /dev/zero` hung every search after a pull. So git is given only what
one lstat here shows to be a regular file within the size cap. A symlink is hashed here as git
stores it (a blob of the link's target string, mode 120000), never followed; anything else (a
FIFO, a socket, a device, a folder, a nested repository) is not hashed, and its reason is kept
(`PendingHashes.skipped`) for the caller to report.

Why git still hashes regular files rather than this process reading them: git's id is of the
file after its clean conversion (eol and `text=auto` against the index, `ident`,
`working-tree-encoding`, and the filters a user opted in to run), which a sha1 of the bytes
would get wrong without a word: an unchanged CRLF file would look edited, and its chunks would
carry ids the next build does not give. What is left is a path swapped between the lstat and
git's open (a FIFO put there in that moment), which only a program already running as the user
can do; a path whose stat data changed while git hashed it is left out (not provably unchanged).
"""
from __future__ import annotations

import hashlib
import os
import stat as stat_module
import time
from collections.abc import Iterable
from pathlib import Path

from codevouch import caches
from codevouch.errors import GitError
from codevouch.kept import RACY_NS  # one racy rule for every answer kept by stat data (tests lower it here)
from codevouch.worktree.git._process import run_filters
from codevouch.worktree.git.filters import _FILTERS, filter_names, user_git_file
from codevouch.worktree.git.runner import Pending, run
from codevouch.worktree.git.status import _index_file, _stat4
from codevouch.worktree.rules import MAX_FILE_BYTES


def hash_worktree_files(repo: Path, paths: Iterable[str], limit: int = MAX_FILE_BYTES) -> dict[str, str]:
    """Blob id of each working-tree file as git computes it (clean filters and eol rules applied).

    Paths must be repo-relative and already checked to lie inside the repository. A path git
    cannot hash (removed since it was listed, say), or that is not hashed (not a regular file or
    a symlink, or over `limit` bytes: see skip_reason), is left out of the result rather than
    failing the others: callers treat a missing id as "not provably unchanged".
    """
    return start_hash_worktree_files(repo, paths, limit).result()


def symlink_blob(target: bytes) -> str:
    """The blob id git gives a symlink: of its target string, as `git add` stores it (mode
    120000); the link is never followed."""
    return hashlib.sha1(b"blob %d\0" % len(target) + target).hexdigest()


NESTED_REPOSITORY = "a nested repository, not searched"
SUBMODULE = "a submodule, not searched"
FOLDER = "a folder, not a file"


def skip_reason(st: os.stat_result, full: str, limit: int) -> str | None:
    """Why the working-tree entry with lstat data `st` (at `full`) is not hashed as a file, or
    None: a regular file within `limit` bytes, or a symlink (hashed as its target string)."""
    mode = st.st_mode
    if stat_module.S_ISLNK(mode):
        return None
    if stat_module.S_ISREG(mode):
        return f"huge (>{limit} bytes)" if st.st_size > limit else None
    if stat_module.S_ISDIR(mode):
        # A folder git names as one path is a repository of its own (untracked: a nested one;
        # tracked: a submodule, which the caller, knowing it is tracked, calls so).
        return NESTED_REPOSITORY if os.path.lexists(f"{full}/.git") else FOLDER
    if stat_module.S_ISFIFO(mode):
        return "a FIFO (named pipe), not a regular file: not read"
    if stat_module.S_ISSOCK(mode):
        return "a socket, not a regular file: not read"
    if stat_module.S_ISCHR(mode) or stat_module.S_ISBLK(mode):
        return "a device, not a regular file: not read"
    return "not a regular file: not read"


class PendingHashes:
    """hash_worktree_files started in the background (`result()` gives what it returns).

    A file hashed before is not hashed again while its stat data, and everything else git's
    answer depends on (see hash_context), are unchanged: a long-lived caller (the MCP server, an
    agent's Index) asks for the same changed files on every call."""

    def __init__(self, repo: Path, paths: Iterable[str], limit: int = MAX_FILE_BYTES) -> None:
        self._repo = repo
        self._wanted = list(dict.fromkeys(paths))
        self._known: dict[str, str] = {}
        self._keys: dict[str, tuple[object, ...]] = {}     # path -> its key, to remember once hashed
        # path -> why it is not hashed (not a regular file or a symlink, or over `limit` bytes)
        self.skipped: dict[str, str] = {}
        todo = self._wanted
        context = hash_context(repo) if self._wanted else None
        if context is not None:
            todo, self._known, self._keys = _remembered_hashes(str(repo), self._wanted, context)
        self._looked: dict[str, tuple[int, ...]] = {}      # path -> stat_key when given to git
        todo = self._only_files(todo, limit)
        self._todo = todo
        # Paths with a newline cannot go through --stdin-paths; they are hashed one by one.
        self._batch = [p for p in todo if "\n" not in p]
        self._pending = Pending(repo, "hash-object", "--stdin-paths",
                                stdin=("\n".join(self._batch) + "\n").encode("utf-8", "surrogateescape")) \
            if self._batch else None

    def result(self) -> dict[str, str]:
        single = [p for p in self._todo if "\n" in p]
        result: dict[str, str] = dict(self._known)
        if self._pending is not None:
            try:
                result.update(zip(self._batch, self._pending.result().decode().split()))
            except GitError:
                single = self._todo  # one bad path fails the whole batch: fall back to one process each
        for path in single:
            try:
                result[path] = run(self._repo, "hash-object", "--", path).decode().strip()
            except GitError:
                continue
        root = str(self._repo)
        for path, looked in self._looked.items():
            if path in result and not _same_file(f"{root}/{path}", looked):
                del result[path]           # changed (or swapped) while git hashed it
        if len(_HASHED) + len(self._keys) > _HASHED_MAX:
            _HASHED.clear()
        for path, key in self._keys.items():
            if path in result:
                _HASHED[(root, path)] = (key, result[path])
        return {p: result[p] for p in self._wanted if p in result}

    def _only_files(self, paths: list[str], limit: int) -> list[str]:
        """The paths git may hash (regular files within `limit`): a symlink is hashed here
        (into _known), anything else is kept in `skipped`, a path gone is left out."""
        root = str(self._repo)
        files = []
        for path in paths:
            full = f"{root}/{path}"
            try:
                st = os.lstat(full)
                if stat_module.S_ISLNK(st.st_mode):
                    self._known[path] = symlink_blob(os.readlink(os.fsencode(full)))
                    continue
            except (OSError, ValueError):
                continue              # gone: not provably unchanged, as when git could not hash it
            reason = skip_reason(st, full, limit)
            if reason is not None:
                self.skipped[path] = reason
                continue
            self._looked[path] = stat_key(st)
            files.append(path)
        return files


def _same_file(full: str, key: tuple[int, ...]) -> bool:
    try:
        return stat_key(os.lstat(full)) == key
    except OSError:
        return False


# --- blob ids of working-tree files, kept by stat ------------------------------------------------
#
# (repo, path) -> (key, blob id). The key is the file's stat data (device, inode, mode, size,
# mtime, ctime) with what else decides the id git computes: the configuration files (eol and
# filter settings) and the environment that names them, the index (`text=auto` looks at the
# indexed blob), and every attributes file that applies to the path. A file is remembered only
# when its mtime and ctime are RACY_NS older than the moment it was hashed: a later write then
# gives it a newer mtime and ctime, even on a file system whose clock ticks coarsely (the
# racy-git problem, solved the way git solves it: distrust what changed too close to the look).
# ctime cannot be set back by a user, so `touch -d` to the old time does not fool it either.
# Nothing is kept when configured filters may run (CODEVOUCH_RUN_GIT_FILTERS=1: a program then
# decides the id), when the configuration has include directives (filter_names reads it each
# time), for symlinks, or for a repository whose index file cannot be found.
_HASHED: dict[tuple[str, str], tuple[tuple[object, ...], str]] = {}
_HASHED_MAX = 50_000

caches.register("codevouch.worktree.gitio.hashed", _HASHED.clear, _HASHED.__len__)


def hash_context(repo: Path | str) -> tuple[object, ...] | None:
    """What beside a file's own bytes decides the blob id hash-object gives it, repository-wide;
    None when that cannot be told from stat data (then every file is hashed)."""
    if run_filters():
        return None
    root = os.path.abspath(str(repo))
    filter_names(repo)
    config = _FILTERS.get(root)
    index = _index_file(Path(root))
    if config is None or index is None:
        return None
    git_dir = os.path.dirname(index)
    common = git_dir
    try:
        with open(os.path.join(git_dir, "commondir"), "rb") as handle:
            common = os.path.join(git_dir, handle.read(4096).decode("utf-8", "surrogateescape").strip())
    except OSError:
        pass
    attributes = [os.path.join(common, "info", "attributes"), os.path.join(git_dir, "info", "attributes"),
                  user_git_file("attributes"), *config.attributes]
    return (config.files, config.env, _stat4(index), tuple(_stat4(a) for a in attributes))


def _remembered_hashes(root: str, paths: list[str], context: tuple[object, ...]
                       ) -> tuple[list[str], dict[str, str], dict[str, tuple[object, ...]]]:
    """(paths to hash, ids still good, keys of the paths to remember once hashed)."""
    now = time.time_ns()
    folders: dict[str, tuple[object, ...]] = {}
    todo: list[str] = []
    known: dict[str, str] = {}
    keys: dict[str, tuple[object, ...]] = {}
    for path in paths:
        try:
            st = os.lstat(f"{root}/{path}")
        except (OSError, ValueError):
            todo.append(path)
            continue
        if not stat_module.S_ISREG(st.st_mode):
            todo.append(path)
            continue
        key = (*stat_key(st), context, folder_attributes(root, path, folders))
        hit = _HASHED.get((root, path))
        if hit is not None and hit[0] == key:
            known[path] = hit[1]
            continue
        todo.append(path)
        if settled(st, now):
            keys[path] = key
    return todo, known, keys


def stat_key(st: os.stat_result) -> tuple[int, ...]:
    """What of a file's stat data says it was not written since: device, inode, mode, size,
    mtime and ctime (ctime cannot be set back by a user)."""
    return (st.st_dev, st.st_ino, st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def settled(st: os.stat_result, now_ns: int) -> bool:
    """The file was last written RACY_NS before `now_ns`: any later write shows in stat_key."""
    return max(st.st_mtime_ns, st.st_ctime_ns) < now_ns - RACY_NS


def folder_attributes(root: str, path: str, seen: dict[str, tuple[object, ...]]) -> tuple[object, ...]:
    """The stat data of every .gitattributes from the top of the work tree down to `path`'s folder
    (`seen`: each folder's, for this call)."""
    return _attributes_down_to(root, path.rpartition("/")[0], seen)


def _attributes_down_to(root: str, folder: str, seen: dict[str, tuple[object, ...]]) -> tuple[object, ...]:
    found = seen.get(folder)
    if found is None:
        own = _stat4(f"{root}/{folder}/.gitattributes" if folder else f"{root}/.gitattributes")
        found = (own,) if not folder else (*_attributes_down_to(root, folder.rpartition("/")[0], seen), own)
        seen[folder] = found
    return found


def start_hash_worktree_files(repo: Path, paths: Iterable[str], limit: int = MAX_FILE_BYTES) -> PendingHashes:
    return PendingHashes(repo, paths, limit)
