"""Where a snippet's path lies, decided before anything is read (rule 2 of the validator).

Only lstat/readlink-level calls happen here (os.path.realpath, os.stat): the content of a
path is read or hashed later, and only when this module says it lies inside the root.
"""
from __future__ import annotations

import errno
import itertools
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Located:
    given: str               # the path as the snippet gave it
    rel: str | None          # normalized repo-relative path (None when outside)
    real: str | None         # repo-relative path after following symlinks: what is read/hashed
    problem: str | None      # why the path is outside the repository, else None
    exists: bool = False     # a regular file in the working tree
    what: str | None = None  # what the path is when it exists but is not a regular file

    @property
    def inside(self) -> bool:
        return self.problem is None


def locate(root: Path, given: str) -> Located:
    """Normalize `given` and check that it, and every symlink along it, stays inside `root`."""
    return Locator(root).locate(given)


class Locator:
    """`locate` for many paths of one repository: the root and each directory are resolved
    once (1,000 snippets share a few hundred directories; realpath costs a syscall a level)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.root_real = os.path.realpath(root)
        self._dirs: dict[str, str] = {}
        self._seen: dict[str, Located] = {}

    def locate(self, given: str) -> Located:
        found = self._seen.get(given)
        if found is None:
            found = self._seen[given] = _locate(self.root, self.root_real, given, self._resolve)
        return found

    def _resolve(self, rel: str) -> tuple[str, os.stat_result | None]:
        # realpath(dir/name) == realpath(realpath(dir)/name): each directory is resolved once,
        # and then the last component costs one lstat, which is also its stat unless it is a
        # symlink (then it is resolved, and stat'ed by the caller).
        head, _, name = rel.rpartition("/")
        path = _join(self._dir(head), name)
        try:
            info = os.lstat(path)
        except (OSError, ValueError):
            return path, None           # missing or unreadable: the caller's stat says which
        if stat.S_ISLNK(info.st_mode):
            return os.path.realpath(path), None
        return path, info

    def _dir(self, rel: str) -> str:
        """realpath of a directory under the root, built from its parent's: one lstat per new
        directory (a full realpath would lstat every component again)."""
        if not rel:
            return self.root_real
        found = self._dirs.get(rel)
        if found is not None:
            return found
        parts = rel.split("/")
        prefixes = list(itertools.accumulate(parts, lambda a, b: f"{a}/{b}"))
        known = len(parts) - 1          # how many leading parts are resolved already
        while known and prefixes[known - 1] not in self._dirs:
            known -= 1
        base = self._dirs[prefixes[known - 1]] if known else self.root_real
        for n in range(known, len(parts)):
            path = _join(base, parts[n])
            base = self._dirs[prefixes[n]] = os.path.realpath(path) if os.path.islink(path) else path
        return base


def _join(base: str, name: str) -> str:
    """os.path.join for an absolute, normalized `base` and a name without "/" (a quarter of
    the cost, for every path of a call)."""
    return f"{base}{name}" if base.endswith("/") else f"{base}/{name}"


def _locate(root: Path, root_real: str, given: str,
            resolve: Callable[[str], tuple[str, os.stat_result | None]]) -> Located:
    # In order: what the path's text says (no file is touched), where its symlinks lead (one
    # resolve), then what is there (one stat, unless the resolve had it).
    rel, problem = _normalized(root, root_real, given)
    if problem is not None:
        return Located(given, None, None, problem)
    real_abs, info = resolve(rel)
    real, problem = _followed(root_real, real_abs)
    if problem is not None:
        return Located(given, None, None, problem)
    return _found(given, rel, real, real_abs, info)


def _normalized(root: Path, root_real: str, given: str) -> tuple[str, str | None]:
    """(the repo-relative path `given` names, why it is outside the repository by its text
    alone, else None)."""
    if "\0" in given:
        return "", "the path contains a NUL byte"
    path = given
    if path.startswith("/"):
        inner = _relative_to_root(root, root_real, path)
        if inner is None:
            return "", "the path is absolute and not under the repository root"
        path = inner
    parts = path.split("/")
    if "" in parts or "." in parts:
        parts = [p for p in parts if p not in ("", ".")]
        rel = "/".join(parts)
    else:
        rel = path           # already normal: most paths are (no join needed)
    if ".." in parts:
        return rel, "the path has '..' components"
    if not parts:
        return rel, "the path names the repository root, not a file in it"
    if parts[0] == ".git":
        return rel, "the path is inside .git, not in the working tree"
    return rel, None


def _relative_to_root(root: Path, root_real: str, path: str) -> str | None:
    """What follows the repository root in the absolute `path`, None when it is not under it.
    An absolute path is accepted only when it names a file under this repository (tools other
    than codevouch often emit absolute paths); anything else is outside."""
    for prefix in dict.fromkeys((root_real, str(root))):
        if path == prefix or path.startswith(prefix.rstrip("/") + "/"):
            return path[len(prefix):]
    return _under_linked_root(path, root_real)


def _followed(root_real: str, real_abs: str) -> tuple[str, str | None]:
    """(the repo-relative path that the resolved `real_abs` is, why symlinks took it outside the
    working tree, else None)."""
    prefix = root_real if root_real.endswith("/") else root_real + "/"
    if real_abs != root_real and not real_abs.startswith(prefix):
        return "", "a symlink along the path leads outside the repository"
    # realpath gives a normal absolute path: what follows the root's prefix is the relative path.
    real = "." if real_abs == root_real else real_abs[len(prefix):]
    if real == "." or real == ".git" or real.startswith(".git/"):
        return real, "a symlink along the path leads into .git or to the root"
    return real, None


def _found(given: str, rel: str, real: str, real_abs: str, info: os.stat_result | None) -> Located:
    """A path inside the working tree, with what is there (`info`: its stat, when known)."""
    try:
        mode = (info or os.stat(real_abs)).st_mode
    except FileNotFoundError:
        return Located(given, rel, real, None, False)
    except (OSError, ValueError) as exc:
        return Located(given, rel, real, None, False, _unreadable(exc))
    # Not a FIFO, device or directory: those are never read (a FIFO would block the reader).
    if stat.S_ISREG(mode):
        return Located(given, rel, real, None, True)
    return Located(given, rel, real, None, False, _file_type(mode))


def _under_linked_root(path: str, root_real: str) -> str | None:
    """What follows the directory of `path` that is the repository root by another name (a
    symlink to it: `--repo /link` and paths under /link), else None. Only that directory is
    resolved; the rest of the path is checked as any relative path is.

    Each parent is compared by one stat (device and inode) and resolved only when it is the
    root's directory: a realpath of every parent (each an lstat per component) took 20 s for a
    path of 2,000 components."""
    try:
        root = os.stat(root_real)
    except (OSError, ValueError):
        return None
    parent = os.path.dirname(path)
    while parent not in ("/", ""):
        try:
            info = os.stat(parent)
        except OSError:
            info = None
        except ValueError:
            return None
        if info is not None and (info.st_dev, info.st_ino) == (root.st_dev, root.st_ino) \
                and os.path.realpath(parent) == root_real:
            return path[len(parent):]
        parent = os.path.dirname(parent)
    return None


def _file_type(mode: int) -> str:
    for test, words in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                        (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a device"), (stat.S_ISBLK, "a device")):
        if test(mode):
            return words
    return "not a regular file"


def _unreadable(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.errno == errno.ELOOP:
        return "a symlink loop"
    if isinstance(exc, PermissionError):
        return "not readable (permission denied)"
    return f"not readable ({getattr(exc, 'strerror', None) or exc})"
