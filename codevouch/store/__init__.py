"""The index on disk: a SQLite ledger (authoritative records, embedding cache) beside Chroma.

Layout of an index directory:
    state.sqlite   branches, files, chunks, the embedding cache, pending vector ids; its format
                   changes only by the ordered steps of codevouch/migrations.py (never a rebuild)
    chroma/        embedded Chroma: per (repository, embedding model) one collection of vectors,
                   keyed by text hash and shared by every branch (see "Many branches")
    write.lock     one writer at a time
    vectors.lock   a build's write batches to chroma/ versus readers (see VectorStore)
With CODEVOUCH_CHROMA_URL=http://HOST:PORT the vectors live on a Chroma server (`chroma run`)
instead of chroma/; the ledger stays in the index directory.

Why two stores: Chroma has no transactions, SQLite has. Vectors are written to Chroma
first, under ids that the ledger does not know yet, so readers ignore them; one SQLite
transaction then makes the new state visible at once; obsolete vectors are removed last.
A build killed at any moment therefore leaves the previous state readable, and ids it
left behind are listed in `pending` so the next build removes what was never committed.
Chunk text is not stored: it is read back from git by blob id (Chroma is ~5x larger
with documents, and git already has the bytes).

Many branches: a chunk's identity is its content (path, blob id, position), so the branches
of a repository that share a file version share its chunk rows, stored once per repository
("space": `space_blobs` per file version, `space_chunks` per chunk). Vectors go one level
further: one per distinct embedded text (`space_texts`, Chroma id = the text's hash), and one
lexical row per distinct (path, symbol, text), so a branch that edits one function of a big
file adds that function's vector and terms, not the file's. A branch is its `files` rows: a
chunk belongs to the branch when the branch's row for the chunk's path carries the chunk's
blob (live), or carried it when the file left the branch (history); a vector or lexical hit
comes back as each of the branch's chunks with that text, with the branch's own path, lines,
symbol and commit. Searches ask the shared collection for more neighbours (in proportion to
the branch's share of it) and keep the branch's members, with no Chroma `where` filter
(100-350 ms at 100k vectors). A file version no branch references any more is garbage: its
rows go in the build's transaction, with the texts and lexical rows no other chunk uses;
their vectors after it.
"""
from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, astuple, dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from codevouch import embedding
from codevouch.errors import BadIndex, CodevouchError, IndexBusy, IndexLocked, NotIndexed, StoreUnavailable

CHROMA_BATCH = 4000  # under Chroma's max batch (5461 here)


def server_url() -> str | None:
    """CODEVOUCH_CHROMA_URL when set: vectors (and team snapshots) live on that server."""
    return os.environ.get("CODEVOUCH_CHROMA_URL") or None


def default_index_dir() -> Path:
    """--index, else $CODEVOUCH_INDEX, else $XDG_DATA_HOME/codevouch (~/.local/share/codevouch)."""
    env = os.environ.get("CODEVOUCH_INDEX")
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base).expanduser() / "codevouch"


def collection_base(repo: str, branch: str) -> str:
    # Chroma names allow [A-Za-z0-9._-] only; the hash keeps any branch name legal and unique.
    digest = hashlib.sha1(f"{repo}\0{branch}".encode()).hexdigest()[:20]
    return f"cv-{digest}"


# A space's vectors are keyed by the embedded text's hash (m004). Spaces of the release before
# (suffix "-vec") keyed them by chunk id; a branch still in one is moved by its next build.
SPACE_SUFFIX = "-txt"


def space_name(repo_id: str, embedder: str, context: str | None = embedding.DEFAULT_EMBED_CONTEXT) -> str:
    """The collection that holds a repository's vectors for one model, shared by its branches.
    What the model embeds (`context`, the build's Settings.embed_context; see
    codevouch/indexer/embedtext.py) is part of it: a branch embedded another way is in another
    space, which its next build leaves, as for another model."""
    form = f"\0{context}" if context is not None else ""  # None: the text alone, the older name
    digest = hashlib.sha1(f"{repo_id}\0{embedder}{form}".encode()).hexdigest()[:20]
    return f"cv-{digest}{SPACE_SUFFIX}"


def chunk_id(path: str, blob_sha: str, ordinal: int) -> str:
    """Same path, same blob, same position: same chunk. Content decides identity."""
    return hashlib.sha1(f"{path}\0{blob_sha}\0{ordinal}".encode("utf-8", "surrogateescape")).hexdigest()


