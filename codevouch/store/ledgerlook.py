"""What readers ask of a ledger file, kept while the file is unchanged.

A warm process (the engine; a search across 100 repositories) opens the ledger for each search
and asks it the same small questions each time: which builds there are, a branch's entry and
lexical stamp, whether it is out of date, how many chunks its space and branch hold. Their answers
change only when a transaction commits, and a commit writes the ledger file or its write-ahead
log, which moves that file's mtime. So a read-only Ledger takes both files' stat data when it
opens, before it reads (`look`), and keeps those answers under them (`kept`), for itself and each
later reader whose look is the same. A file written within RACY_NS of the look could be written
again in the same clock tick with its stat data unchanged: then nothing is kept or reused.
"""
from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

from codevouch import caches
from codevouch.kept import RACY_NS, Seen

FileKey = tuple[int, int, int, int] | None


def file_key(path: Path | str, with_ctime: bool = True) -> FileKey:
    """A file's stat data (inode, size, mtime, ctime or 0), None when it is missing: what every
    answer the store keeps by a file is kept under (this module's; lexindex's stamps and reloads)."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns if with_ctime else 0)


def racy(key: FileKey, now_ns: int) -> bool:
    """Whether the file was written within RACY_NS of `now_ns`: a write in the same clock tick
    could leave its stat data as they were, so nothing read of it now may be kept."""
    return key is not None and max(key[2], key[3]) >= now_ns - RACY_NS


def look(path: Path) -> Seen:
    """The stat data of the ledger file and its write-ahead log (`state`: two file keys). Not the
    log's ctime: SQLite opened by root hands the log to the database's owner at each open (an
    fchown, which moves only the ctime, at every reader's open)."""
    now = time.time_ns()
    keys = (file_key(path), file_key(f"{path}-wal", with_ctime=False))
    return Seen(keys, any(racy(k, now) for k in keys))


# Per ledger file: the look its answers were read under, and the answers by question.
_KEPT: dict[str, tuple[tuple[object, ...], dict[tuple[Any, ...], Any]]] = {}
_LOCK = threading.Lock()
_MOST_FILES = 64            # ledgers one process reads: a few
_MOST_ANSWERS = 100_000     # answers kept of one unchanged ledger (each small: a row, a count)
caches.register("codevouch.store.ledgerlook", _KEPT.clear, lambda: sum(len(a) for _, a in _KEPT.values()))


def kept(path: Path, seen: Seen) -> dict[tuple[Any, ...], Any] | None:
    """The answers kept under `seen` for the ledger at `path` (empty when the file changed since
    they were read), to read and add to; None when `seen` is racy: ask the file."""
    if seen.racy:
        return None
    key = str(path)
    with _LOCK:
        held = _KEPT.get(key)
        if held is None or held[0] != seen.state or len(held[1]) >= _MOST_ANSWERS:
            if held is None and len(_KEPT) >= _MOST_FILES:
                _KEPT.clear()
            held = _KEPT[key] = (seen.state, {})
        return held[1]
