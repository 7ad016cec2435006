"""The overlay's embedding cache: vectors of working-tree chunks the index does not hold yet.

A search that embeds the chunks of files changed since the last build (the working-tree
overlay, codevouch/indexer/overlay.py) keeps their vectors here, by the hash of the embedded
text and the model, so the same edit costs nothing on the next query, in this process or
another. Why a file of its own and not the ledger's `embeddings` table (state.sqlite):

- writing the ledger takes SQLite's write lock on state.sqlite (`BEGIN IMMEDIATE`), which a
  build's commit holds while it stages the lexical copy: a search would wait behind a build
  (up to the ledger's 30 s busy timeout), and a build's transactions would wait behind searches;
- a search opens the ledger read-only (it may be on a read-only mount, or a team snapshot
  downloaded from the server, which must stay as published);
- the branch's state must keep describing its indexed commit: nothing a search does may
  look like a build.

`overlay-cache.sqlite` is content-addressed like the ledger's cache, so any process may add to
it at any time; it is bounded (oldest rows go past MAX_ROWS), a write that cannot get the lock
at once is skipped (the vectors stay in this process's memory), and a read-only index
directory simply has no file. A build reads it before embedding (indexer/build.py), so an
edit the overlay embedded is not embedded again by the next `codevouch index build`.

A vector here may come from the NumPy encoder (a search) and one in the ledger's cache from
torch (a build): the two agree to a cosine of 0.9999 on the same text, so either serves both.

`indexed_versions` reads what a changed file's definitions were at the indexed commit (their
symbols and text hashes), for the stand-in vectors of retriever/standin.py.
"""
from __future__ import annotations

import sqlite3
import time
from array import array
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from codevouch import caches
from codevouch.printable import has_lone_surrogate
from codevouch.store.ledger import Ledger
from codevouch.store.records import BranchState

FILE = "overlay-cache.sqlite"
MAX_ROWS = 20_000          # ~32 MB of 384-dim vectors; the oldest rows go first
_MEMORY: dict[tuple[str, str], list[float]] = {}   # this process's vectors, written or not
_MEMORY_MAX = 50_000


def _open(index_dir: Path, write: bool) -> sqlite3.Connection | None:
    path = index_dir / FILE
    try:
        if not write:
            if not path.is_file():
                return None
            db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=0.2, isolation_level=None)
        else:
            if not index_dir.is_dir():
                return None
            db = sqlite3.connect(str(path), timeout=0.2, isolation_level=None)
            db.execute("CREATE TABLE IF NOT EXISTS vectors (model TEXT, text_hash TEXT, vector BLOB, "
                       "added REAL, PRIMARY KEY (model, text_hash))")
        return db
    except sqlite3.Error:
        return None


def get(index_dir: Path, model: str, hashes: Iterable[str]) -> dict[str, list[float]]:
    """The vectors this process or the cache file holds for `hashes` (a missing or unreadable
    file gives what memory has)."""
    wanted = list(dict.fromkeys(hashes))
    found = {h: _MEMORY[(model, h)] for h in wanted if (model, h) in _MEMORY}
    rest = [h for h in wanted if h not in found]
    if not rest:
        return found
    db = _open(index_dir, write=False)
    if db is None:
        return found
    try:
        for start in range(0, len(rest), 500):
            part = rest[start:start + 500]
            marks = ",".join("?" * len(part))
            for h, blob in db.execute(f"SELECT text_hash, vector FROM vectors WHERE model=? AND text_hash IN "
                                      f"({marks})", (model, *part)):
                vec = array("f")
                vec.frombytes(blob)
                found[h] = _remember(model, h, vec.tolist())
    except sqlite3.Error:
        pass
    finally:
        db.close()
    return found


def put(index_dir: Path, model: str, vectors: Mapping[str, Sequence[float]]) -> bool:
    """Keep `vectors`: in memory always, in the cache file when it can be written at once
    (True). Never waits on a build: the file is not the ledger, and a busy file is skipped."""
    for h, v in vectors.items():
        _remember(model, h, list(v))
    if not vectors:
        return True
    db = _open(index_dir, write=True)
    if db is None:
        return False
    try:
        now = time.time()
        db.execute("BEGIN IMMEDIATE")
        db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?, ?)",
                       [(model, h, array("f", v).tobytes(), now) for h, v in vectors.items()])
        (count,) = db.execute("SELECT count(*) FROM vectors").fetchone()
        if count > MAX_ROWS:
            db.execute("DELETE FROM vectors WHERE rowid IN (SELECT rowid FROM vectors ORDER BY added LIMIT ?)",
                       (count - MAX_ROWS,))
        db.execute("COMMIT")
        return True
    except sqlite3.Error:
        try:
            db.execute("ROLLBACK")
        except sqlite3.Error:
            pass
        return False
    finally:
        db.close()


def remembered(model: str, hashes: Iterable[str]) -> dict[str, list[float]]:
    """The vectors of `hashes` this process holds (read nothing)."""
    return {h: _MEMORY[(model, h)] for h in hashes if (model, h) in _MEMORY}


def holds(model: str, hashes: Iterable[str]) -> bool:
    """Whether this process holds the vector of every one of `hashes`."""
    return all((model, h) in _MEMORY for h in hashes)


def remember(model: str, vectors: Mapping[str, list[float]]) -> None:
    """Hold vectors read elsewhere (the ledger's cache) for this process's next calls."""
    for h, v in vectors.items():
        _remember(model, h, v)


def forget_memory() -> None:
    """Drop this process's vectors (tests and benchmarks: a cold process)."""
    _MEMORY.clear()


caches.register("codevouch.store.overlaycache.memory", _MEMORY.clear, _MEMORY.__len__)


def _remember(model: str, h: str, vec: list[float]) -> list[float]:
    if len(_MEMORY) >= _MEMORY_MAX:
        _MEMORY.clear()
    _MEMORY[(model, h)] = vec
    return vec


def indexed_versions(ledger: Ledger, state: BranchState, paths: Iterable[str]) -> dict[str, list[tuple[str, str]]]:
    """path -> its live chunks at the branch's indexed commit as (symbol, text hash), in order:
    one query for the paths (a few dozen to a few hundred changed files), read-only."""
    # A name that is not UTF-8 (a lone surrogate) is never in the ledger (the build skips such a
    # file), and SQLite cannot even be asked about it.
    wanted = sorted(p for p in set(paths) if not has_lone_surrogate(p))
    found: dict[str, list[tuple[str, str]]] = {}
    for start in range(0, len(wanted), 500):
        part = wanted[start:start + 500]
        rows = ledger.db.execute(
            "SELECT sb.path, c.symbol, t.text_hash FROM files f CROSS JOIN space_blobs sb ON sb.path=f.path "
            "AND sb.blob_sha=f.blob_sha AND sb.space=? CROSS JOIN space_chunks c ON c.blob=sb.id CROSS JOIN "
            f"space_texts t ON t.id=c.text WHERE f.coll=? AND f.status='live' AND f.path IN ({','.join('?' * len(part))}) "
            "ORDER BY sb.path, c.ordinal", (state.space, state.coll, *part))
        for path, symbol, text_hash in rows:
            found.setdefault(path, []).append((symbol or "", text_hash))
    return found