def lex_key(path: str, symbol: str, text_hash: str) -> str:
    """The key of a chunk's lexical document, which is made of its path, symbol and text
    (codevouch.store.lexical.document): chunks that agree on all three share one row."""
    return hashlib.sha1(f"{path}\0{symbol}\0{text_hash}".encode("utf-8", "surrogateescape")).hexdigest()


@dataclass(frozen=True)
class ChunkRecord:
    """One indexed chunk: the six provenance fields plus kind, language and status."""
    id: str
    repo: str
    path: str
    branch: str
    commit: str
    commit_date: str
    symbol: str
    start_line: int
    end_line: int
    indexed_at: str
    blob_sha: str
    text_hash: str
    kind: str
    language: str
    status: str  # live | deleted

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> ChunkRecord:
        return cls(**json.loads(text))


@dataclass(frozen=True)
class FileRow:
    path: str
    blob_sha: str
    kind: str
    rule: str | None
    language: str
    status: str          # live | deleted | skipped | excluded
    reason: str | None   # why skipped/excluded
    chunks: int
    last_commit: str | None = None       # deleted files: the last commit of the branch that had it
    last_commit_date: str | None = None


@dataclass(frozen=True)
class BranchState:
    coll: str
    repo: str
    branch: str
    commit: str
    commit_date: str
    built_at: str
    embedder: str
    rules_json: str
    repo_id: str | None = None   # root commit; None for a branch built before shared vectors
    remote: str | None = None    # a label for people
    space: str | None = None     # the shared vector collection; None: built by an older release

    @property
    def legacy(self) -> bool:
        """Built by an older release: its next build moves it."""
        return self.space is None or not self.space.endswith(SPACE_SUFFIX)


_FILE_COLUMNS = "path, blob_sha, kind, rule, language, status, reason, chunks, last_commit, last_commit_date"
# A chunk of a space (c, with its file version sb and its text t) joined with the branch's row
# for its file (f): one ChunkRecord. _CHUNKS_OF_BRANCH joins them, membership included.
_RECORD_COLUMNS = ("sb.path, sb.blob_sha, c.ordinal, t.text_hash, c.symbol, c.start_line, c.end_line, sb.language, "
                   "sb.commit_sha, sb.commit_date, sb.indexed_at, f.kind, f.status, f.last_commit, f.last_commit_date")
_CHUNKS_OF_BRANCH = ("space_blobs sb JOIN files f ON f.coll=? AND f.path=sb.path AND f.blob_sha=sb.blob_sha "
                     "JOIN space_chunks c ON c.blob=sb.id JOIN space_texts t ON t.id=c.text")


def _record(state: BranchState, row: Sequence[Any]) -> ChunkRecord:
    """The branch's view of a chunk row: its branch, its kind for the file, and for history the
    last commit of the branch that had the file (live chunks cite the branch's indexed commit)."""
    (path, blob, ordinal, text_hash, symbol, start, end, language, commit, commit_date, indexed_at,
     kind, status, last_commit, last_date) = row
    if status == "deleted":
        commit, commit_date = last_commit or commit, last_date or commit_date
    return ChunkRecord(chunk_id(path, blob, ordinal), state.repo, path, state.branch, commit, commit_date, symbol,
                       start, end, indexed_at, blob, text_hash, kind, language, status)


@dataclass(frozen=True)
class NewChunk:
    """A chunk new to its space, as the build made it: its position in the file and its record."""
    ordinal: int
    record: ChunkRecord


