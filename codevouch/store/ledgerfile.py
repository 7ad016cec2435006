"""Opening the ledger file: a writer's connection, a reader's that creates nothing (immutable on a
read-only mount), SQLite's failures as messages that say what to do, and upgrades in place."""
from __future__ import annotations

import functools
import os
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

from codevouch.errors import BadIndex, IndexBusy, NotIndexed
from codevouch.store import lexindex, migrations
from codevouch.store.indexdir import IndexDir


def quote_path(path: Path) -> str:
    """`path` as an absolute file: URI path."""
    return quote(str(path.resolve() if path.is_absolute() else path.absolute()))


def open_for_read(index_dir: Path, path: Path) -> sqlite3.Connection:
    """A read-only connection that never creates the ledger (or its directory)."""
    if index_dir.exists() and not index_dir.is_dir():
        raise BadIndex(f"--index {index_dir} is a file, not an index directory.")
    above = next((p for p in index_dir.parents if p.exists()), None)
    if above is not None and not above.is_dir():
        raise BadIndex(f"--index {index_dir} lies under a file ({above}), not a directory.")
    try:
        present = path.is_file()
    except OSError:
        present = False
    if not present:
        if path.exists():
            raise BadIndex(f"{path} is not a file; remove it and rebuild the index.")
        raise NotIndexed(f"nothing is indexed in {index_dir}; run `codevouch index build --index {index_dir}` first.")
    db = connect(path, f"file:{quote_path(path)}?mode=ro", index_dir)
    try:
        with sqlite_errors(index_dir):
            db.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return db
    except BadIndex:
        db.close()
        if os.access(index_dir, os.W_OK):
            raise
    # A WAL-mode ledger on a read-only mount: SQLite cannot create its -shm file there.
    # Nothing can write that directory either, so reading it as immutable is safe.
    db = connect(path, f"file:{quote_path(path)}?mode=ro&immutable=1", index_dir)
    with sqlite_errors(index_dir):
        db.execute("SELECT count(*) FROM sqlite_master").fetchone()
    return db


def corrupt_message(index_dir: Path, why: object) -> str:
    """What to say of a ledger whose pages are damaged: the file, and the command that recovers."""
    ledger = IndexDir(index_dir).ledger
    return (f"the index ledger {ledger} is corrupt ({why}); run `codevouch index build --repair --index "
            f"{index_dir}` in the repository (or with --repo PATH): it moves the damaged ledger aside, keeps what "
            "it can read of the embedding cache and builds the repository again (other repositories in this "
            "index need a build each).")


class LedgerCorrupt(BadIndex, sqlite3.DatabaseError):
    """A ledger page SQLite cannot read ("database disk image is malformed"), met in any query:
    a BadIndex that names the fix, and still an sqlite3.DatabaseError to code that catches those."""


def _damage(index_dir: Path, exc: sqlite3.DatabaseError) -> sqlite3.DatabaseError:
    """`exc` as LedgerCorrupt when it is damage (a plain DatabaseError: malformed, not a database);
    locked, busy or a constraint stay what they are."""
    if type(exc) is not sqlite3.DatabaseError:
        return exc
    return LedgerCorrupt(corrupt_message(index_dir, exc))


class _Cursor(sqlite3.Cursor):
    """A cursor whose reads turn a damaged page into LedgerCorrupt, wherever in a query it lies
    (try/except, not a context manager: rows are read one at a time, and this costs nothing then)."""
    index_dir: Path

    def execute(self, sql: str, parameters: Any = (), /) -> _Cursor:
        try:
            return super().execute(sql, parameters)
        except sqlite3.DatabaseError as exc:
            raise _damage(self.index_dir, exc) from exc

    def executemany(self, sql: str, seq: Any, /) -> _Cursor:
        try:
            return super().executemany(sql, seq)
        except sqlite3.DatabaseError as exc:
            raise _damage(self.index_dir, exc) from exc

    def fetchone(self) -> Any:
        try:
            return super().fetchone()
        except sqlite3.DatabaseError as exc:
            raise _damage(self.index_dir, exc) from exc

    def fetchall(self) -> list[Any]:
        try:
            return super().fetchall()
        except sqlite3.DatabaseError as exc:
            raise _damage(self.index_dir, exc) from exc

    def fetchmany(self, size: int | None = 1) -> list[Any]:
        try:
            return super().fetchmany(size)
        except sqlite3.DatabaseError as exc:
            raise _damage(self.index_dir, exc) from exc

    def __next__(self) -> Any:
        try:
            return super().__next__()
        except sqlite3.DatabaseError as exc:
            raise _damage(self.index_dir, exc) from exc


