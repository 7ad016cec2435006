"""Each repository's remote label, for the hits of a search across repositories (across.py)."""
from __future__ import annotations

import threading
from pathlib import Path

from codevouch import caches


class Remotes:
    """Each repository's remote label, kept for the process (every Indexes, each a call of the CLI,
    the engine or the MCP server) while its git config file is unchanged (the same size,
    modification time and inode: git writes a new config by renaming a new file over it), so a
    remote added or changed is seen at the next call; a work tree whose `.git` is a file (a linked
    work tree, a submodule) asks git each time."""

    def __init__(self) -> None:
        self._known: dict[Path, tuple[tuple[int, int, int], str | None]] = {}
        self._lock = threading.Lock()

    def label(self, root: Path) -> str | None:
        from codevouch.worktree import gitio

        try:
            st = (root / ".git" / "config").stat()
            key: tuple[int, int, int] | None = (st.st_mtime_ns, st.st_size, st.st_ino)
        except OSError:
            key = None
        with self._lock:
            held = self._known.get(root)
        if key is not None and held is not None and held[0] == key:
            return held[1]
        url = gitio.remote_url(root)
        if key is not None:
            with self._lock:
                self._known[root] = (key, url)
        return url

    def clear(self) -> None:
        with self._lock:
            self._known.clear()

    def __len__(self) -> int:
        return len(self._known)


REMOTES = Remotes()
caches.register("codevouch.across.remotes", REMOTES.clear, REMOTES.__len__)
