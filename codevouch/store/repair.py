"""`index build --repair`: the embedded vector store rebuilt from the embedding cache.

A damaged `chroma/chroma.sqlite3` (a disk error, a copy cut short) broke every search while
`index build` said "up to date": the ledger, which a build compares with the commit, was fine.
Every vector a branch uses is also in the ledger's embedding cache (by model and text hash), so
the store can be made again without embedding anything: the damaged directory is moved aside
(`chroma.damaged-STAMP`, for a post-mortem), a fresh one is filled space by space, and each
build's start checks the store's SQLite header so that a damaged one is named, with this fix.
"""
from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from codevouch.errors import BadIndex, InputError
from codevouch.store.indexdir import IndexDir
from codevouch.store.ledger import Ledger
from codevouch.store.locks import writer_lock
from codevouch.store.naming import server_url
from codevouch.store.vectors import VectorStore

BATCH = 2000
HINT = ("run `codevouch index build --repair`: it rebuilds the vectors from the embedding cache, "
        "without embedding anything")


@dataclass(frozen=True)
class Repaired:
    spaces: int
    vectors: int           # written from the embedding cache
    missing: int           # texts the cache had no vector for (a build embeds them again: see below)
    aside: str | None      # where the damaged store went


def check_store(index_dir: Path) -> None:
    """BadIndex, naming the fix, when the embedded store's SQLite file is not a database (its
    header and schema page; no scan: a no-op build stays fast)."""
    path = IndexDir(index_dir).chroma_file
    if server_url() or not path.exists():
        return
    try:
        with open(path, "rb") as handle:
            header = handle.read(16)
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            db.execute("PRAGMA schema_version").fetchone()
            db.execute("SELECT count(*) FROM sqlite_master").fetchone()
        finally:
            db.close()
    except (OSError, sqlite3.Error) as exc:
        raise BadIndex(f"the vector store {path} is damaged ({type(exc).__name__}: {exc}); {HINT}.") from exc
    if header != b"SQLite format 3\0":
        raise BadIndex(f"the vector store {path} is damaged (not an SQLite database); {HINT}.")


def repair(index_dir: Path, wait: float = 0) -> Repaired:
    """Move the embedded store aside and write every space's vectors again from the cache."""
    if server_url():
        raise InputError("--repair rebuilds the embedded vector store; with CODEVOUCH_CHROMA_URL set the "
                         "vectors are on the server: unset it, or rebuild the server's copy with a build.")
    with writer_lock(index_dir, wait):
        ledger = Ledger(index_dir)
        try:
            chroma = IndexDir(index_dir).chroma
            aside = None
            if chroma.exists():
                stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
                aside = chroma.with_name(f"chroma.damaged-{stamp}")
                os.replace(chroma, aside)
            spaces = {s.space: s.embedder for s in ledger.branches() if s.space}
            written = missing = 0
            with VectorStore(index_dir) as vectors:
                for space, model in sorted(spaces.items()):
                    hashes = [h for (h,) in ledger.db.execute(
                        "SELECT text_hash FROM space_texts WHERE space=? ORDER BY text_hash", (space,))]
                    for start in range(0, len(hashes), BATCH):
                        part = hashes[start:start + BATCH]
                        found = ledger.cached_vectors(model, part)
                        have = [h for h in part if h in found]
                        missing += len(part) - len(have)
                        if have:
                            vectors.upsert(space, have, [found[h] for h in have])
                            written += len(have)
            ledger.clear_pending(ledger.pending())
            return Repaired(len(spaces), written, missing, str(aside) if aside else None)
        finally:
            ledger.close()
