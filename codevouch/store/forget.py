"""`codevouch index forget`, the ledger's half: branch entries removed in one transaction.

What goes, in the one transaction that makes the new state visible (Ledger.transaction):
  - the entries' `branches`, `files`, `outdated` rows and their lexical stamps;
  - in each space they used: the file versions no remaining entry references, with their chunk
    rows, and the texts (vectors) and lexical rows no remaining chunk uses, as a build collects
    them (ledger.collect_unreferenced); a space no entry uses any more goes whole
    (ledger.drop_space), and a `pending` row (space, DROP_ALL) says its collection is garbage;
  - embedding-cache rows of the texts removed here that no space still holds (`embeddings` is keyed
    by the embedded text's hash: a text another repository, branch or model's space still holds
    keeps its row; rows the forgotten entries never used stay as they are).

After the commit, the writer (store/writer.py, Writer.forget) removes what it made garbage: the
collections marked DROP_ALL, the vectors listed in `pending`, the tantivy copies no entry names.
Killed before the commit, nothing changed; after it, the new state is whole and the next writer
(a build or a forget: Writer.collect_garbage) removes what is left.
"""
from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

from codevouch.store.ledger import collect_unreferenced, drop_space
from codevouch.store.ledgerfile import BRANCH_STAMP, space_stamp_key
from codevouch.store.records import BranchState

# A `pending` id that stands for the whole collection: no entry uses its space any more.
DROP_ALL = "*"


@dataclass(frozen=True)
class Forgotten:
    """What one forget removed from the ledger, and what it kept."""
    entries: tuple[BranchState, ...]
    dropped_spaces: tuple[str, ...]      # spaces no entry uses now: rows gone, collection to drop whole
    kept_spaces: tuple[str, ...]         # spaces other entries still use: only what they do not share went
    collections: tuple[str, ...]         # an older layout's collections only the forgotten entries used
    chunks: int                          # chunk rows removed (a chunk is one per file version and position)
    vectors: int                         # distinct texts (vectors) removed
    cache_removed: int                   # embedding-cache rows removed with them
    cache_kept: int                      # cache rows of removed texts kept: another space still holds the text


def _texts(db: sqlite3.Connection, space: str) -> set[str]:
    return {h for (h,) in db.execute("SELECT text_hash FROM space_texts WHERE space=?", (space,))}


def _chunks(db: sqlite3.Connection, space: str) -> int:
    row = db.execute("SELECT count(*) FROM space_chunks c JOIN space_blobs sb ON sb.id = c.blob WHERE sb.space=?",
                     (space,)).fetchone()
    return int(row[0])


def forget_entries(db: sqlite3.Connection, entries: Sequence[BranchState]) -> Forgotten:
    """Remove `entries` (inside the caller's transaction; see the module docstring)."""
    colls = [e.coll for e in entries]
    spaces = sorted({e.space for e in entries if e.space})
    before = {s: (_texts(db, s), _chunks(db, s)) for s in spaces}
    collections: list[str] = []
    for coll in colls:
        row = db.execute("SELECT collections FROM outdated WHERE coll=?", (coll,)).fetchone()
        if row is not None:
            collections += json.loads(row[0])
        for sql in ("DELETE FROM files WHERE coll=?", "DELETE FROM branches WHERE coll=?",
                    "DELETE FROM outdated WHERE coll=?"):
            db.execute(sql, (coll,))
        db.execute("DELETE FROM meta WHERE key=?", (f"{BRANCH_STAMP}{coll}",))
    dropped, kept, removed, chunks = [], [], set(), 0
    for space in spaces:
        texts, count = before[space]
        if db.execute("SELECT 1 FROM branches WHERE space=? LIMIT 1", (space,)).fetchone():
            collect_unreferenced(db, space)
            _restamp(db, space)
            removed |= texts - _texts(db, space)
            chunks += count - _chunks(db, space)
            kept.append(space)
        else:
            drop_space(db, space)
            db.execute("INSERT OR IGNORE INTO pending VALUES (?, ?)", (space, DROP_ALL))
            removed |= texts
            chunks += count
            dropped.append(space)
    for name in collections:    # an older layout's own collections: garbage as a dropped space's
        db.execute("INSERT OR IGNORE INTO pending VALUES (?, ?)", (name, DROP_ALL))
    cache_removed, cache_kept = _forget_cached(db, removed)
    return Forgotten(tuple(entries), tuple(dropped), tuple(kept), tuple(collections), chunks, len(removed),
                     cache_removed, cache_kept)


def _restamp(db: sqlite3.Connection, space: str) -> None:
    """A new lexical stamp for a space whose rows changed (what caches of its size key on,
    retriever/members.py); its remaining branches keep the stamp their tantivy copy is named
    after (a branch stamped by no build of its own takes the space's, ledgerfile.branch_stamp)."""
    row = db.execute("SELECT value FROM meta WHERE key=?", (space_stamp_key(space),)).fetchone()
    if row is not None:
        db.executemany("INSERT OR IGNORE INTO meta VALUES (?, ?)",
                       [(f"{BRANCH_STAMP}{coll}", row[0])
                        for (coll,) in db.execute("SELECT coll FROM branches WHERE space=?", (space,)).fetchall()])
    db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (space_stamp_key(space), f"forget {os.urandom(8).hex()}"))


def _forget_cached(db: sqlite3.Connection, removed: set[str]) -> tuple[int, int]:
    """Remove the embedding-cache rows of the `removed` texts that no space holds any more;
    (rows removed, rows kept because a space still holds their text)."""
    if not removed:
        return 0, 0
    held = {h for (h,) in db.execute("SELECT text_hash FROM space_texts")} & removed
    models = [m for (m,) in db.execute("SELECT DISTINCT model FROM embeddings")]
    return _cache_rows(db, models, sorted(removed - held), "DELETE"), _cache_rows(db, models, sorted(held), "SELECT")


def _cache_rows(db: sqlite3.Connection, models: Sequence[str], hashes: Sequence[str], verb: str) -> int:
    """How many cache rows of `hashes` there are (verb SELECT) or were removed (DELETE)."""
    count = 0
    for model in models:
        for start in range(0, len(hashes), 500):
            part = hashes[start:start + 500]
            where = f"FROM embeddings WHERE model=? AND text_hash IN ({','.join('?' * len(part))})"
            if verb == "DELETE":
                count += db.execute(f"DELETE {where}", (model, *part)).rowcount
            else:
                count += int(db.execute(f"SELECT count(*) {where}", (model, *part)).fetchone()[0])
    return count
