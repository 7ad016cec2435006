"""The SQLite half of the index (the ledger): authoritative records, the embedding cache, and one
transaction per build. See the package docstring for the storage protocol and "Many branches"."""
from __future__ import annotations

import json
import os
import sqlite3
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import astuple, replace
from pathlib import Path
from typing import Any, TypeVar, cast

from codevouch.errors import BadIndex, CodevouchError
from codevouch.store import ledgerlook
from codevouch.store.indexdir import IndexDir
from codevouch.store.ledgerfile import (
    BRANCH_STAMP,
    SPACE_STAMP,
    branch_stamp,
    connect,
    lexical_docs,
    live_lex_keys,
    open_for_read,
    quote_path,
    space_stamp_key,
    sqlite_errors,
    upgrade,
)
from codevouch.store.lexindex import Copy
from codevouch.store.naming import chunk_id, collection_base, lex_key
from codevouch.store.records import BranchState, BuildChange, ChunkRecord, Committed, FileRow, NewChunk, Outdated

T = TypeVar("T")

_FILE_COLUMNS = "path, blob_sha, kind, rule, language, status, reason, chunks, last_commit, last_commit_date"
# A chunk of a space (c, with its file version sb and its text t) joined with the branch's row
# for its file (f): one ChunkRecord. _CHUNKS_OF_BRANCH joins them, membership included.
_RECORD_COLUMNS = ("sb.path, sb.blob_sha, c.ordinal, t.text_hash, c.symbol, c.start_line, c.end_line, sb.language, "
                   "sb.commit_sha, sb.commit_date, sb.indexed_at, f.kind, f.status, f.last_commit, f.last_commit_date, "
                   "c.declaration")
_CHUNKS_OF_BRANCH = ("space_blobs sb JOIN files f ON f.coll=? AND f.path=sb.path AND f.blob_sha=sb.blob_sha "
                     "JOIN space_chunks c ON c.blob=sb.id JOIN space_texts t ON t.id=c.text")


def _record(state: BranchState, row: Sequence[Any]) -> ChunkRecord:
    """The branch's view of a chunk row: its branch, its kind for the file, and for history the
    last commit of the branch that had the file (live chunks cite the branch's indexed commit)."""
    (path, blob, ordinal, text_hash, symbol, start, end, language, commit, commit_date, indexed_at,
     kind, status, last_commit, last_date, declaration) = row
    if status == "deleted":
        commit, commit_date = last_commit or commit, last_date or commit_date
    return ChunkRecord(chunk_id(path, blob, ordinal), state.repo, path, state.branch, commit, commit_date, symbol,
                       start, end, indexed_at, blob, text_hash, kind, language, status, declaration=bool(declaration))


def _state(row: Sequence[Any]) -> BranchState:
    """A `branches` row (SELECT *) as a BranchState: its sampled ancestors (m007) space-separated,
    NULL for an entry an older release built."""
    ancestors = row[-1]
    return replace(BranchState(*row[:-1]), ancestors=tuple(ancestors.split()) if ancestors else ())


def _branch_row(state: BranchState) -> tuple[Any, ...]:
    """The `branches` row of `state`, in its columns' order (the inverse of `_state`)."""
    *head, ancestors = astuple(state)
    return (*head, " ".join(ancestors))


