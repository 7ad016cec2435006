"""Ordered migrations of the ledger (`state.sqlite`): an index upgrades in place, never rebuilds.

Each migration is a function registered with `@migration`, applied once, in the order of
this file, inside its own transaction together with the row in `_migrations` that records
it. A build or a read of an index made by an older release applies what it lacks; an
index that carries a migration this release does not know was written by a newer release
and is refused, because this code cannot know what that migration changed.

Rules for whoever changes the schema (other modules too, e.g. the usage records):
  - add a new function at the end of this file; never edit, reorder or remove a shipped one;
  - a migration must be correct on any index that has all earlier migrations applied;
  - never force a rebuild: move or derive the data in SQL (or Python) here instead.

The first release (before this framework) stored `meta.schema = 1` and had no `_migrations`
table; `m001_initial` is written so it is a no-op on such an index, which is how the first
release's indexes open here.
"""
from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone

MigrationFn = Callable[[sqlite3.Connection], None]


@dataclass(frozen=True)
class Migration:
    name: str
    fn: MigrationFn


MIGRATIONS: list[Migration] = []


def migration(fn: MigrationFn) -> MigrationFn:
    """Register `fn` as the next migration (its function name is its permanent id)."""
    if any(m.name == fn.__name__ for m in MIGRATIONS):
        raise ValueError(f"duplicate migration {fn.__name__}")
    MIGRATIONS.append(Migration(fn.__name__, fn))
    return fn


class UnknownMigrations(Exception):
    """The ledger carries migrations this release does not know: it was written by a newer one."""

    def __init__(self, names: list[str]) -> None:
        super().__init__(", ".join(names))
        self.names = names


def _has_table(db: sqlite3.Connection, name: str) -> bool:
    return db.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (name,)).fetchone() is not None


def applied(db: sqlite3.Connection) -> list[str]:
    if not _has_table(db, "_migrations"):
        return []
    return [n for (n,) in db.execute("SELECT name FROM _migrations ORDER BY rowid")]


def pending(db: sqlite3.Connection) -> list[Migration]:
    """The migrations `db` lacks, in order; UnknownMigrations when it has some we do not know."""
    done = applied(db)
    known = {m.name for m in MIGRATIONS}
    unknown = [n for n in done if n not in known]
    if unknown:
        raise UnknownMigrations(unknown)
    return [m for m in MIGRATIONS if m.name not in done]