class Ledger:
    """The SQLite half of the index: small typed reads and one transaction per build.

    `Ledger(dir)` is the writer's view: it creates the directory and the file, and applies
    pending migrations (codevouch/migrations.py). `Ledger(dir, readonly=True)` is a reader's:
    it creates nothing, raises NotIndexed when the directory holds no ledger, and upgrades
    an index of an older release in place only when its format must change.
    """

    def __init__(self, index_dir: Path, readonly: bool = False) -> None:
        self.path = index_dir / "state.sqlite"
        self.readonly = readonly
        if readonly:
            self.db = _open_for_read(index_dir, self.path)
        else:
            ensure_index_dir(index_dir)
            self.db = _connect(self.path, f"file:{_quote(self.path)}", index_dir)
            with _sqlite_errors(index_dir):
                self.db.execute("PRAGMA journal_mode=WAL")
                self.db.execute("PRAGMA synchronous=NORMAL")
        _upgrade(self.db, index_dir, self.path, readonly)

    def close(self) -> None:
        self.db.close()

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
        row = self.db.execute("SELECT * FROM branches WHERE coll=?", (coll,)).fetchone()
        return BranchState(*row) if row else None

    def branches(self) -> list[BranchState]:
        return [BranchState(*r) for r in self.db.execute("SELECT * FROM branches ORDER BY repo, branch")]

    def legacy_branch(self, repo_path: str, branch: str) -> BranchState | None:
        """The branch as an older release built it (keyed by path, vectors per branch), if any."""
        row = self.db.execute("SELECT * FROM branches WHERE space IS NULL AND repo=? AND branch=?",
                              (repo_path, branch)).fetchone()
        return BranchState(*row) if row else None

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
            for key, *row in rows:
                found.setdefault(key, []).append(_record(state, row))
        return found

    def branch_chunks(self, state: BranchState) -> list[ChunkRecord]:
        """Every live chunk of the branch, by path and position."""
        rows = self.db.execute(f"SELECT {_RECORD_COLUMNS} FROM {_CHUNKS_OF_BRANCH} WHERE sb.space=? AND "
                               "f.status='live'", (state.coll, state.space))
        return sorted((_record(state, row) for row in rows), key=lambda r: (r.path, r.start_line, r.id))

    def branch_size(self, coll: str, history: bool = False) -> int:
        """How many chunks the branch holds (live, plus history when asked)."""
        statuses = "('live', 'deleted')" if history else "('live')"
        row = self.db.execute(f"SELECT sum(chunks) FROM files WHERE coll=? AND status IN {statuses}", (coll,))
        return int(row.fetchone()[0] or 0)

    def space_size(self, space: str) -> int:
        """How many vectors the space holds: its distinct texts."""
        return int(self.db.execute("SELECT count(*) FROM space_texts WHERE space=?", (space,)).fetchone()[0])

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
        target = dest / "state.sqlite"
        db = sqlite3.connect(target, isolation_level=None)
        try:
            db.execute("ATTACH DATABASE ? AS src", (f"file:{_quote(self.path)}?mode=ro",))
            db.execute("BEGIN")
            db.execute("INSERT INTO branches SELECT * FROM src.branches WHERE repo_id=?", (repo_id,))
            db.execute("INSERT INTO files SELECT * FROM src.files WHERE coll IN (SELECT coll FROM branches)")
            for table in ("shared_chunks", "space_blobs", "space_texts"):
                db.execute(f"INSERT INTO {table} SELECT * FROM src.{table} "
                           "WHERE space IN (SELECT space FROM branches)")
            db.execute("INSERT INTO space_chunks SELECT * FROM src.space_chunks WHERE blob IN (SELECT id FROM space_blobs)")
            db.execute("INSERT INTO lexmap SELECT * FROM src.lexmap WHERE coll IN (SELECT space FROM branches)")
            db.execute("INSERT INTO lexicon (rowid, terms) SELECT rowid, terms FROM src.lexicon "
                       "WHERE rowid IN (SELECT rowid FROM lexmap)")
            # Same content, same bytes: a build that changed nothing publishes nothing new.
            db.execute("UPDATE _migrations SET applied_at = 'snapshot'")
            db.execute("COMMIT")
            db.execute("DETACH DATABASE src")
            db.execute("PRAGMA journal_mode=DELETE")  # one self-contained file
            db.execute("VACUUM")
        finally:
            db.close()

    def known_ids(self, collection: str, ids: Sequence[str]) -> set[str]:
        """Which of `ids` the ledger knows in `collection`: text hashes of a space, chunk ids of
        a space of the release before, or of an older release's per-branch collection."""
        found: set[str] = set()
        for start in range(0, len(ids), 500):
            part = list(ids[start:start + 500])
            marks = ",".join("?" * len(part))
            found.update(cid for (cid,) in self.db.execute(
                f"SELECT text_hash FROM space_texts WHERE space=? AND text_hash IN ({marks}) "
                f"UNION SELECT id FROM shared_chunks WHERE space=? AND id IN ({marks}) "
                f"UNION SELECT id FROM chunks WHERE coll=? AND id IN ({marks})",
                (collection, *part, collection, *part, collection, *part)))
        return found

    # -- chunks -----------------------------------------------------------------
    def chunk_counts(self, coll: str, status: str = "live") -> dict[str, int]:
        """Chunks of the branch by file kind (status "deleted": its history)."""
        rows = self.db.execute(
            "SELECT kind, sum(chunks) FROM files WHERE coll=? AND status=? AND chunks > 0 GROUP BY kind",
            (coll, status))
        return {k: int(n) for k, n in rows}

    def lexical_search(self, state: BranchState, match: str, n: int) -> list[tuple[ChunkRecord, float]]:
        """(record, bm25 score, higher is better) of the branch's live chunks whose terms match, best first."""
        rows = self.db.execute(
            f"SELECT -bm25(lexicon) AS score, {_RECORD_COLUMNS} FROM lexicon JOIN lexmap m ON m.rowid = lexicon.rowid "
            "JOIN space_chunks c ON c.lex = m.rowid JOIN space_blobs sb ON sb.id = c.blob "
            "JOIN space_texts t ON t.id = c.text "
            "JOIN files f ON f.coll = ? AND f.path = sb.path AND f.blob_sha = sb.blob_sha AND f.status = 'live' "
            "WHERE lexicon MATCH ? AND m.coll = ? ORDER BY score DESC, sb.path, c.ordinal LIMIT ?",
            (state.coll, match, state.space, n))
        return [(_record(state, row), score) for score, *row in rows]

    def lexical_docs(self, coll: str) -> Iterator[tuple[str, str]]:
        """Every (chunk id, terms) of a collection's lexical index (to rebuild a derived one)."""
        yield from self.db.execute(
            "SELECT m.id, l.terms FROM lexmap m JOIN lexicon l ON l.rowid = m.rowid WHERE m.coll = ?", (coll,))

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
        """A token that changes with every commit that changes the space's lexical index (what
        the tantivy copy is stamped with; see lexindex.py)."""
        row = self.db.execute("SELECT value FROM meta WHERE key=?", (f"lexical:{space}",)).fetchone()
        return row[0] if row else None

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
            db.execute("INSERT OR REPLACE INTO branches VALUES (?,?,?,?,?,?,?,?,?,?,?)", astuple(state))
            dropped = _drop_legacy(db, change.legacy) if change.legacy else []
            removed = _collect_unreferenced(db, space)
            old = previous[0] if previous else None
            if old is not None and old != space:
                # The branch left a space (another model, or the release before's keying).
                if db.execute("SELECT 1 FROM branches WHERE space=? LIMIT 1", (old,)).fetchone():
                    (_collect_unreferenced if old.endswith(SPACE_SUFFIX) else _collect_old_keyed)(db, old)
                else:
                    dropped.append(_drop_space(db, old))
            stamp = f"{state.commit} {state.built_at} {os.urandom(4).hex()}"
            db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (f"lexical:{space}", stamp))
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
        return int(self.db.execute("SELECT count(*) FROM pending").fetchone()[0])

    def clear_pending(self, items: Iterable[tuple[str, str]]) -> None:
        with self.transaction() as db:
            db.executemany("DELETE FROM pending WHERE collection=? AND id=?", list(items))


