"""Whether the embedded vector store is whole, by SQLite reads alone (no Chroma client, no scan):
what a build's start and a search's first dense query check, and the fix they name. Apart from
`repair` (which rebuilds the store) so that the store itself can ask without importing it."""
from __future__ import annotations

import sqlite3
from collections.abc import Collection
from pathlib import Path

from codevouch.errors import BadIndex
from codevouch.store.indexdir import IndexDir
from codevouch.store.ledger import Ledger
from codevouch.store.ledgerfile import quote_path

HINT = ("run `codevouch index build --repair`: it rebuilds the vectors from the embedding cache, "
        "without embedding anything")


def hint(index_dir: Path) -> str:
    """HINT with the index directory named, so that the command works as it is written."""
    return HINT.replace("--repair`", f"--repair --index {index_dir}`")



def header_problem(path: Path) -> str | None:
    """What is wrong with the embedded store's SQLite file at first sight (its header and schema
    page; no scan), None when nothing is."""
    try:
        with open(path, "rb") as handle:
            header = handle.read(16)
        if header != b"SQLite format 3\0":
            return "empty" if not header else "not an SQLite database"
        db = sqlite3.connect(f"file:{quote_path(path)}?mode=ro", uri=True)
        try:
            db.execute("PRAGMA schema_version").fetchone()
            db.execute("SELECT count(*) FROM sqlite_master").fetchone()
        finally:
            db.close()
    except sqlite3.OperationalError as exc:
        if "readonly" in str(exc) and _journal_pending(path):
            # A build killed inside a write left its journal: a read-only connection cannot roll
            # it back, the store's own read-write open does (and then reads the previous state).
            return None
        return f"{type(exc).__name__}: {exc}"
    except (OSError, sqlite3.Error) as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


def _journal_pending(path: Path) -> bool:
    """Whether a rollback journal or a write-ahead log lies beside the SQLite file at `path`."""
    for suffix in ("-journal", "-wal"):
        try:
            if path.with_name(path.name + suffix).stat().st_size > 0:
                return True
        except OSError:
            continue
    return False


def check_store(index_dir: Path, spaces: Collection[str] = (), server: str | None = None) -> None:
    """BadIndex, naming the fix, when the embedded store's SQLite file is not a database, or when it
    (or its directory) is gone, or lacks the collection of one of `spaces` (those the ledger holds
    vectors for). SQLite reads of the header and of Chroma's `collections` table, no Chroma client
    and no scan: a no-op build stays fast. Nothing to check with the vectors on a `server`."""
    where = IndexDir(index_dir)
    path = where.chroma_file
    if server:
        return
    if not path.exists():
        if spaces:
            missing = where.chroma if not where.chroma.exists() else path
            raise BadIndex(f"the vector store {missing} is missing, though the ledger holds vectors for "
                           f"{len(spaces)} {'space' if len(spaces) == 1 else 'spaces'}; {hint(index_dir)}.")
        return
    problem = header_problem(path)
    if problem is not None:
        raise BadIndex(f"the vector store {path} is damaged ({problem}); {hint(index_dir)}.")
    listed = _chroma_collections(path) if spaces else None
    if listed is not None:
        absent = sorted(set(spaces) - listed)
        if absent:
            raise BadIndex(f"the vector store {path} has lost the collection {absent[0]} (of {len(absent)} the "
                           f"ledger holds vectors for); {hint(index_dir)}.")


def _chroma_collections(path: Path) -> set[str] | None:
    """The collection names Chroma's own table lists (its schema since 0.4); an emptied store
    that Chroma opened since has the table and no rows. None when it cannot tell."""
    try:
        db = sqlite3.connect(f"file:{quote_path(path)}?mode=ro", uri=True)
        try:
            return {name for (name,) in db.execute("SELECT name FROM collections")}
        finally:
            db.close()
    except sqlite3.Error:
        return None


def vector_spaces(ledger: Ledger) -> set[str]:
    """The spaces of this release's branches that hold at least one vector (older layouts aside)."""
    outdated = ledger.outdated_branches()
    return {b.space for b in ledger.branches()
            if b.space and b.coll not in outdated and ledger.space_size(b.space) > 0}
