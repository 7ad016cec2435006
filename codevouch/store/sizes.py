"""What each repository and branch of an index takes on disk, as far as it can be attributed
(`codevouch index status`; docs/INDEXING.md, "What each entry takes on disk").

A branch shares most of what it is made of with the other branches of its repository (chunks are
keyed by file version, vectors by text), and a repository shares the embedding cache with every
other (keyed by text too). So each figure says what the entry holds alone, which is about what
`codevouch index forget` of it would free:

  - chunks: a branch's live and history chunks (`chunks`), and those no other branch references
    (`own_chunks`); a repository's distinct chunk rows and vectors;
  - lexical: the tantivy copies, measured: a branch's own copy, a repository's `lexical/<space>/`;
  - ledger: each table's pages (SQLite's dbstat) split by row count: a branch's `files` rows and the
    chunk, file-version, text and lexical rows only it references; a repository's rows of its spaces
    and its branches' `files` rows;
  - vectors: embedded, a collection's HNSW directory plus its share of `chroma.sqlite3` (its rows
    in Chroma's `embeddings` table); a branch's share of that, by its own vectors. None on a server;
  - embedding_cache: the cache rows of texts no other repository (branch) holds, by row count.
    The rest of the cache is shared, and counted once in the index's `embedding_cache`.
"""
from __future__ import annotations

import functools
import os
import sqlite3
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from codevouch.errors import CodevouchError
from codevouch.store import lexindex
from codevouch.store.indexdir import IndexDir
from codevouch.store.ledger import Ledger
from codevouch.store.ledgerfile import quote_path
from codevouch.store.records import BranchState

_SPACE_TABLES = ("space_blobs", "space_chunks", "space_texts", "lexmap", "lexicon", "files", "embeddings")


def dir_bytes(path: Path) -> int:
    """The bytes of the files under `path` (links not followed); 0 when it is not there."""
    total = 0
    for top, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(top, name)).st_size
            except OSError:
                continue
    return total