class Ledger:
    """The SQLite half of the index: small typed reads and one transaction per build.

    `Ledger(dir)` is the writer's view: it creates the directory and the file, and applies
    pending migrations (codevouch/migrations.py). `Ledger(dir, readonly=True)` is a reader's:
    it creates nothing, raises NotIndexed when the directory holds no ledger, and upgrades
    an index of an older release in place only when its format must change.
    """

    def __init__(self, index_dir: Path, readonly: bool = False) -> None:
        self.dir = IndexDir(index_dir)
        self.path = self.dir.ledger
        self.readonly = readonly
        # A reader's small answers, kept while the file is as this look saw it (ledgerlook.py):
        # taken before the first read, so that an answer is never older than the look it is kept under.
        self.look = ledgerlook.look(self.path) if readonly else None
        self._kept = ledgerlook.kept(self.path, self.look) if self.look is not None else None
        if readonly:
            self.db = open_for_read(index_dir, self.path)
        else:
            self.dir.ensure()
            self.db = connect(self.path, f"file:{quote_path(self.path)}", index_dir)
            with sqlite_errors(index_dir):
                self.db.execute("PRAGMA journal_mode=WAL")
                self.db.execute("PRAGMA synchronous=NORMAL")
        if self._kept is None or ("upgraded",) not in self._kept:
            upgrade(self.db, index_dir, self.path, readonly)
            if self._kept is not None:
                self._kept[("upgraded",)] = True

    def close(self) -> None:
        self.db.close()

    def _answer(self, question: tuple[Any, ...], read: Callable[[], T]) -> T:
        """`read()`, kept under the reader's look for the next reader that sees the same file."""
        kept = self._kept
        if kept is None:
            return read()
        if question in kept:
            return cast(T, kept[question])
        answer = kept[question] = read()
        return answer

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield self.db
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    # -- branches ---------------------------------------------------------------
    def branch(self, coll: str) -> BranchState | None:
        def read() -> BranchState | None:
            row = self.db.execute("SELECT * FROM branches WHERE coll=?", (coll,)).fetchone()
            return _state(row) if row else None
        return self._answer(("branch", coll), read)

    def find_branch(self, repo_id: str, branch: str, clone: str,
                    holds: Callable[[Sequence[str]], bool]) -> BranchState | None:
        """The entry that answers for `branch` of repository `repo_id` in the clone whose root is
        `clone`: the clone's own entry, else the shared one (whichever clone built it: a second
        clone, or a team reader, finds the index a first one built), else the most recently built
        entry of another clone. An entry built elsewhere answers only when its indexed commit, or one
        of the ancestors its build sampled (never the root commit), is in this clone (`holds(commits)`:
        whether any is, a git fact the caller passes in): a root commit alone is no proof of one
        repository, and a fork that shares only that must not read another project's entry
        (SECURITY.md), while a clone that has not fetched the newest commits yet is served. An entry
        with no samples (an older release's, or a history too short) needs its indexed commit. The
        clone's own entry answers whatever became of its commit (rewritten and collected: the search
        says so and to rebuild)."""
        def answers(state: BranchState | None) -> bool:
            return state is not None and (state.repo == clone or holds((state.commit, *state.ancestors)))

        tried = [collection_base(repo_id, branch, clone), collection_base(repo_id, branch)]
        for key in tried:
            state = self.branch(key)
            if answers(state):
                return state
        # The others, each asked once: `holds` starts a git process.
        rows = self.db.execute("SELECT * FROM branches WHERE repo_id=? AND branch=? ORDER BY built_at DESC, coll",
                               (repo_id, branch))
        return next((s for s in (_state(r) for r in rows) if s.coll not in tried and answers(s)), None)

    def has_entries(self, repo_id: str, branch: str) -> bool:
        """Whether any entry of `branch` of a repository with the root commit `repo_id` is here,
        answering or not (the words of a refusal)."""
        return self.db.execute("SELECT 1 FROM branches WHERE repo_id=? AND branch=? LIMIT 1",
                               (repo_id, branch)).fetchone() is not None

    def branches(self) -> list[BranchState]:
        return [_state(r) for r in self.db.execute("SELECT * FROM branches ORDER BY repo, branch")]

    def repositories(self) -> tuple[str, ...]:
        """The path of every repository a branch was built from, each once, in `branches()`'s order
        (what `--all-repos` searches: 2 ms a call as BranchStates at 100 repositories)."""
        return self._answer(("repositories",), lambda: tuple(dict.fromkeys(
            row[0] for row in self.db.execute("SELECT repo FROM branches ORDER BY repo, branch"))))

    def builds(self) -> tuple[tuple[str, str, str], ...]:
        """(coll, commit, built_at) of every branch: what a build changes, read without making a
        BranchState of each (a reader's check that no build committed since it was opened, once per
        repository of a search across 100: `branches()` there cost 2 ms a repository)."""
        return self._answer(("builds",), lambda: tuple(
            self.db.execute("SELECT coll, commit_sha, built_at FROM branches ORDER BY repo, branch")))

    def outdated(self, repo_id: str, repo_path: str, branch: str) -> Outdated | None:
        """The branch as an older release laid it out, if it is listed in `outdated` (m005): found
        by the repository's id, or by its path for a branch built before ids (as status does)."""
        def read() -> Outdated | None:
            row = self.db.execute(
                "SELECT o.coll, o.layout, o.collections FROM outdated o JOIN branches b ON b.coll = o.coll "
                "WHERE b.branch=? AND (b.repo_id=? OR (b.repo_id IS NULL AND b.repo=?)) ORDER BY o.coll LIMIT 1",
                (branch, repo_id, repo_path)).fetchone()
            return Outdated(row[0], row[1], tuple(json.loads(row[2]))) if row else None
        return self._answer(("outdated", repo_id, repo_path, branch), read)

    def outdated_branches(self) -> set[str]:
        """The `coll` of every branch an older release laid out: each needs one build."""
        return {coll for (coll,) in self.db.execute("SELECT coll FROM outdated")}

    # -- files ------------------------------------------------------------------
    def files(self, coll: str) -> dict[str, FileRow]:
        rows = self.db.execute(f"SELECT {_FILE_COLUMNS} FROM files WHERE coll=?", (coll,))
        return {r[0]: FileRow(*r) for r in rows}

    # -- the shared space: chunks by content, membership through `files` ----------
    def blob_chunks(self, space: str, pairs: Iterable[tuple[str, str]]) -> dict[tuple[str, str], tuple[int, str]]:
        """(chunks, language) of each (path, blob) whose chunks the space already holds."""
        found: dict[tuple[str, str], tuple[int, str]] = {}
        for path, blob in pairs:
            row = self.db.execute("SELECT count(*), max(sb.language) FROM space_blobs sb JOIN space_chunks c "
                                  "ON c.blob=sb.id WHERE sb.space=? AND sb.path=? AND sb.blob_sha=?",
                                  (space, path, blob)).fetchone()
            if row[0]:
                found[(path, blob)] = (int(row[0]), row[1])
        return found

    def branch_members(self, state: BranchState, keys: Sequence[str], by: str = "text_hash",
                       history: bool = False) -> dict[str, list[ChunkRecord]]:
        """The branch's chunks for each of `keys` (a vector's text hash, or with by="lex_key" a
        lexical row's key): live ones, deleted too with history. One key can stand for several
        chunks (the same text in two files); each comes back as the branch sees it: its own
        path, lines, symbol, kind, and its commit for history."""
        assert by in ("text_hash", "lex_key")
        # From the keys outwards: a few dozen keys, each through its index to its chunks, their
        # file versions and the branch's row. CROSS JOIN fixes that order; left to itself SQLite
        # walked every chunk of the space and filtered by key last (60-70 ms at 100k chunks).
        first = ("space_texts t CROSS JOIN space_chunks c ON c.text=t.id" if by == "text_hash" else
                 "lexmap m CROSS JOIN space_chunks c ON c.lex=m.rowid CROSS JOIN space_texts t ON t.id=c.text")
        key, scope = ("t.text_hash", "t.space") if by == "text_hash" else ("m.id", "m.coll")
        statuses = ("live", "deleted") if history else ("live",)
        found: dict[str, list[ChunkRecord]] = {}
        for start in range(0, len(keys), 500):
            part = list(keys[start:start + 500])
            rows = self.db.execute(
                f"SELECT {key}, {_RECORD_COLUMNS} FROM {first} CROSS JOIN space_blobs sb ON sb.id=c.blob "
                "CROSS JOIN files f ON f.coll=? AND f.path=sb.path AND f.blob_sha=sb.blob_sha "
                f"WHERE {scope}=? AND {key} IN ({','.join('?' * len(part))}) "
                f"AND f.status IN ({','.join('?' * len(statuses))}) ORDER BY sb.path, c.ordinal",
                (state.coll, state.space, *part, *statuses))
            for found_key, *row in rows:     # not `key`: the next part's SQL still names that column
                found.setdefault(found_key, []).append(_record(state, row))
        return found

    def branch_chunks(self, state: BranchState) -> list[ChunkRecord]:
        """Every live chunk of the branch, by path and position."""
        rows = self.db.execute(f"SELECT {_RECORD_COLUMNS} FROM {_CHUNKS_OF_BRANCH} WHERE sb.space=? AND "
                               "f.status='live'", (state.coll, state.space))
        return sorted((_record(state, row) for row in rows), key=lambda r: (r.path, r.start_line, r.id))

    def branch_size(self, coll: str, history: bool = False) -> int:
        """How many chunks the branch holds (live, plus history when asked)."""
        statuses = "('live', 'deleted')" if history else "('live')"
        return self._answer(("branch_size", coll, history), lambda: int(self.db.execute(
            f"SELECT sum(chunks) FROM files WHERE coll=? AND status IN {statuses}", (coll,)).fetchone()[0] or 0))

    def space_size(self, space: str) -> int:
        """How many vectors the space holds: its distinct texts."""
        return self._answer(("space_size", space), lambda: int(
            self.db.execute("SELECT count(*) FROM space_texts WHERE space=?", (space,)).fetchone()[0]))

    def space_vectors(self, space: str, model: str, size: int | None = None) -> list[tuple[str, bytes]] | None:
        """(text hash, the embedding cache's vector as float32 bytes) of every text the space holds,
        by `model`, in the space's order; None when the cache lacks any of them (a vector the store
        holds that is not here). `size`: the space's size (space_size), when the caller counted it."""
        rows = [(h, v) for h, v in self.db.execute(
            "SELECT t.text_hash, e.vector FROM space_texts t JOIN embeddings e ON e.model=? AND "
            "e.text_hash=t.text_hash WHERE t.space=? ORDER BY t.text_hash", (model, space))]
        return rows if len(rows) == (self.space_size(space) if size is None else size) else None

    def space_texts(self, space: str, hashes: Iterable[str]) -> set[str]:
        """Which of the text hashes the space already holds a committed vector for."""
        return self._present("SELECT text_hash FROM space_texts WHERE space=? AND text_hash IN", space, hashes)

    def space_lex_keys(self, space: str, keys: Iterable[str]) -> set[str]:
        """Which of the lexical keys the space already holds a row for."""
        return self._present("SELECT id FROM lexmap WHERE coll=? AND id IN", space, keys)

    def _present(self, select: str, scope: str, keys: Iterable[str]) -> set[str]:
        """Which of `keys` `select` (a query ending in "IN", with one parameter before) finds."""
        wanted = list(dict.fromkeys(keys))
        found: set[str] = set()
        for start in range(0, len(wanted), 500):
            part = wanted[start:start + 500]
            found.update(k for (k,) in self.db.execute(f"{select} ({','.join('?' * len(part))})", (scope, *part)))
        return found

    def export_repository(self, repo_id: str, dest: Path) -> None:
        """Write what a search of `repo_id` needs (branches, files, chunk rows, lexical index;
        not the embedding cache) as a fresh ledger at `dest`/state.sqlite: a team snapshot."""
        Ledger(dest).close()  # the schema, by the same migrations
        target = IndexDir(dest).ledger
        db = sqlite3.connect(target, isolation_level=None)
        try:
            db.execute("ATTACH DATABASE ? AS src", (f"file:{quote_path(self.path)}?mode=ro",))
            db.execute("BEGIN")
            db.execute("INSERT INTO branches SELECT * FROM src.branches WHERE repo_id=?", (repo_id,))
            db.execute("INSERT INTO files SELECT * FROM src.files WHERE coll IN (SELECT coll FROM branches)")
            db.execute("INSERT INTO outdated SELECT * FROM src.outdated WHERE coll IN (SELECT coll FROM branches)")
            for table in ("space_blobs", "space_texts"):
                db.execute(f"INSERT INTO {table} SELECT * FROM src.{table} "
                           "WHERE space IN (SELECT space FROM branches)")
            db.execute("INSERT INTO space_chunks SELECT * FROM src.space_chunks "
                       "WHERE blob IN (SELECT id FROM space_blobs)")
            db.execute("INSERT INTO lexmap SELECT * FROM src.lexmap WHERE coll IN (SELECT space FROM branches)")
            db.execute("INSERT INTO lexicon (rowid, terms) SELECT rowid, terms FROM src.lexicon "
                       "WHERE rowid IN (SELECT rowid FROM lexmap)")
            # The spaces' and branches' lexical stamps: a reader writes its tantivy copies under them.
            db.execute("INSERT OR REPLACE INTO meta SELECT * FROM src.meta "
                       f"WHERE key IN (SELECT '{SPACE_STAMP}' || space FROM branches UNION ALL SELECT '{BRANCH_STAMP}' || coll "
                       "FROM branches)")
            # Same content, same bytes: a build that changed nothing publishes nothing new.
            db.execute("UPDATE _migrations SET applied_at = 'snapshot'")
            db.execute("COMMIT")
            db.execute("DETACH DATABASE src")
            db.execute("PRAGMA journal_mode=DELETE")  # one self-contained file
            db.execute("VACUUM")
        finally:
            db.close()

    # -- chunks -----------------------------------------------------------------
    def chunk_counts(self, coll: str, status: str = "live") -> dict[str, int]:
        """Chunks of the branch by file kind (status "deleted": its history)."""
        rows = self.db.execute(
            "SELECT kind, sum(chunks) FROM files WHERE coll=? AND status=? AND chunks > 0 GROUP BY kind",
            (coll, status))
        return {k: int(n) for k, n in rows}

    def lexical_search(self, state: BranchState, match: str, n: int) -> list[tuple[ChunkRecord, float]]:
        """(record, bm25 score, higher is better) of the branch's live chunks whose terms match, best
        first, by the FTS5 table itself: a check of the stored terms; searches rank with the
        tantivy copy only (store/lexindex.py)."""
        rows = self.db.execute(
            f"SELECT -bm25(lexicon) AS score, {_RECORD_COLUMNS} FROM lexicon JOIN lexmap m ON m.rowid = lexicon.rowid "
            "JOIN space_chunks c ON c.lex = m.rowid JOIN space_blobs sb ON sb.id = c.blob "
            "JOIN space_texts t ON t.id = c.text "
            "JOIN files f ON f.coll = ? AND f.path = sb.path AND f.blob_sha = sb.blob_sha AND f.status = 'live' "
            "WHERE lexicon MATCH ? AND m.coll = ? ORDER BY score DESC, sb.path, c.ordinal LIMIT ?",
            (state.coll, match, state.space, n))
        return [(_record(state, row), score) for score, *row in rows]

    def lexical_docs(self, space: str, coll: str, keys: Sequence[str] | None = None) -> Iterator[tuple[str, str, str]]:
        """Every (lexical key, terms, symbol) of the space live in branch `coll` (or of those of
        `keys`), in key order: its tantivy copy (lexindex.py)."""
        yield from lexical_docs(self.db, space, coll, keys)

    def live_lex_keys(self, space: str, coll: str, paths: Sequence[str] | None = None) -> set[str]:
        """The lexical keys of the space live in branch `coll` (in its files of `paths`)."""
        return live_lex_keys(self.db, space, coll, paths)

    # -- embedding cache (content-addressed, so safe to commit at any time) -------
    def cached_vectors(self, model: str, hashes: Iterable[str]) -> dict[str, list[float]]:
        wanted = list(dict.fromkeys(hashes))
        found: dict[str, list[float]] = {}
        for start in range(0, len(wanted), 500):
            part = wanted[start:start + 500]
            marks = ",".join("?" * len(part))
            for h, blob in self.db.execute(
                    f"SELECT text_hash, vector FROM embeddings WHERE model=? AND text_hash IN ({marks})",
                    (model, *part)):
                vec = array("f")
                vec.frombytes(blob)
                found[h] = vec.tolist()
        return found

    def cached_hashes(self, model: str, hashes: Iterable[str]) -> set[str]:
        """Which text hashes already have a vector (without loading the vectors)."""
        return self._present("SELECT text_hash FROM embeddings WHERE model=? AND text_hash IN", model, hashes)

    def put_vectors(self, model: str, vectors: dict[str, Sequence[float]]) -> None:
        with self.transaction() as db:
            db.executemany("INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?)",
                           [(model, h, array("f", v).tobytes()) for h, v in vectors.items()])

    # -- one build, made visible at once -----------------------------------------------
    def lexical_stamp(self, space: str) -> str | None:
        """A token that changes with every commit that changes the space's lexical rows."""
        def read() -> str | None:
            row = self.db.execute("SELECT value FROM meta WHERE key=?", (space_stamp_key(space),)).fetchone()
            return row[0] if row else None
        return self._answer(("lexical_stamp", space), read)

    def branch_stamp(self, state: BranchState) -> str | None:
        """A token that changes with every commit of the branch: what its tantivy copy, the
        branch's live lexical documents, is named and stamped after (lexindex.py)."""
        space = state.space
        return self._answer(("branch_stamp", state.coll, space), lambda: branch_stamp(self.db, state.coll, space)
                            if space is not None else None)

    def copy_of(self, state: BranchState) -> Copy | None:
        """The branch's tantivy copy as the ledger names it now (None: no space or no stamp)."""
        stamp = self.branch_stamp(state)
        return Copy(state.space, state.coll, stamp) if state.space is not None and stamp is not None else None

    def commit(self, change: BuildChange,
               before_commit: Callable[[list[str], str], None] | None = None) -> Committed:
        """One transaction: after it, readers see the build's state; before it, the old one.

        `before_commit(removed lexical keys, new lexical stamp)` runs inside the transaction, just before
        COMMIT, and sees the new state through this connection: what must be complete when the
        state becomes visible (the tantivy copy, lexindex.py) is written there."""
        state = change.state
        base, space = state.coll, state.space
        if space is None:     # a build always writes the shared space; None is an older release's branch
            raise BadIndex(f"branch {state.branch} has no vector space to commit into; "
                           "rebuild with `codevouch index build`.")
        with self.transaction() as db:
            previous = db.execute("SELECT space FROM branches WHERE coll=?", (base,)).fetchone()
            _put_lexical(db, space, change.lexical)
            _put_chunks(db, space, change.chunks)
            db.executemany(f"INSERT OR REPLACE INTO files (coll, {_FILE_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                           [(base, *astuple(r)) for r in change.files])
            gone_at = change.gone_at or (None, None)
            db.executemany("UPDATE files SET status='deleted', last_commit=?, last_commit_date=? "
                           "WHERE coll=? AND path=?", [(*gone_at, base, p) for p in change.deleted_paths])
            db.executemany("DELETE FROM files WHERE coll=? AND path=?", [(base, p) for p in change.dropped_paths])
            db.execute("INSERT OR REPLACE INTO branches VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", _branch_row(state))
            dropped = _drop_outdated(db, change.outdated, base) if change.outdated else []
            removed = collect_unreferenced(db, space)
            old = previous[0] if previous else None
            if old is not None and old != space:
                # The branch left a space (another model, another embedded text, an older layout).
                if db.execute("SELECT 1 FROM branches WHERE space=? LIMIT 1", (old,)).fetchone():
                    collect_unreferenced(db, old)
                else:
                    dropped.append(drop_space(db, old))
            stamp = f"{state.commit} {state.built_at} {os.urandom(4).hex()}"
            db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)",
                           [(space_stamp_key(space), stamp), (f"{BRANCH_STAMP}{base}", stamp)])
            if before_commit is not None:
                before_commit(removed, stamp)
        return Committed(dropped, removed, stamp)

    def builder_id(self) -> str:
        """This index directory's id as a builder (codevouch/lease.py), made on first use; a team
        snapshot does not carry it (export_repository copies no `meta`)."""
        row = self.db.execute("SELECT value FROM meta WHERE key='builder-id'").fetchone()
        if row is None:
            with self.transaction() as db:
                db.execute("INSERT OR IGNORE INTO meta VALUES ('builder-id', ?)", (os.urandom(16).hex(),))
            row = self.db.execute("SELECT value FROM meta WHERE key='builder-id'").fetchone()
        return str(row[0])

    # -- pending vector ids --------------------------------------------------------
    def add_pending(self, items: Iterable[tuple[str, str]]) -> None:
        with self.transaction() as db:
            _add_pending(db, items)

    def pending(self) -> list[tuple[str, str]]:
        return list(self.db.execute("SELECT collection, id FROM pending"))

    def pending_count(self) -> int:
        return self._answer(("pending_count",), lambda: int(self.db.execute("SELECT count(*) FROM pending").fetchone()[0]))

    def clear_pending(self, items: Iterable[tuple[str, str]]) -> None:
        with self.transaction() as db:
            db.executemany("DELETE FROM pending WHERE collection=? AND id=?", list(items))