def models_in_use(index_dir: Path) -> frozenset[str]:
    """The models the local ledger's branches were built with; empty when it cannot tell (no
    ledger, unreadable, busy). Read as is, never upgraded: a hint for a search, which opens the
    ledger properly right after (see retriever.search._held_model)."""
    try:
        db = _open_for_read(index_dir, index_dir / "state.sqlite")
    except CodevouchError:
        return frozenset()
    try:
        return frozenset(name for (name,) in db.execute("SELECT DISTINCT embedder FROM branches"))
    except sqlite3.Error:
        return frozenset()
    finally:
        db.close()


def ensure_index_dir(index_dir: Path) -> None:
    """Create the index directory for a writer, or say plainly why it cannot be one."""
    try:
        index_dir.mkdir(parents=True, exist_ok=True)
    except FileExistsError as exc:
        raise BadIndex(f"--index {index_dir} is a file, not a directory; pass a directory for the index.") from exc
    except NotADirectoryError as exc:
        raise BadIndex(f"--index {index_dir} lies under a file, not a directory; pass a directory path.") from exc
    except OSError as exc:
        raise BadIndex(f"cannot create the index directory {index_dir}: {exc.strerror or exc}; "
                       "pass --index with a writable directory.") from exc
    if not index_dir.is_dir():
        raise BadIndex(f"--index {index_dir} is not a directory; pass a directory for the index.")
    if not os.access(index_dir, os.W_OK | os.X_OK):
        raise BadIndex(f"the index directory {index_dir} is not writable; pass --index with a writable "
                       "directory (reads such as search work on a read-only index).")


