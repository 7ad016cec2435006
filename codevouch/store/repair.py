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
import shutil
import sqlite3
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from codevouch.errors import InputError
from codevouch.store.indexdir import IndexDir
from codevouch.store.ledger import Ledger
from codevouch.store.ledgerfile import quote_path, sqlite_errors
from codevouch.store.locks import writer_lock
from codevouch.store.settings import DEFAULT, StoreSettings
from codevouch.store.vectors import VectorStore

BATCH = 2000
@dataclass(frozen=True)
class Repaired:
    spaces: int
    vectors: int           # written from the embedding cache
    missing: int           # texts the cache had no vector for (a build embeds them again: see below)
    aside: str | None      # where the damaged store went
    ledger_aside: str | None = None   # a corrupt ledger moved here: the repository must be built again
    salvaged: int = 0      # cached vectors read back from the corrupt ledger into the new one


def ledger_damage(index_dir: Path) -> str | None:
    """What is wrong with the ledger's pages (SQLite's quick check), None when they read well or
    there is no ledger. A scan of the file: for --repair, never for a search or a build."""
    path = IndexDir(index_dir).ledger
    if not path.is_file():
        return None
    with sqlite_errors(index_dir):      # locked or unreadable: said as for any use of the ledger
        try:
            db = sqlite3.connect(f"file:{quote_path(path)}?mode=ro", uri=True, timeout=30)
            try:
                rows = db.execute("PRAGMA quick_check(5)").fetchall()
            finally:
                db.close()
        except sqlite3.OperationalError:
            raise
        except sqlite3.DatabaseError as exc:
            return str(exc)
    found = [str(r[0]) for r in rows]
    return None if found == ["ok"] else "; ".join(found)[:300]


def renew_ledger(index_dir: Path, settings: StoreSettings = DEFAULT) -> Repaired:
    """A corrupt ledger: moved aside (`state.sqlite.damaged-STAMP`, with its WAL), a new one made,
    the cached vectors it still yields copied in (so the build embeds only what was lost), and the
    stores derived from the old one (chroma/, lexical/) removed: the repository's next build makes
    them again from git. The caller builds the repository. `settings`: the caller's (with a
    server, chroma/ is not the vectors' home and is left alone)."""
    where = IndexDir(index_dir)
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    aside = where.ledger.with_name(f"{where.ledger.name}.damaged-{stamp}")
    for suffix in ("-wal", "-shm", ""):
        part = Path(f"{where.ledger}{suffix}")
        if part.exists():
            os.replace(part, Path(f"{aside}{suffix}"))
    ledger = Ledger(index_dir)
    try:
        salvaged = _salvage_cache(aside, ledger)
    finally:
        ledger.close()
    if not settings.chroma_url:
        shutil.rmtree(where.chroma, ignore_errors=True)
    shutil.rmtree(where.lexical, ignore_errors=True)
    return Repaired(0, 0, 0, None, str(aside), salvaged)


def _salvage_cache(damaged: Path, ledger: Ledger) -> int:
    """Copy the embedding cache rows SQLite can still read from the damaged ledger (in order,
    until the first damaged page); how many."""
    copied = 0
    try:
        src = sqlite3.connect(f"file:{quote_path(damaged)}?mode=ro", uri=True, timeout=30)
    except sqlite3.Error:
        return 0
    try:
        batch: dict[str, dict[str, bytes]] = {}
        try:
            for model, text_hash, vector in src.execute("SELECT model, text_hash, vector FROM embeddings"):
                batch.setdefault(model, {})[text_hash] = vector
                copied += 1
                if copied % 2000 == 0:
                    _put_raw(ledger, batch)
                    batch = {}
        except sqlite3.Error:
            pass
        _put_raw(ledger, batch)
    finally:
        src.close()
    return copied


def _put_raw(ledger: Ledger, batch: dict[str, dict[str, bytes]]) -> None:
    with ledger.transaction() as db:
        for model, vectors in batch.items():
            db.executemany("INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?)",
                           [(model, h, v) for h, v in vectors.items()])


def repair(index_dir: Path, wait: float = 0, settings: StoreSettings = DEFAULT) -> Repaired:
    """Move the embedded store aside and write every space's vectors again from the cache; with a
    corrupt ledger, renew the ledger instead (`renew_ledger`: the caller then builds).
    `settings`: the caller's (store/settings.py); refused with a Chroma server."""
    if settings.chroma_url and ledger_damage(index_dir) is None:
        raise InputError("--repair rebuilds the embedded vector store; with CODEVOUCH_CHROMA_URL set the "
                         "vectors are on the server: unset it, or rebuild the server's copy with a build.")
    with writer_lock(index_dir, wait):
        damage = ledger_damage(index_dir)
        if damage is not None:
            return renew_ledger(index_dir, settings)
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
            with VectorStore(index_dir, settings=settings) as vectors:
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