class LedgerConnection(sqlite3.Connection):
    """The ledger's connection: every query through a _Cursor (damaged pages named, with the fix)."""
    index_dir: Path

    def cursor(self, factory: Any = None) -> Any:
        cur = super().cursor(factory or _Cursor)
        cur.index_dir = self.index_dir
        return cur

    def execute(self, sql: str, parameters: Any = (), /) -> Any:
        return self.cursor().execute(sql, parameters)

    def executemany(self, sql: str, parameters: Any, /) -> Any:
        return self.cursor().executemany(sql, parameters)


def connect(path: Path, uri: str, index_dir: Path) -> sqlite3.Connection:
    with sqlite_errors(index_dir):
        db = sqlite3.connect(uri, uri=True, timeout=30, isolation_level=None, factory=LedgerConnection)
    db.index_dir = index_dir
    return db


@contextmanager
def sqlite_errors(index_dir: Path) -> Iterator[None]:
    """SQLite's failures, turned into messages that say what to do."""
    ledger = IndexDir(index_dir).ledger
    try:
        yield
    except sqlite3.OperationalError as exc:
        text = str(exc)
        if "readonly" in text or "unable to open" in text:
            raise BadIndex(f"cannot open the index ledger {ledger} ({text}); check that the directory "
                           "exists and is readable (and writable, for a build).") from exc
        if "locked" in text or "busy" in text:
            raise IndexBusy(f"the index ledger {ledger} stayed locked ({text}); retry when the build "
                            "that holds it has finished.") from exc
        raise BadIndex(f"the index ledger {ledger} cannot be used ({text}).") from exc
    except LedgerCorrupt:
        raise
    except sqlite3.DatabaseError as exc:
        raise LedgerCorrupt(corrupt_message(index_dir, exc)) from exc


def upgrade(db: sqlite3.Connection, index_dir: Path, path: Path, readonly: bool) -> None:
    """Apply the migrations this ledger lacks (a reader's upgrade opens its own writable connection)."""
    with sqlite_errors(index_dir):
        try:
            todo = migrations.pending(db)
        except migrations.UnknownMigrations as exc:
            raise BadIndex(f"the index at {index_dir} was written by a newer codevouch (format steps "
                           f"{exc}); upgrade codevouch, or build a separate index with --index DIR.") from exc
        if not todo:
            return
        if not readonly:
            migrations.migrate(db)
            _lexical_copies(db, index_dir, todo)
            return
        try:
            writer = sqlite3.connect(f"file:{quote_path(path)}?mode=rw", uri=True, timeout=30, isolation_level=None)
            try:
                migrations.migrate(writer)
            finally:
                writer.close()
        except sqlite3.OperationalError as exc:
            if _never_built(db):
                # A first build that stopped inside its setup (a full disk): the file has some of
                # the format steps and no branch. Nothing was ever indexed, nothing is lost.
                raise NotIndexed(
                    f"the index at {index_dir} is incomplete: its first build stopped before it indexed anything "
                    f"({exc}); nothing is indexed yet. Run `codevouch index build --index {index_dir}` (after "
                    "freeing disk space, if the disk was full).") from exc
            raise BadIndex(
                f"the index at {index_dir} was made by an older codevouch and must be upgraded in place once, "
                f"which needs write access ({exc}); run `codevouch index build --index {index_dir}` as a user "
                "who can write it.") from exc
        _lexical_copies(db, index_dir, todo)


def _never_built(db: sqlite3.Connection) -> bool:
    """The ledger holds no branch (or not even the table): no build ever committed into it."""
    try:
        return db.execute("SELECT 1 FROM branches LIMIT 1").fetchone() is None
    except sqlite3.OperationalError:
        return True     # no such table: the first format steps never ran
    except sqlite3.Error:
        return False