def _quote(path: Path) -> str:
    from urllib.parse import quote

    return quote(str(path.resolve() if path.is_absolute() else path.absolute()))


def _open_for_read(index_dir: Path, path: Path) -> sqlite3.Connection:
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
    db = _connect(path, f"file:{_quote(path)}?mode=ro", index_dir)
    try:
        with _sqlite_errors(index_dir):
            db.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return db
    except BadIndex:
        db.close()
        if os.access(index_dir, os.W_OK):
            raise
    # A WAL-mode ledger on a read-only mount: SQLite cannot create its -shm file there.
    # Nothing can write that directory either, so reading it as immutable is safe.
    db = _connect(path, f"file:{_quote(path)}?mode=ro&immutable=1", index_dir)
    with _sqlite_errors(index_dir):
        db.execute("SELECT count(*) FROM sqlite_master").fetchone()
    return db


def _connect(path: Path, uri: str, index_dir: Path) -> sqlite3.Connection:
    with _sqlite_errors(index_dir):
        return sqlite3.connect(uri, uri=True, timeout=30, isolation_level=None)


@contextmanager
def _sqlite_errors(index_dir: Path) -> Iterator[None]:
    """SQLite's failures, turned into messages that say what to do."""
    ledger = index_dir / "state.sqlite"
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
    except sqlite3.DatabaseError as exc:
        raise BadIndex(
            f"the index ledger {ledger} is corrupt ({exc}); move the index directory aside "
            f"(`mv {index_dir} {index_dir}.corrupt`) and run `codevouch index build` again: the index is "
            "rebuilt from git (the embedding cache is lost, so the build re-embeds).") from exc


def _upgrade(db: sqlite3.Connection, index_dir: Path, path: Path, readonly: bool) -> None:
    """Apply the migrations this ledger lacks (a reader's upgrade opens its own writable connection)."""
    from codevouch.store import migrations

    with _sqlite_errors(index_dir):
        try:
            todo = migrations.pending(db)
        except migrations.UnknownMigrations as exc:
            raise BadIndex(f"the index at {index_dir} was written by a newer codevouch (format steps "
                           f"{exc}); upgrade codevouch, or build a separate index with --index DIR.") from exc
        if not todo:
            return
        if not readonly:
            migrations.migrate(db)
            return
        try:
            writer = sqlite3.connect(f"file:{_quote(path)}?mode=rw", uri=True, timeout=30, isolation_level=None)
            try:
                migrations.migrate(writer)
            finally:
                writer.close()
        except sqlite3.OperationalError as exc:
            raise BadIndex(
                f"the index at {index_dir} was made by an older codevouch and must be upgraded in place once, "
                f"which needs write access ({exc}); run `codevouch index build --index {index_dir}` as a user "
                "who can write it.") from exc


@dataclass(frozen=True)
class BuildChange:
    """What one build of a branch makes visible, all at once (see Ledger.commit)."""
    state: BranchState
    chunks: Sequence[NewChunk] = ()                # chunks new to the shared space (their vectors written)
    lexical: Sequence[tuple[str, str]] = ()        # (lexical key, terms) of those chunks
    files: Sequence[FileRow] = ()                  # file rows written as given (membership)
    deleted_paths: Sequence[str] = ()              # files gone from the branch, kept as history
    gone_at: tuple[str, str] | None = None         # (commit, date) that last had the deleted files
    dropped_paths: Sequence[str] = ()              # files forgotten (they had no chunks)
    legacy: BranchState | None = None              # the same branch as an older release stored it


@dataclass(frozen=True)
class Committed:
    old_collections: list[str]   # collections no branch uses any more (older releases' keying), to drop now
    removed_ids: list[str]       # lexical keys of the space that no chunk has any more
    stamp: str                   # the space's new lexical stamp (lexindex.py)


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
            raise BadIndex(f"chunk {r.path}#{c.ordinal} has no lexical row in {space}; rebuild with `codevouch index build`.")
        db.execute("INSERT OR IGNORE INTO space_chunks VALUES (?,?,?,?,?,?,?)",
                   (blob, c.ordinal, text, lex[0], r.symbol, r.start_line, r.end_line))