def migrate(db: sqlite3.Connection) -> list[str]:
    """Apply every pending migration, each in one transaction with its record; the names applied.

    `db` must be in autocommit mode (isolation_level=None) and held by the index's only writer.
    """
    todo = pending(db)
    if todo:
        db.execute("CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
    for m in todo:
        db.execute("BEGIN IMMEDIATE")
        try:
            # Another process may have applied it while we waited for the write lock.
            if db.execute("SELECT 1 FROM _migrations WHERE name=?", (m.name,)).fetchone():
                db.execute("ROLLBACK")
                continue
            m.fn(db)
            db.execute("INSERT INTO _migrations VALUES (?, ?)",
                       (m.name, datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")))
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")
    return [m.name for m in todo]


def _script(db: sqlite3.Connection, sql: str) -> None:
    # executescript() would COMMIT the migration's transaction; run statement by statement.
    for stmt in sql.split(";"):
        if stmt.strip():
            db.execute(stmt)


# --- the migrations, oldest first: append only ------------------------------------------------

@migration
def m001_initial(db: sqlite3.Connection) -> None:
    """The first release's schema (IF NOT EXISTS: a no-op on an index that release built)."""
    _script(db, """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS branches (
    coll TEXT PRIMARY KEY, repo TEXT NOT NULL, branch TEXT NOT NULL, commit_sha TEXT NOT NULL,
    commit_date TEXT NOT NULL, built_at TEXT NOT NULL, embedder TEXT NOT NULL, rules_json TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    coll TEXT NOT NULL, path TEXT NOT NULL, blob_sha TEXT NOT NULL, kind TEXT NOT NULL, rule TEXT,
    language TEXT NOT NULL, status TEXT NOT NULL, reason TEXT, chunks INTEGER NOT NULL,
    PRIMARY KEY (coll, path));
CREATE TABLE IF NOT EXISTS chunks (
    coll TEXT NOT NULL, id TEXT NOT NULL, record TEXT NOT NULL, path TEXT NOT NULL, status TEXT NOT NULL,
    PRIMARY KEY (coll, id));
CREATE INDEX IF NOT EXISTS chunks_by_path ON chunks (coll, path);
CREATE TABLE IF NOT EXISTS embeddings (
    model TEXT NOT NULL, text_hash TEXT NOT NULL, vector BLOB NOT NULL, PRIMARY KEY (model, text_hash));
CREATE TABLE IF NOT EXISTS pending (collection TEXT NOT NULL, id TEXT NOT NULL, PRIMARY KEY (collection, id));
CREATE VIRTUAL TABLE IF NOT EXISTS lexicon USING fts5(terms, tokenize='porter unicode61');
CREATE TABLE IF NOT EXISTS lexmap (rowid INTEGER PRIMARY KEY, coll TEXT NOT NULL, id TEXT NOT NULL,
    UNIQUE (coll, id));
""")


@migration
def m002_migrations_table_guards_old_releases(db: sqlite3.Connection) -> None:
    """The first release refuses any `meta.schema` other than 1 with a clear message; raising
    it to 2 keeps that release from writing an index whose format it no longer knows."""
    db.execute("INSERT OR REPLACE INTO meta VALUES ('schema', '2')")


@migration
def m003_shared_vectors_and_repository_identity(db: sqlite3.Connection) -> None:
    """Branches of a repository share one content-addressed vector space (`shared_chunks`,
    one Chroma collection per repository and model); a branch's membership is its `files`
    rows. Repositories are keyed by their root commit (`repo_id`), the path kept as a tag.

    Vectors cannot move between Chroma collections from here (a migration touches the ledger
    only, and readers run it), so branches built before this step keep `space` NULL: searches
    tell the user to run `index build` once, which re-reads the files, takes every vector from
    the embedding cache (nothing is re-embedded) and removes the old per-branch collections.
    """
    _script(db, """
ALTER TABLE branches ADD COLUMN repo_id TEXT;
ALTER TABLE branches ADD COLUMN remote TEXT;
ALTER TABLE branches ADD COLUMN space TEXT;
ALTER TABLE files ADD COLUMN last_commit TEXT;
ALTER TABLE files ADD COLUMN last_commit_date TEXT;
CREATE TABLE shared_chunks (
    space TEXT NOT NULL, id TEXT NOT NULL, path TEXT NOT NULL, blob_sha TEXT NOT NULL, record TEXT NOT NULL,
    PRIMARY KEY (space, id));
CREATE INDEX shared_chunks_by_blob ON shared_chunks (space, path, blob_sha);
CREATE INDEX files_by_blob ON files (path, blob_sha);
""")


@migration
def m004_vectors_keyed_by_text(db: sqlite3.Connection) -> None:
    """A space stores each distinct text's vector once, keyed by the text's hash, and each
    lexical row once per (path, symbol, text); a chunk row is small and points at them
    (`space_blobs`: one row per file version, `space_texts`: one per vector, `space_chunks`).
    Before, a branch that changed one line of a big file stored all of that file's chunks,
    vectors and lexical rows again. The `files` rows (a branch's membership, the one part that
    grows with every branch) are stored once, by their key, instead of twice (a rowid table
    plus its key index); garbage collection finds them by that key, so `files_by_blob` goes.

    As with m003, vectors cannot move from here: branches of a space keyed the old way (chunk
    ids, spaces named `…-vec`) keep their rows and read as needing a build, which moves them
    to the new space with every vector from the embedding cache (nothing is re-embedded) and
    drops the old space's rows and collection when its last branch has moved.
    """
    _script(db, """
CREATE TABLE space_blobs (
    id INTEGER PRIMARY KEY, space TEXT NOT NULL, path TEXT NOT NULL, blob_sha TEXT NOT NULL,
    language TEXT NOT NULL, commit_sha TEXT NOT NULL, commit_date TEXT NOT NULL, indexed_at TEXT NOT NULL,
    UNIQUE (space, path, blob_sha));
CREATE TABLE space_texts (id INTEGER PRIMARY KEY, space TEXT NOT NULL, text_hash TEXT NOT NULL,
    UNIQUE (space, text_hash));
CREATE TABLE space_chunks (
    blob INTEGER NOT NULL, ordinal INTEGER NOT NULL, text INTEGER NOT NULL, lex INTEGER NOT NULL,
    symbol TEXT NOT NULL, start_line INTEGER NOT NULL, end_line INTEGER NOT NULL,
    PRIMARY KEY (blob, ordinal)) WITHOUT ROWID;
CREATE INDEX space_chunks_by_text ON space_chunks (text);
CREATE INDEX space_chunks_by_lex ON space_chunks (lex);
DROP INDEX files_by_blob;
CREATE TABLE files_by_key (
    coll TEXT NOT NULL, path TEXT NOT NULL, blob_sha TEXT NOT NULL, kind TEXT NOT NULL, rule TEXT,
    language TEXT NOT NULL, status TEXT NOT NULL, reason TEXT, chunks INTEGER NOT NULL,
    last_commit TEXT, last_commit_date TEXT, PRIMARY KEY (coll, path)) WITHOUT ROWID;
INSERT INTO files_by_key SELECT coll, path, blob_sha, kind, rule, language, status, reason, chunks,
    last_commit, last_commit_date FROM files;
DROP TABLE files;
ALTER TABLE files_by_key RENAME TO files
""")


@migration
def m005_older_layouts_become_data(db: sqlite3.Connection) -> None:
    """The branches an older release laid out are listed in `outdated`, with what their next
    build removes, and the rows only those layouts had go; from here on no code reads an older
    layout (status, search and build ask `outdated`).

    Two layouts are left by m003 and m004, which could not move vectors between Chroma
    collections: `per-branch` (before m003: a branch keyed by its repository's path, its vectors
    and chunk rows in collections `<coll>-live` and `<coll>-hist`, rows in `chunks`) and
    `per-chunk` (m003: a space named `…-vec` with a vector per chunk id, rows in `shared_chunks`).
    Their vectors and chunk rows are never read again: a search of such a branch says to run
    `codevouch index build` once, which re-reads its files and drops the branch's old rows and
    collections (a `per-chunk` space goes with the last branch that leaves it). So the chunk rows,
    their lexical rows, stamps and pending ids go here, and the two tables with them; the branch
    and file rows stay, for `index status` and for the build that moves the branch.
    """
    db.execute("CREATE TABLE outdated (coll TEXT PRIMARY KEY, layout TEXT NOT NULL, collections TEXT NOT NULL)")
    names: list[str] = []
    rows = db.execute("SELECT coll, space FROM branches WHERE space IS NULL OR space NOT LIKE '%-txt'").fetchall()
    for coll, space in rows:
        if space is None:
            own = [f"{coll}-live", f"{coll}-hist"]
            db.execute("INSERT INTO outdated VALUES (?, 'per-branch', ?)", (coll, json.dumps(own)))
            names += own
        else:
            # The space is shared by its branches: dropped when the last one leaves it, as any space.
            db.execute("INSERT INTO outdated VALUES (?, 'per-chunk', '[]')", (coll,))
            names.append(space)
    for name in dict.fromkeys(names):
        db.execute("DELETE FROM lexicon WHERE rowid IN (SELECT rowid FROM lexmap WHERE coll=?)", (name,))
        db.execute("DELETE FROM lexmap WHERE coll=?", (name,))
        db.execute("DELETE FROM pending WHERE collection=?", (name,))
        db.execute("DELETE FROM meta WHERE key=?", (f"lexical:{name}",))
    db.execute("DROP TABLE chunks")
    db.execute("DROP TABLE shared_chunks")


LEXICAL_COPIES = "m006_every_space_has_a_lexical_stamp"


@migration
def m006_every_space_has_a_lexical_stamp(db: sqlite3.Connection) -> None:
    """Every space a branch searches has a lexical stamp (`meta` `lexical:<space>`), the state its
    tantivy copy is named and stamped after (store/lexindex.py): searches rank with that copy only,
    never with the ledger's FTS5 table, which stays the store of the terms. A release before the
    copy stamped nothing. The copies themselves are files beside the ledger: the upgrade that
    applies this step writes them from the FTS5 rows (ledgerfile.upgrade, LEXICAL_COPIES)."""
    rows = db.execute("SELECT DISTINCT space FROM branches WHERE space IS NOT NULL "
                      "AND coll NOT IN (SELECT coll FROM outdated)").fetchall()
    for (space,) in rows:
        db.execute("INSERT OR IGNORE INTO meta VALUES (?, ?)",
                   (f"lexical:{space}", f"m006 {datetime.now(timezone.utc).isoformat()} {os.urandom(4).hex()}"))


@migration
def m007_branches_keep_sampled_ancestors(db: sqlite3.Connection) -> None:
    """Each branch entry keeps a few commits of the history that led to its indexed commit
    (`ancestors`: ids 1, 2, 4, ... 1024 first-parent steps back, space-separated, never the root
    commit), so that a clone that has not fetched the indexed commit yet, but holds one of them,
    is answered from an entry built elsewhere, and a fork that shares only the root commit is
    not. Entries built before keep NULL: they answer, as before, only a clone that holds their
    indexed commit, until their next build samples them."""
    db.execute("ALTER TABLE branches ADD COLUMN ancestors TEXT")


@migration
def m008_chunks_say_whether_they_only_declare(db: sqlite3.Connection) -> None:
    """Each chunk row says whether its code only declares (`declaration`: a TypeScript interface,
    type alias or overload signature, indexer/chunker.Chunk.declaration), so that a sentence ranks
    it after the bodies that do what it asks. Rows indexed before say 0, as every chunk ranked
    then; a file's chunks say it from the build that next reads the file."""
    db.execute("ALTER TABLE space_chunks ADD COLUMN declaration INTEGER NOT NULL DEFAULT 0")