def models_in_use(index_dir: Path) -> frozenset[str]:
    """The models the local ledger's branches were built with; empty when it cannot tell (no
    ledger, unreadable, busy). Read as is, never upgraded: a hint for a search, which opens the
    ledger properly right after (see retriever.queryencoder.held)."""
    try:
        db = open_for_read(index_dir, IndexDir(index_dir).ledger)
    except CodevouchError:
        return frozenset()
    try:
        return frozenset(name for (name,) in db.execute("SELECT DISTINCT embedder FROM branches"))
    except sqlite3.Error:
        return frozenset()
    finally:
        db.close()


def _add_pending(db: sqlite3.Connection, items: Iterable[tuple[str, str]]) -> None:
    db.executemany("INSERT OR IGNORE INTO pending VALUES (?, ?)", list(items))


def _put_chunks(db: sqlite3.Connection, space: str, chunks: Iterable[NewChunk]) -> None:
    """Chunk rows, each pointing at its file version, its text (vector) and its lexical row,
    which are stored once per space however many chunks share them."""
    def row_id(select: str, insert: str, args: tuple[Any, ...]) -> int:
        row = db.execute(select, args[:3]).fetchone()
        return int(row[0]) if row else int(db.execute(insert, args).lastrowid or 0)

    for c in chunks:
        r = c.record
        blob = row_id("SELECT id FROM space_blobs WHERE space=? AND path=? AND blob_sha=?",
                      "INSERT INTO space_blobs (space, path, blob_sha, language, commit_sha, commit_date, indexed_at) "
                      "VALUES (?,?,?,?,?,?,?)",
                      (space, r.path, r.blob_sha, r.language, r.commit, r.commit_date, r.indexed_at))
        text = row_id("SELECT id FROM space_texts WHERE space=? AND text_hash=?",
                      "INSERT INTO space_texts (space, text_hash) VALUES (?,?)", (space, r.text_hash))
        lex = db.execute("SELECT rowid FROM lexmap WHERE coll=? AND id=?",
                         (space, lex_key(r.path, r.symbol, r.text_hash))).fetchone()
        if lex is None:
            raise BadIndex(f"chunk {r.path}#{c.ordinal} has no lexical row in {space}; "
                           "rebuild with `codevouch index build`.")
        db.execute("INSERT OR IGNORE INTO space_chunks VALUES (?,?,?,?,?,?,?,?)",
                   (blob, c.ordinal, text, lex[0], r.symbol, r.start_line, r.end_line, int(r.declaration)))