def _collect_unreferenced(db: sqlite3.Connection, space: str) -> list[str]:
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
    dead_texts = [t for t in texts if not db.execute("SELECT 1 FROM space_chunks WHERE text=? LIMIT 1", (t,)).fetchone()]
    dead_lex = [x for x in lexes if not db.execute("SELECT 1 FROM space_chunks WHERE lex=? LIMIT 1", (x,)).fetchone()]
    hashes = [h for t in dead_texts for (h,) in db.execute("SELECT text_hash FROM space_texts WHERE id=?", (t,))]
    _add_pending(db, [(space, h) for h in hashes])
    db.executemany("DELETE FROM space_texts WHERE id=?", [(t,) for t in dead_texts])
    keys = [k for x in dead_lex for (k,) in db.execute("SELECT id FROM lexmap WHERE rowid=?", (x,))]
    _drop_lexical(db, space, keys)
    return sorted(keys)


def _collect_old_keyed(db: sqlite3.Connection, space: str) -> list[str]:
    """_collect_unreferenced for a space of the release before (one vector per chunk id)."""
    ids = [cid for (cid,) in db.execute(
        "SELECT c.id FROM shared_chunks c WHERE c.space=? AND NOT EXISTS (SELECT 1 FROM branches b "
        "JOIN files f ON f.coll = b.coll AND f.path = c.path WHERE b.space = c.space "
        "AND f.blob_sha = c.blob_sha AND f.status IN ('live', 'deleted'))", (space,))]
    _add_pending(db, [(space, cid) for cid in ids])
    _drop_lexical(db, space, ids)
    db.executemany("DELETE FROM shared_chunks WHERE space=? AND id=?", [(space, cid) for cid in ids])
    return ids


def _drop_space(db: sqlite3.Connection, space: str) -> str:
    """Forget a space no branch uses any more, all at once; its name, to drop its collection."""
    db.execute("DELETE FROM lexicon WHERE rowid IN (SELECT rowid FROM lexmap WHERE coll=?)", (space,))
    db.execute("DELETE FROM space_chunks WHERE blob IN (SELECT id FROM space_blobs WHERE space=?)", (space,))
    for sql in ("DELETE FROM lexmap WHERE coll=?", "DELETE FROM space_blobs WHERE space=?",
                "DELETE FROM space_texts WHERE space=?", "DELETE FROM shared_chunks WHERE space=?",
                "DELETE FROM pending WHERE collection=?"):
        db.execute(sql, (space,))
    db.execute("DELETE FROM meta WHERE key=?", (f"lexical:{space}",))
    return space


def _drop_legacy(db: sqlite3.Connection, legacy: BranchState) -> list[str]:
    """Forget a branch as an older release stored it; the names of its Chroma collections."""
    names = [f"{legacy.coll}-live", f"{legacy.coll}-hist"]
    for name in names:
        _drop_lexical(db, name, [cid for (cid,) in db.execute("SELECT id FROM lexmap WHERE coll=?", (name,))])
        db.execute("DELETE FROM chunks WHERE coll=?", (name,))
        db.execute("DELETE FROM pending WHERE collection=?", (name,))
    db.execute("DELETE FROM files WHERE coll=?", (legacy.coll,))
    db.execute("DELETE FROM branches WHERE coll=?", (legacy.coll,))
    return names


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


# How long a read waits for a build's write to the embedded Chroma store to finish.
BUSY_TIMEOUT_S = 20.0


