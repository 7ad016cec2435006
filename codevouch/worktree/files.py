"""Safe reads of working-tree files: never through a symlink, a FIFO or a device."""
from __future__ import annotations

import os
import stat
from pathlib import Path

from codevouch.syntax.lines import decode
from codevouch.worktree.paths import locate
from codevouch.worktree.rules import Rules, load_rules_text

# O_NOFOLLOW and O_NONBLOCK: if the path was swapped for a symlink or a FIFO since it was
# checked, the open fails or returns at once, and fstat below refuses it.
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)


def read_text(root: Path | str, real: str) -> str | None:
    """A working-tree file's text; `real` was checked by paths.locate to lie inside `root`."""
    data = read_bytes(root, real)
    return None if data is None else decode(data)


def read_bytes(root: Path | str, real: str) -> bytes | None:
    """read_text's bytes, before decoding."""
    try:
        # `real` is a normal relative path: joining by hand costs a fraction of os.path.join.
        fd = os.open(f"{os.fspath(root)}/{real}", _READ_FLAGS)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None
        # os.read straight into one buffer of the file's size: half the cost of a file object.
        # A regular file gives fewer bytes than asked only at its end; all of them, if it grew.
        chunks = [os.read(fd, info.st_size + 1)]
        while len(chunks[-1]) > (info.st_size if len(chunks) == 1 else 0):
            chunks.append(os.read(fd, 1 << 20))
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def load_worktree_rules(root: Path) -> Rules:
    """The exclusion rules as they are in the working tree (.codevouch.toml or pyproject.toml)."""
    def text(name: str) -> str | None:
        loc = locate(root, name)
        return read_text(root, loc.real) if loc.inside and loc.exists and loc.real else None
    return load_rules_text(text(".codevouch.toml"), text("pyproject.toml"))
