"""The one way codevouch reads a file on its own account (a working-tree file, a setting file, a
file git will read): opened non-blocking, checked by fstat to be a regular file, and never read
past a cap.

Why each part: a FIFO opened for reading blocks until some writer comes (for ever, in a hostile
repository), and O_NONBLOCK makes the open return at once; a character device such as /dev/zero
opens and never ends, and fstat tells it from a file before a byte is read; a 2 GB sparse file is
a regular file, and the cap (checked on fstat's size, then on what is read, in case it grows)
keeps the read to at most `limit` + 1 bytes. `follow=False` adds O_NOFOLLOW, for a path that must
not be a symlink at all (a working-tree file checked by paths.locate).

A leaf of worktree: it imports nothing of codevouch.
"""
from __future__ import annotations

import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


@dataclass(frozen=True)
class TooLarge:
    """A file over the size cap: not read (at most limit + 1 bytes were)."""
    size: int     # its size by fstat (at least limit + 1 when it grew while being read)
    limit: int

    def words(self) -> str:
        return f"{self.size} bytes, over the {self.limit}-byte cap (max_file_bytes)"


@dataclass(frozen=True)
class NotRegular:
    """A path that is no regular file (or could not be opened): not read. `what` says what it is,
    for a message: "a FIFO", "a character device", "a symlink", "missing"..."""
    what: str

    @property
    def missing(self) -> bool:
        return self.what == "missing"


def kind_of(mode: int) -> str:
    """What a file of stat mode `mode` is, in words."""
    for test, words in ((stat.S_ISREG, "a regular file"), (stat.S_ISDIR, "a directory"),
                        (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                        (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"),
                        (stat.S_ISLNK, "a symlink")):
        if test(mode):
            return words
    return "a special file"


def read_file(path: str | os.PathLike[str], limit: int, follow: bool = False) -> bytes | TooLarge | NotRegular:
    """The bytes of the regular file at `path`, at most `limit` of them; TooLarge over it;
    NotRegular for anything else (a FIFO, a device, a directory, a symlink unless `follow`, a
    path that is missing or cannot be opened). Never blocks, never reads more than limit + 1."""
    def read(fd: int, info: os.stat_result) -> bytes | TooLarge:
        return TooLarge(info.st_size, limit) if info.st_size > limit else _read_capped(fd, info.st_size, limit)
    return _in_regular(path, follow, read)


def read_head(path: str | os.PathLike[str], size: int, follow: bool = False) -> bytes | NotRegular:
    """The first `size` bytes of the regular file at `path` (all of it when shorter), whatever
    its length; NotRegular as for read_file. Never blocks, never reads more than `size`."""
    return _in_regular(path, follow, lambda fd, _: os.read(fd, size))


R = TypeVar("R")


def _in_regular(path: str | os.PathLike[str], follow: bool,
                read: Callable[[int, os.stat_result], R]) -> R | NotRegular:
    """`read(fd, its fstat)` of the file at `path` opened without blocking, when it is a regular
    file; else NotRegular (what it is, missing, or why it could not be opened or read)."""
    try:
        fd = os.open(path, _FLAGS | (0 if follow else _NOFOLLOW))
    except FileNotFoundError:
        return NotRegular("missing")
    except OSError as exc:
        return NotRegular(_open_failure(path, exc))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return NotRegular(kind_of(info.st_mode))
        return read(fd, info)
    except OSError as exc:
        return NotRegular(f"unreadable ({exc.strerror or exc})")
    finally:
        os.close(fd)


def _open_failure(path: str | os.PathLike[str], exc: OSError) -> str:
    # O_NOFOLLOW on a symlink fails with ELOOP: say it is a symlink, which is what the caller refused.
    try:
        if stat.S_ISLNK(os.lstat(path).st_mode):
            return "a symlink"
    except OSError:
        pass
    return f"unreadable ({exc.strerror or exc})"


def _read_capped(fd: int, size: int, limit: int) -> bytes | TooLarge:
    # os.read straight into one buffer of the file's size: half the cost of a file object.
    # A regular file gives fewer bytes than asked only at its end; all of them, if it grew
    # (up to the cap: a file growing past it is too large as well).
    chunks = [os.read(fd, size + 1)]
    total = len(chunks[0])
    while total <= limit and len(chunks[-1]) > (size if len(chunks) == 1 else 0):
        chunks.append(os.read(fd, min(1 << 20, limit + 1 - total)))
        total += len(chunks[-1])
    if total > limit:
        return TooLarge(max(total, size), limit)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def check_file(path: str | os.PathLike[str], limit: int) -> TooLarge | NotRegular | None:
    """Whether a file someone else will read (git: a .gitignore, an included config) is safe for
    it to read: None when it is a regular file of at most `limit` bytes, or missing (a reader
    skips a missing one, and a symlink to nothing); else what it is. Symlinks are followed: git
    since 2.32 does not follow an in-tree .gitignore or .gitattributes that is one, older git
    does, and its config includes it always follows. One stat, nothing opened."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return NotRegular(f"unreadable ({exc.strerror or exc})")
    if not stat.S_ISREG(info.st_mode):
        return NotRegular(kind_of(info.st_mode))
    return TooLarge(info.st_size, limit) if info.st_size > limit else None
