"""Blob contents for search hits, kept within a process by blob id.

A blob's id is the hash of its bytes, so a kept blob can never be stale: a later commit that
changes a file makes a new blob with a new id. What a hit cites is decided by the ledger,
never by this cache; it only spares a `git cat-file` process (~10 ms on a busy machine) when
a long-lived process (the MCP server, a benchmark) shows the same files again.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable
from pathlib import Path

from codevouch import caches
from codevouch.worktree import gitio

MAX_BYTES = 32 * 1024 * 1024  # least recently shown blobs go first beyond this

_lock = threading.Lock()
_blobs: OrderedDict[str, bytes] = OrderedDict()
_size = 0


def read_blobs(repo: Path, shas: Iterable[str]) -> dict[str, bytes]:
    """gitio.read_blobs, from memory where a blob was read before (missing blobs are not kept)."""
    wanted = list(dict.fromkeys(s for s in shas if s))
    with _lock:
        found = {s: _blobs[s] for s in wanted if s in _blobs}
        for sha in found:
            _blobs.move_to_end(sha)
    missing = [s for s in wanted if s not in found]
    if missing:
        read = gitio.read_blobs(repo, missing)
        found.update(read)
        _keep(read)
    return found


def _keep(read: dict[str, bytes]) -> None:
    global _size
    with _lock:
        for sha, data in read.items():
            if sha not in _blobs and len(data) <= MAX_BYTES // 4:
                _blobs[sha] = data
                _size += len(data)
        while _size > MAX_BYTES:
            _, data = _blobs.popitem(last=False)
            _size -= len(data)


def clear() -> None:
    global _size
    with _lock:
        _blobs.clear()
        _size = 0


caches.register("codevouch.retriever.blobcache", clear, _blobs.__len__)