class VectorStore:
    """The Chroma half: vectors plus a copy of each record's fields as metadata.

    Embedded Chroma keeps every collection in one SQLite file with a rollback journal: while a
    build is inside one of its write transactions, any other process that opens the store
    blocks, without limit (a build paused there blocked searches for minutes). So every
    access goes through `vectors.lock` in the index directory: a build holds it exclusively
    for each write batch only, readers hold it shared; a reader that cannot get it within
    $CODEVOUCH_BUSY_TIMEOUT seconds (default 20) raises IndexBusy instead of hanging. Between
    batches readers get in and answer from the ledger's last committed state. A Chroma
    server (CODEVOUCH_CHROMA_URL) serialises writes itself and needs no lock.
    """

    def __init__(self, index_dir: Path, readonly: bool = False) -> None:
        self._index_dir = index_dir
        self._path = index_dir / "chroma"
        self._readonly = readonly
        self._server = server_url()
        self._client_obj: Any = None
        self._cols: dict[str, Any] = {}

    @property
    def _client(self) -> Any:
        # Opened on first use: importing chromadb costs ~1 s, and a no-op rebuild or a
        # lexical search never touches a vector.
        if self._client_obj is None:
            import chromadb
            from chromadb.config import Settings

            settings = Settings(anonymized_telemetry=False, allow_reset=False)
            if self._server:
                # Outgrown one machine, or many readers: the same code on a Chroma server.
                url = urlsplit(self._server)
                if url.scheme not in ("http", "https") or not url.hostname:
                    raise CodevouchError(f"CODEVOUCH_CHROMA_URL={self._server!r} is not http(s)://HOST:PORT.")
                self._client_obj = chromadb.HttpClient(
                    host=url.hostname, port=url.port or (443 if url.scheme == "https" else 8000),
                    ssl=url.scheme == "https", settings=settings)
            else:
                self._client_obj = chromadb.PersistentClient(path=str(self._path), settings=settings)
        return self._client_obj

    def close(self) -> None:
        """Release the Chroma client. A persistent client shares one cached system per path
        inside a process, and a system opened before another process wrote the store keeps
        serving the old data (measured: a long-lived reader missed a later build's vectors);
        closing the last client drops that system, so the next open reads the store afresh."""
        if self._client_obj is not None:
            close = getattr(self._client_obj, "close", None)
            self._client_obj, self._cols = None, {}
            if close is not None:
                close()

    def __enter__(self) -> VectorStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def _absent(self) -> bool:
        """A reader on an index whose builds never wrote a vector: nothing to open (or create)."""
        return self._readonly and not self._server and not (self._path / "chroma.sqlite3").exists()

    @contextmanager
    def _access(self, write: bool) -> Iterator[None]:
        """The vectors.lock turn (see the class docstring) and Chroma's errors as ours."""
        with _vector_lock(self._index_dir, write, enabled=not self._server):
            try:
                yield
            except CodevouchError:
                raise
            except Exception as exc:
                raise _store_error(exc, self._server, self._path) from exc

    def collection(self, name: str, create: bool = True) -> Any:
        if name not in self._cols:
            if create:
                # embedding_function=None: Chroma must never fall back to its default model,
                # which it would try to download.
                self._cols[name] = self._client.get_or_create_collection(
                    name, embedding_function=None, metadata={"hnsw:space": "cosine"})
            else:
                from chromadb.errors import NotFoundError

                try:
                    self._cols[name] = self._client.get_collection(name, embedding_function=None)
                except NotFoundError:
                    return None
        return self._cols[name]

    def upsert(self, name: str, ids: Sequence[str], vectors: Sequence[Sequence[float]]) -> None:
        """Vectors by id (a text hash), with no metadata: a vector shared by chunks of many
        paths and branches has no one path, and what a hit needs is in the ledger."""
        for start in range(0, len(ids), CHROMA_BATCH):
            with self._access(write=True):
                self.collection(name).upsert(
                    ids=list(ids[start:start + CHROMA_BATCH]),
                    embeddings=[list(v) for v in vectors[start:start + CHROMA_BATCH]])

    def delete(self, name: str, ids: Sequence[str]) -> None:
        for start in range(0, len(ids), CHROMA_BATCH):
            with self._access(write=True):
                col = self.collection(name, create=False)
                if col is None:
                    return
                col.delete(ids=list(ids[start:start + CHROMA_BATCH]))

    def query(self, name: str, vector: Sequence[float], n: int) -> list[tuple[str, float]]:
        """(id, cosine similarity) of the nearest vectors, best first."""
        if n <= 0 or self._absent:
            return []
        with self._access(write=False):
            col = self.collection(name, create=False)
            if col is None:
                return []
            # No count() to cap n: Chroma (>= 1.0) returns what it holds when asked for more,
            # and counting costs ~15 ms at 100k vectors, as much as the query itself.
            res = col.query(query_embeddings=[list(vector)], n_results=n, include=["distances"])
        return [(cid, 1.0 - dist) for cid, dist in zip(res["ids"][0], res["distances"][0])]

    def collections(self) -> list[str]:
        if self._absent:
            return []
        with self._access(write=False):
            return [c if isinstance(c, str) else c.name for c in self._client.list_collections()]

    def drop(self, name: str) -> None:
        """Remove a whole collection (an older release's per-branch one); absent is fine."""
        with self._access(write=True):
            if self.collection(name, create=False) is not None:
                self._client.delete_collection(name)
            self._cols.pop(name, None)

    def put_documents(self, name: str, items: Sequence[tuple[str, str, dict[str, Any]]]) -> None:
        """Store (id, document, metadata) records that are data, not vectors (a 1-dimension
        placeholder embedding: Chroma requires one, and must never compute one)."""
        for start in range(0, len(items), 64):
            part = items[start:start + 64]
            with self._access(write=True):
                self.collection(name).upsert(
                    ids=[i for i, _, _ in part], documents=[d for _, d, _ in part],
                    metadatas=[m for _, _, m in part], embeddings=[[1.0] for _ in part])

    def get_documents(self, name: str, ids: Sequence[str]) -> dict[str, tuple[str, dict[str, Any]]]:
        if self._absent or not ids:
            return {}
        with self._access(write=False):
            col = self.collection(name, create=False)
            if col is None:
                return {}
            res = col.get(ids=list(ids), include=["documents", "metadatas"])
        return {i: (d, m or {}) for i, d, m in zip(res["ids"], res["documents"], res["metadatas"])}

    def document_ids(self, name: str) -> list[str]:
        if self._absent:
            return []
        with self._access(write=False):
            col = self.collection(name, create=False)
            return [] if col is None else list(col.get(include=[])["ids"])

    def count(self, name: str) -> int:
        if self._absent:
            return 0
        with self._access(write=False):
            col = self.collection(name, create=False)
            return 0 if col is None else col.count()