def _lexical_copies(db: sqlite3.Connection, index_dir: Path, applied: list[migrations.Migration]) -> None:
    """When this upgrade stamped the spaces (migrations.LEXICAL_COPIES), write each branch's
    tantivy copy from the ledger's FTS5 rows, so the first search of an older index ranks with it."""
    if not any(m.name == migrations.LEXICAL_COPIES for m in applied):
        return
    rows = db.execute("SELECT coll, space FROM branches WHERE space IS NOT NULL "
                      "AND coll NOT IN (SELECT coll FROM outdated)").fetchall()
    for coll, space in rows:
        stamp = branch_stamp(db, coll, space)
        if stamp is not None:
            lexindex.ensure(index_dir, lexindex.Copy(space, coll, stamp),
                            functools.partial(lexical_docs, db, space, coll))


BRANCH_STAMP = "lexical-branch:"   # meta key prefix of a branch's lexical stamp (+ its coll)
SPACE_STAMP = "lexical:"           # meta key prefix of a space's lexical stamp (+ the space)


def space_stamp_key(space: str) -> str:
    """The meta key of a space's lexical stamp."""
    return f"{SPACE_STAMP}{space}"


def branch_stamp(db: sqlite3.Connection, coll: str, space: str) -> str | None:
    """The stamp of the branch's lexical copy: the space's stamp as the branch's last build left
    it, else (a branch built before branches had their own) the space's current stamp."""
    row = db.execute("SELECT value FROM meta WHERE key IN (?, ?) ORDER BY key = ? DESC LIMIT 1",
                     (f"{BRANCH_STAMP}{coll}", space_stamp_key(space), f"{BRANCH_STAMP}{coll}")).fetchone()
    return row[0] if row else None


# A lexical row live in a branch: a chunk of a file version the branch has live.
_LIVE = ("EXISTS (SELECT 1 FROM space_chunks c JOIN space_blobs sb ON sb.id = c.blob JOIN files f ON f.coll = ? "
         "AND f.path = sb.path AND f.blob_sha = sb.blob_sha WHERE c.lex = m.rowid AND f.status = 'live')")


def lexical_docs(db: sqlite3.Connection, space: str, coll: str,
                 keys: Sequence[str] | None = None) -> Iterator[tuple[str, str, str]]:
    """Every (lexical key, terms, symbol) of the space live in branch `coll` (or of those of `keys`
    live there), in key order: what its tantivy copy holds, written the same whatever order the
    rows were written in (the chunks of one key share its path, symbol and text, see
    naming.lex_key)."""
    select = ("SELECT m.id, l.terms, coalesce((SELECT c.symbol FROM space_chunks c WHERE c.lex = m.rowid LIMIT 1), "
              f"'') FROM lexmap m JOIN lexicon l ON l.rowid = m.rowid WHERE m.coll = ? AND {_LIVE}")
    if keys is None:
        yield from db.execute(f"{select} ORDER BY m.id", (space, coll))
        return
    wanted = sorted(set(keys))
    for start in range(0, len(wanted), 500):
        part = wanted[start:start + 500]
        yield from db.execute(f"{select} AND m.id IN ({','.join('?' * len(part))}) ORDER BY m.id",
                              (space, coll, *part))


def live_lex_keys(db: sqlite3.Connection, space: str, coll: str, paths: Sequence[str] | None = None) -> set[str]:
    """The lexical keys of the space live in branch `coll` (in its files of `paths`): what its
    tantivy copy holds."""
    select = ("SELECT DISTINCT m.id FROM files f JOIN space_blobs sb ON sb.space = ? AND sb.path = f.path "
              "AND sb.blob_sha = f.blob_sha JOIN space_chunks c ON c.blob = sb.id JOIN lexmap m ON m.rowid = c.lex "
              "WHERE f.coll = ? AND f.status = 'live'")
    if paths is None:
        return {key for (key,) in db.execute(select, (space, coll))}
    found: set[str] = set()
    wanted = sorted(set(paths))
    for start in range(0, len(wanted), 500):
        part = wanted[start:start + 500]
        found.update(key for (key,) in db.execute(f"{select} AND f.path IN ({','.join('?' * len(part))})",
                                                  (space, coll, *part)))
    return found