def collect_unreferenced(db: sqlite3.Connection, space: str) -> list[str]:
    """File versions of `space` that no branch's file row references any more: their chunk rows
    go now; a text (vector) or lexical row no remaining chunk uses goes too, its vector (listed
    in `pending`) once this transaction has made it invisible. Returns the lexical keys removed."""
    blobs = [b for (b,) in db.execute(
        "SELECT sb.id FROM space_blobs sb WHERE sb.space=? AND NOT EXISTS (SELECT 1 FROM branches b "
        "JOIN files f ON f.coll = b.coll AND f.path = sb.path WHERE b.space = sb.space "
        "AND f.blob_sha = sb.blob_sha AND f.status IN ('live', 'deleted'))", (space,))]
    texts: set[int] = set()
    lexes: set[int] = set()
    for blob in blobs:
        for text, lex in db.execute("SELECT text, lex FROM space_chunks WHERE blob=?", (blob,)):
            texts.add(text)
            lexes.add(lex)
        db.execute("DELETE FROM space_chunks WHERE blob=?", (blob,))
        db.execute("DELETE FROM space_blobs WHERE id=?", (blob,))
    dead_texts = [t for t in texts
                  if not db.execute("SELECT 1 FROM space_chunks WHERE text=? LIMIT 1", (t,)).fetchone()]
    dead_lex = [x for x in lexes if not db.execute("SELECT 1 FROM space_chunks WHERE lex=? LIMIT 1", (x,)).fetchone()]
    hashes = [h for t in dead_texts for (h,) in db.execute("SELECT text_hash FROM space_texts WHERE id=?", (t,))]
    _add_pending(db, [(space, h) for h in hashes])
    db.executemany("DELETE FROM space_texts WHERE id=?", [(t,) for t in dead_texts])
    keys = [k for x in dead_lex for (k,) in db.execute("SELECT id FROM lexmap WHERE rowid=?", (x,))]
    _drop_lexical(db, space, keys)
    return sorted(keys)


