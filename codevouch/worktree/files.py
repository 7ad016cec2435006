"""Safe reads of working-tree files: never through a symlink, a FIFO or a device, and never
more than the size cap (rules.MAX_FILE_BYTES, or the repository's `max_file_bytes`): a file
over it is answered with TooLarge after one fstat, in constant memory (a 2 GB sparse file
took 121 s and 4 GB to validate when it was read whole)."""
from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

from codevouch.syntax.lines import decode
from codevouch.worktree.config import LOADS, RepoConfig, load_repo_config, read_setting_file
from codevouch.worktree.rules import MAX_FILE_BYTES, Rules, load_rules_text
from codevouch.worktree.safe_read import NotRegular, TooLarge, read_file

__all__ = ["CallSettings", "TooLarge", "load_worktree_rules", "over_cap", "read_bytes", "read_text"]


def read_text(root: Path | str, real: str, limit: int = MAX_FILE_BYTES) -> str | TooLarge | None:
    """A working-tree file's text; `real` was checked by paths.locate to lie inside `root`.
    None: not a regular file, or unreadable; TooLarge: over `limit` bytes, not read."""
    data = read_bytes(root, real, limit)
    return data if data is None or isinstance(data, TooLarge) else decode(data)


def read_bytes(root: Path | str, real: str, limit: int = MAX_FILE_BYTES) -> bytes | TooLarge | None:
    """read_text's bytes, before decoding: at most `limit` + 1 bytes are ever read, never through
    a symlink (if the path was swapped for one since it was checked, the open fails), a FIFO or
    a device (safe_read)."""
    # `real` is a normal relative path: joining by hand costs a fraction of os.path.join.
    data = read_file(f"{os.fspath(root)}/{real}", limit)
    return None if isinstance(data, NotRegular) else data


def over_cap(root: Path | str, paths: Iterable[str], limit: int = MAX_FILE_BYTES) -> frozenset[str]:
    """The paths whose working-tree file is larger than `limit` bytes (one lstat each): not to
    be hashed either (git reads all of a file to hash it)."""
    huge = set()
    for path in paths:
        try:
            if os.lstat(f"{os.fspath(root)}/{path}").st_size > limit:
                huge.add(path)
        except (OSError, ValueError):
            continue        # gone or unreadable: the caller's read or hash says so
    return frozenset(huge)


def huge_worktree_files(root: Path | str, limit: int = MAX_FILE_BYTES) -> frozenset[str]:
    """The working-tree files (tracked and untracked, not ignored) over `limit` bytes: one
    `ls-files` and one lstat each. A `git grep` of the working tree leaves them out (it holds
    all of a file in memory: 2 GB resident for a sparse 2 GB file)."""
    from codevouch.worktree import gitio

    return over_cap(root, gitio.worktree_files(Path(root)), limit)


def undiffable_worktree_files(root: Path | str, limit: int = MAX_FILE_BYTES) -> dict[str, str]:
    """path -> why `git diff` of the working tree must leave it out: a regular file over `limit`
    bytes (git reads all of it: 15 s for a sparse 2 GB file), or a tracked path that is now a
    FIFO, socket or device (git fails the whole diff: "unsupported file type"). One `ls-files`
    and one lstat each; folders (submodules) and symlinks git diffs itself."""
    from codevouch.worktree import gitio

    found: dict[str, str] = {}
    top = os.fspath(root)
    for path in gitio.worktree_files(Path(root)):
        try:
            st = os.lstat(f"{top}/{path}")
        except (OSError, ValueError):
            continue
        if stat.S_ISREG(st.st_mode):
            if st.st_size > limit:
                found[path] = f"huge (>{limit} bytes), not diffed"
        elif not stat.S_ISDIR(st.st_mode) and not stat.S_ISLNK(st.st_mode):
            reason = gitio.skip_reason(st, f"{top}/{path}", limit) or "not a regular file"
            found[path] = reason.replace(": not read", ": not diffed")
    return found


def load_worktree_rules(root: Path) -> Rules:
    """The exclusion rules as they are in the working tree (.codevouch.toml or pyproject.toml).
    One call loads them once and hands them down (CallSettings)."""
    LOADS["rules"] += 1
    def text(name: str) -> str | None:
        # The config's own reader: a FIFO, a device or a file over the cap is an error naming it.
        data = read_setting_file(root, name)
        return None if data is None else decode(data)
    return load_rules_text(text(".codevouch.toml"), text("pyproject.toml"))


class CallSettings:
    """The repository's settings for one call (a search, a context pack): its RepoConfig
    (`[embedding]`, `[usage]`, `[budget]`...) and its working-tree exclusion rules, each loaded
    at most once per work-tree root and handed to every part of the call that reads them (a
    search loaded the config twice and the rules twice, a context pack three times each).

    Each is loaded when first asked, where the call asked before, so a bad config still fails
    the step that reads it and nothing earlier; a load that fails is not kept (the next ask
    raises again, as a second load did). The rules and the config read the same two files with
    one reader (config.read_setting_file), but decode them apart (text not UTF-8: the rules as
    every working-tree file, the config with replacement characters), so one is not made from
    the other's reading."""

    def __init__(self) -> None:
        self._configs: dict[Path, RepoConfig] = {}
        self._rules: dict[Path, Rules] = {}

    def config(self, root: Path | str) -> RepoConfig:
        key = Path(root)
        found = self._configs.get(key)
        if found is None:
            found = self._configs[key] = load_repo_config(key)
        return found

    def rules(self, root: Path | str) -> Rules:
        key = Path(root)
        found = self._rules.get(key)
        if found is None:
            found = self._rules[key] = load_worktree_rules(key)
        return found