def _store_error(exc: Exception, server: str | None, path: Path) -> CodevouchError:
    text = f"{type(exc).__name__}: {exc}"
    if server:
        return StoreUnavailable(
            f"the Chroma server at CODEVOUCH_CHROMA_URL={server} cannot be used ({text}); start it "
            "(`chroma run --path DIR --port PORT`) or unset CODEVOUCH_CHROMA_URL to use the embedded store.")
    return BadIndex(f"the vector store {path} cannot be used ({text}); if the index directory is read-only, "
                    "search with --mode lexical; if it is damaged, move the index directory aside and "
                    "rebuild with `codevouch index build`.")


@contextmanager
def _vector_lock(index_dir: Path, write: bool, enabled: bool) -> Iterator[None]:
    lock_path = index_dir / "vectors.lock"
    if not enabled:
        yield
        return
    import fcntl

    try:
        # Writers create the lock file; readers never create anything: an index that has no
        # lock file has never been written by a build of this release.
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT if write else os.O_RDONLY, 0o644)
    except FileNotFoundError:
        yield
        return
    except OSError as exc:
        raise BadIndex(f"cannot open {lock_path}: {exc.strerror or exc}.") from exc
    try:
        mode = fcntl.LOCK_EX if write else fcntl.LOCK_SH
        timeout = None if write else float(os.environ.get("CODEVOUCH_BUSY_TIMEOUT") or BUSY_TIMEOUT_S)
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, mode | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if deadline is not None and time.monotonic() >= deadline:
                    raise IndexBusy(
                        f"a build is writing the vector store of {index_dir} and did not finish its write "
                        f"within {timeout:g} s (is it paused?); retry when it has finished, or search with "
                        "--mode lexical, which does not need the vector store.") from None
                time.sleep(0.05)
        yield
    finally:
        os.close(fd)


@contextmanager
def writer_lock(index_dir: Path, wait: float) -> Iterator[None]:
    """One build at a time per index; a second one waits up to `wait` seconds, then exits."""
    from filelock import FileLock, Timeout

    ensure_index_dir(index_dir)
    lock = FileLock(str(index_dir / "write.lock"))
    try:
        lock.acquire(timeout=wait)
    except Timeout as exc:
        raise IndexLocked(
            f"another codevouch build is writing {index_dir}; wait for it to finish, or pass "
            "--wait SECONDS to queue behind it.") from exc
    try:
        yield
    finally:
        lock.release()