def drop_space(db: sqlite3.Connection, space: str) -> str:
    """Forget a space no branch uses any more, all at once; its name, to drop its collection."""
    db.execute("DELETE FROM lexicon WHERE rowid IN (SELECT rowid FROM lexmap WHERE coll=?)", (space,))
    db.execute("DELETE FROM space_chunks WHERE blob IN (SELECT id FROM space_blobs WHERE space=?)", (space,))
    for sql in ("DELETE FROM lexmap WHERE coll=?", "DELETE FROM space_blobs WHERE space=?",
                "DELETE FROM space_texts WHERE space=?", "DELETE FROM pending WHERE collection=?"):
        db.execute(sql, (space,))
    db.execute("DELETE FROM meta WHERE key=?", (space_stamp_key(space),))
    return space


def _drop_outdated(db: sqlite3.Connection, outdated: Outdated, coll: str) -> list[str]:
    """Forget how an older release laid out the branch now committed as `coll`: its row when it
    had another key (the repository's path), and the collections only it used, to drop now."""
    db.execute("DELETE FROM outdated WHERE coll=?", (outdated.coll,))
    if outdated.coll != coll:
        db.execute("DELETE FROM files WHERE coll=?", (outdated.coll,))
        db.execute("DELETE FROM branches WHERE coll=?", (outdated.coll,))
        db.execute("DELETE FROM meta WHERE key=?", (f"{BRANCH_STAMP}{outdated.coll}",))
    return list(outdated.collections)


def _put_lexical(db: sqlite3.Connection, coll: str, docs: Iterable[tuple[str, str]]) -> None:
    for cid, terms in docs:
        cur = db.execute("INSERT OR IGNORE INTO lexmap (coll, id) VALUES (?, ?)", (coll, cid))
        if cur.rowcount:
            db.execute("INSERT INTO lexicon (rowid, terms) VALUES (?, ?)", (cur.lastrowid, terms))


def _drop_lexical(db: sqlite3.Connection, coll: str, ids: Iterable[str]) -> None:
    for cid in ids:
        row = db.execute("SELECT rowid FROM lexmap WHERE coll=? AND id=?", (coll, cid)).fetchone()
        if row:
            db.execute("DELETE FROM lexicon WHERE rowid=?", row)
            db.execute("DELETE FROM lexmap WHERE rowid=?", row)