def _table_bytes(db: sqlite3.Connection) -> dict[str, float]:
    """Bytes per row of each table of _SPACE_TABLES, its indexes (and an FTS5 table's shadow
    tables) included; empty when SQLite cannot say (no dbstat)."""
    try:
        pages = db.execute("SELECT d.name, coalesce(m.tbl_name, d.name), sum(d.pgsize) FROM dbstat d "
                           "LEFT JOIN sqlite_master m ON m.name = d.name GROUP BY d.name").fetchall()
    except sqlite3.Error:
        return {}
    grouped: Counter[str] = Counter()
    for name, table, size in pages:
        grouped["lexicon" if str(name).startswith("lexicon_") else str(table)] += int(size)
    per_row = {}
    for table in _SPACE_TABLES:
        rows = int(db.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
        per_row[table] = grouped[table] / rows if rows else 0.0
    return per_row


def _vector_bytes(index_dir: Path) -> dict[str, int]:
    """Bytes of each collection of the embedded store: its HNSW directories and its share of
    chroma.sqlite3 by its rows in Chroma's `embeddings` table; empty when it cannot tell."""
    where = IndexDir(index_dir)
    try:
        db = sqlite3.connect(f"file:{quote_path(where.chroma_file)}?mode=ro", uri=True, timeout=1)
        try:
            segments = db.execute("SELECT c.name, s.id FROM segments s JOIN collections c ON c.id = s.collection "
                                  "WHERE s.scope = 'VECTOR'").fetchall()
            rows = dict(db.execute("SELECT c.name, count(*) FROM embeddings e JOIN segments s ON s.id = e.segment_id "
                                   "JOIN collections c ON c.id = s.collection GROUP BY c.name").fetchall())
        finally:
            db.close()
    except sqlite3.Error:
        return {}
    total_rows = sum(rows.values())
    shared = where.chroma_file.stat().st_size if total_rows else 0
    found: Counter[str] = Counter()
    for name, segment in segments:
        found[name] += dir_bytes(where.chroma / str(segment))
    for name, count in rows.items():
        found[name] += round(shared * count / total_rows)
    return dict(found)


@dataclass
class _Space:
    """One space's rows: which entries reference each file version, and each chunk's text and lexical row."""
    refs: dict[int, set[str]] = field(default_factory=lambda: defaultdict(set))
    chunks: list[tuple[int, int, int]] = field(default_factory=list)   # (file version, text, lexical row)
    hashes: dict[int, str] = field(default_factory=dict)               # text id -> text hash

    @functools.cached_property
    def users(self) -> tuple[dict[int, set[str]], dict[int, set[str]], Counter[int]]:
        """Which entries use each text and each lexical row, and how many chunks each file version
        holds: worked out once per space, not once per branch of it."""
        texts: dict[int, set[str]] = defaultdict(set)
        lexes: dict[int, set[str]] = defaultdict(set)
        per_blob: Counter[int] = Counter()
        for blob, text, lex in self.chunks:
            texts[text] |= self.refs.get(blob, set())
            lexes[lex] |= self.refs.get(blob, set())
            per_blob[blob] += 1
        return texts, lexes, per_blob


def _space(db: sqlite3.Connection, space: str) -> _Space:
    found = _Space()
    for blob, coll in db.execute(
            "SELECT sb.id, f.coll FROM branches b JOIN files f ON f.coll = b.coll JOIN space_blobs sb "
            "ON sb.space = b.space AND sb.path = f.path AND sb.blob_sha = f.blob_sha "
            "WHERE b.space = ? AND f.status IN ('live', 'deleted')", (space,)):
        found.refs[blob].add(coll)
    found.chunks = db.execute("SELECT c.blob, c.text, c.lex FROM space_chunks c JOIN space_blobs sb ON sb.id = c.blob "
                              "WHERE sb.space = ?", (space,)).fetchall()
    found.hashes = dict(db.execute("SELECT id, text_hash FROM space_texts WHERE space = ?", (space,)).fetchall())
    return found


def _sole(users: dict[Any, set[str]]) -> Counter[str]:
    """How many keys each entry is the only user of."""
    return Counter(next(iter(u)) for u in users.values() if len(u) == 1)


class _Measure:
    """One status call's measurement of a ledger (read once) and the files beside it."""

    def __init__(self, index_dir: Path, ledger: Ledger, server: bool) -> None:
        self.index_dir, self.ledger, self.db = index_dir, ledger, ledger.db
        self.per_row = _table_bytes(self.db)
        self.vectors = {} if server else _vector_bytes(index_dir)
        self.server = server
        self.states = ledger.branches()
        self.spaces = {s: _space(self.db, s) for s in sorted({b.space for b in self.states if b.space})}
        self.cached = {h for (h,) in self.db.execute("SELECT DISTINCT text_hash FROM embeddings")}
        # How many spaces hold each text: a cache row of a text held in two spaces serves both.
        self.holders = Counter(h for space in self.spaces.values() for h in space.hashes.values())
        self.files = dict(self.db.execute("SELECT coll, count(*) FROM files GROUP BY coll").fetchall())

    def row(self, table: str, n: float) -> float:
        return self.per_row.get(table, 0.0) * n

    def branch(self, state: BranchState) -> dict[str, Any]:
        space = self.spaces.get(state.space or "")
        own: Counter[str] = Counter()
        if space is not None:
            own_blobs = {b for b, users in space.refs.items() if users == {state.coll}}
            texts, lexes, per_blob = space.users
            own["chunks"] = sum(per_blob[b] for b in own_blobs)
            own["blobs"], own["texts"], own["lex"] = len(own_blobs), _sole(texts)[state.coll], _sole(lexes)[state.coll]
            own["cached"] = sum(1 for t, users in texts.items() if users == {state.coll}
                                and space.hashes.get(t) in self.cached and self.holders[space.hashes[t]] == 1)
        ledger = (self.row("files", self.files.get(state.coll, 0)) + self.row("space_blobs", own["blobs"])
                  + self.row("space_chunks", own["chunks"]) + self.row("space_texts", own["texts"])
                  + self.row("lexmap", own["lex"]) + self.row("lexicon", own["lex"]))
        copy = self.ledger.copy_of(state)
        lexical = dir_bytes(lexindex.index_path(self.index_dir, copy)) if copy is not None else 0
        held = len(space.hashes) if space is not None else 0
        vectors = None if self.server else round(self.vectors.get(state.space or "", 0) * own["texts"] / held) if held else 0
        return self._sized({"repo": state.repo, "repo_id": state.repo_id, "branch": state.branch,
                            "own_chunks": own["chunks"], "own_vectors": own["texts"]},
                           lexical, ledger, vectors, self.row("embeddings", own["cached"]))

    def repository(self, states: list[BranchState]) -> dict[str, Any]:
        names = sorted({s.space for s in states if s.space})
        mine = [self.spaces[n] for n in names]
        others = {h for n, s in self.spaces.items() if n not in names for h in s.hashes.values()}
        texts = {h for s in mine for h in s.hashes.values()}
        chunks = sum(len(s.chunks) for s in mine)
        ledger = self._space_rows(mine) + self.row("files", sum(self.files.get(s.coll, 0) for s in states))
        lexical = sum(dir_bytes(lexindex.space_dir(self.index_dir, n)) for n in names)
        vectors = None if self.server else sum(self.vectors.get(n, 0) for n in names)
        first = states[0]
        return {"repo": first.repo, "repo_id": first.repo_id, "branches": sorted({s.branch for s in states}),
                **self._sized({"chunks": chunks, "vectors": sum(len(s.hashes) for s in mine)}, lexical, ledger,
                              vectors, self.row("embeddings", len((texts - others) & self.cached)))}

    def _space_rows(self, spaces: list[_Space]) -> float:
        """The ledger bytes of the spaces' rows: file versions, chunks, texts, lexical rows."""
        lexes = sum(len({lex for _, _, lex in s.chunks}) for s in spaces)
        return (self.row("space_blobs", sum(len({b for b, _, _ in s.chunks}) for s in spaces))
                + self.row("space_chunks", sum(len(s.chunks) for s in spaces))
                + self.row("space_texts", sum(len(s.hashes) for s in spaces))
                + self.row("lexmap", lexes) + self.row("lexicon", lexes))

    @staticmethod
    def _sized(counts: dict[str, Any], lexical: int, ledger: float, vectors: int | None,
               cache: float) -> dict[str, Any]:
        parts = {"lexical": lexical, "ledger": round(ledger), "vectors": vectors, "embedding_cache": round(cache)}
        return {**counts, "bytes": {**parts, "total": sum(v for v in parts.values() if v is not None)}}


def disk_usage(index_dir: Path, server: bool = False) -> dict[str, Any]:
    """The index's sizes: `branches` (one per entry), `repositories` (one per repository id, or
    path for a branch built before ids), and the index's whole: its directory, the embedding
    cache, and what no entry takes (usage records, team snapshots, free pages). `server`: the
    vectors are on a Chroma server (not measured here). Empty when nothing is indexed."""
    try:
        ledger = Ledger(index_dir, readonly=True)
    except CodevouchError:   # nothing indexed, or unreadable: the status rows say which
        return {}
    try:
        measure = _Measure(index_dir, ledger, server)
        by_repo: dict[str, list[BranchState]] = defaultdict(list)
        for state in measure.states:
            by_repo[state.repo_id or state.repo].append(state)
        cache = measure.row("embeddings", int(ledger.db.execute("SELECT count(*) FROM embeddings").fetchone()[0]))
        return {"total": dir_bytes(index_dir), "embedding_cache": round(cache),
                "branches": [measure.branch(s) for s in measure.states],
                "repositories": [measure.repository(states) for states in by_repo.values()]}
    finally:
        ledger.close()
