"""The Chroma half of the index: vectors by text hash, and data records (team snapshots, leases)."""
from __future__ import annotations

import re
import shutil
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

from codevouch.errors import BadIndex, CodevouchError, StoreUnavailable, disk_full, is_disk_full
from codevouch.store.indexdir import IndexDir
from codevouch.store.ledgerfile import quote_path
from codevouch.store.locks import vector_lock
from codevouch.store.settings import DEFAULT, StoreSettings

T = TypeVar("T")

CHROMA_BATCH = 4000  # under Chroma's max batch (5461 here)
# Chroma's HNSW search looks at max(ef_search, n) candidates, and its ef_search is 100: asked for
# the few dozen a search fuses, it missed true neighbours. Against an exact search on real
# queries (the quality bench's docstring sentences; python -m codevouch_bench.ann_recall), its
# first 30 held 0.970 of the exact 30 on rxjs (7k vectors; one query none of them) at n <= 100,
# 0.993 at 200, 0.997 at 300, for +0.7 ms a query. Asking for at least this many costs one
# wider walk of the graph, not a second search.
ANN_LEAST = 300
# Distances are rounded to this many decimals, and a tie is broken by the id (a text hash): HNSW
# returns ties in no fixed order, and held spaces (retriever/held.py), whose float32 products differ
# from the store's in the seventh digit, rank and score the same vectors by the same rule.
TIE_DECIMALS = 6


class VectorStore:
    """The Chroma half: vectors plus a copy of each record's fields as metadata.

    Embedded Chroma keeps every collection in one SQLite file with a rollback journal: while a
    build is inside one of its write transactions, any other process that opens the store
    blocks, without limit (a build paused there blocked searches for minutes). So every
    access goes through `vectors.lock` in the index directory: a build holds it exclusively
    for each write batch only, any process holds it exclusively while it opens the store
    (an open writes), readers hold it shared otherwise; a reader that cannot get it within
    $CODEVOUCH_BUSY_TIMEOUT seconds (default 20) raises IndexBusy instead of hanging. Between
    batches readers get in and answer from the ledger's last committed state. A Chroma
    server (CODEVOUCH_CHROMA_URL) serialises writes itself and needs no lock.

    `settings`: the caller's (store/settings.py); the server is its `chroma_url` when opened. A
    reader kept open across calls (retriever/search.py) is handed each call's `settings`, as
    the busy timeout and the server's timeout are read at their use.
    """

    def __init__(self, index_dir: Path, readonly: bool = False, settings: StoreSettings = DEFAULT) -> None:
        self._index_dir = index_dir
        self._path = IndexDir(index_dir).chroma
        self._readonly = readonly
        self.settings = settings
        self._server = settings.chroma_url
        self._client_obj: Any = None
        self._cols: dict[str, Any] = {}
        self._checked: set[str] = set()   # collections whose count this open compared with the ledger

    @property
    def _client(self) -> Any:
        # Opened on first use: importing chromadb costs ~1 s, and a no-op rebuild or a
        # lexical search never touches a vector.
        if self._client_obj is None:
            from codevouch.store import chromaload

            chromadb = chromaload.chromadb()     # no `.env` of the working directory read: chromaload.py
            settings = chromaload.settings()
            if self._server:
                # Outgrown one machine, or many readers: the same code on a Chroma server.
                url = urlsplit(self._server)
                if url.scheme not in ("http", "https") or not url.hostname:
                    raise CodevouchError(f"CODEVOUCH_CHROMA_URL={self._server!r} is not http(s)://HOST:PORT.")
                # chromadb.HttpClient with every call bounded (store/chromahttp.py: CODEVOUCH_CHROMA_TIMEOUT),
                # one per server in a process.
                from codevouch.store.chromahttp import shared_client

                self._client_obj = shared_client(url.hostname, url.port or (443 if url.scheme == "https" else 8000),
                                                url.scheme == "https", settings, self.settings.chroma_timeout)
            else:
                self._client_obj = chromadb.PersistentClient(path=str(self._path), settings=settings)
        return self._client_obj

    def close(self) -> None:
        """Release the Chroma client. A persistent client shares one cached system per path
        inside a process, and a system opened before another process wrote the store keeps
        serving the old data (measured: a long-lived reader missed a later build's vectors);
        closing the last client drops that system, so the next open reads the store afresh."""
        if self._client_obj is not None:
            close = getattr(self._client_obj, "close", None) if not self._server else None   # shared: chromahttp
            self._client_obj, self._cols, self._checked = None, {}, set()
            if close is not None:
                close()

    def __enter__(self) -> VectorStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def _absent(self) -> bool:
        """A reader on an index whose builds never wrote a vector: nothing to open (or create)."""
        return self._readonly and not self._server and not IndexDir(self._index_dir).chroma_file.exists()

    @contextmanager
    def _access(self, write: bool) -> Iterator[None]:
        """The vectors.lock turn (see the class docstring) and Chroma's errors as ours."""
        # Opening an embedded client writes its SQLite file (measured on chromadb 1.5.9: the
        # file's change counter moves on every open, queries and close leave it alone). Two
        # processes opening at once, or a build paused mid-open, then fail each other's reads
        # with "database is locked"; so the open, a reader's too, is taken exclusively.
        opening = self._client_obj is None and not self._server
        with vector_lock(self._index_dir, write, enabled=not self._server, exclusive=opening, settings=self.settings):
            try:
                if opening:
                    self._client  # noqa: B018 (opened here, inside the exclusive turn)
                yield
            except CodevouchError:
                raise
            except Exception as exc:
                raise _store_error(exc, self._server, self._path, self.settings) from exc

    def collection(self, name: str, create: bool = True) -> Any:
        if name not in self._cols:
            if create:
                # embedding_function=None: Chroma must never fall back to its default model,
                # which it would try to download.
                self._cols[name] = self._client.get_or_create_collection(
                    name, embedding_function=None, metadata={"hnsw:space": "cosine"})
            else:
                from chromadb.errors import NotFoundError

                kept = self._kept_handles()
                if kept is not None and name in kept:
                    self._cols[name] = kept[name]
                    return kept[name]
                try:
                    self._cols[name] = self._client.get_collection(name, embedding_function=None)
                except NotFoundError:
                    return None
                if kept is not None:
                    kept[name] = self._cols[name]
        return self._cols[name]

    def _kept_handles(self) -> dict[str, Any] | None:
        """A reader's collection handles kept on its shared server client (chromahttp.handles);
        None for a builder or the embedded store (its handles live as long as this open)."""
        if not (self._server and self._readonly):
            return None
        from codevouch.store import chromahttp

        return chromahttp.handles(self._client)

    def _read(self, name: str, op: Callable[[Any], T]) -> T | None:
        """`op` on the collection `name` (None: there is none), inside an access turn. A handle kept
        from an earlier open whose collection was dropped and made again since is looked up once
        more."""
        with self._access(write=False):
            col = self.collection(name, create=False)
            if col is None:
                return None
            try:
                return op(col)
            except Exception as exc:
                from chromadb.errors import NotFoundError

                kept = self._kept_handles()
                if kept is None or not isinstance(exc, NotFoundError):
                    raise
                kept.pop(name, None)
                self._cols.pop(name, None)
                col = self.collection(name, create=False)
                return None if col is None else op(col)

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

    def query(self, name: str, vector: Sequence[float], n: int, expected: int = 0) -> list[tuple[str, float]]:
        """(id, cosine similarity) of the nearest vectors, best first. `expected`: how many vectors
        the ledger says the collection holds; the first query of this open checks that the embedded
        store has them (a deleted or emptied store answered nothing, silently)."""
        if n <= 0:
            return []
        if expected > 0 and not self._server and name not in self._checked:
            self._check(name, expected)
        if self._absent:
            return []
        # No count() to cap n: Chroma (>= 1.0) returns what it holds when asked for more,
        # and counting costs ~15 ms at 100k vectors, as much as the query itself.
        res = self._read(name, lambda col: col.query(query_embeddings=[list(vector)], n_results=max(n, ANN_LEAST),
                                                     include=["distances"]))
        if res is None:
            return []
        found = sorted((round(dist, TIE_DECIMALS), cid) for cid, dist in zip(res["ids"][0], res["distances"][0]))
        return [(cid, 1.0 - dist) for dist, cid in found[:n]]

    def _check(self, name: str, expected: int) -> None:
        """BadIndex, naming --repair, when the embedded store lacks vectors the ledger has: once per
        open and collection (a count, ~15 ms at 100k vectors, beside the ~80 ms the first query
        spends loading the collection anyway)."""
        from codevouch.store.storecheck import header_problem, hint

        where = IndexDir(self._index_dir)
        problem = None
        if not where.chroma.is_dir():
            problem = f"the vector store {where.chroma} is missing"
        elif not where.chroma_file.is_file():
            problem = f"the vector store {where.chroma_file} is missing"
        else:
            damage = header_problem(where.chroma_file)
            if damage is not None:
                problem = f"the vector store {where.chroma_file} is damaged ({damage})"
        if problem is None:
            with self._access(write=False):
                col = self.collection(name, create=False)
                held = 0 if col is None else int(col.count())
            if held < expected:
                problem = (f"the vector store {where.chroma} holds {held} of the {expected} vectors the ledger "
                           f"lists for {name}")
        if problem is not None:
            raise BadIndex(f"{problem}: dense search cannot answer; {hint(self._index_dir)} "
                           "(`--mode lexical` searches without it).")
        self._checked.add(name)

    def collections(self) -> list[str]:
        if self._absent:
            return []
        with self._access(write=False):
            return [c if isinstance(c, str) else c.name for c in self._client.list_collections()]

    def drop(self, name: str) -> None:
        """Remove a whole collection (an older release's per-branch one, a forgotten space); absent
        is fine. Embedded, its vector segment's directory goes too: Chroma 1.x deletes the
        collection's rows and leaves its HNSW files on disk (chroma-core/chroma#5259)."""
        with self._access(write=True):
            if self.collection(name, create=False) is not None:
                segments = [] if self._server else _segment_dirs(self._path, name)
                self._client.delete_collection(name)
                for segment in segments:
                    shutil.rmtree(segment, ignore_errors=True)
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
        res = self._read(name, lambda col: col.get(ids=list(ids), include=["documents", "metadatas"]))
        if res is None:
            return {}
        return {i: (d, m or {}) for i, d, m in zip(res["ids"], res["documents"], res["metadatas"])}

    def document_ids(self, name: str) -> list[str]:
        if self._absent:
            return []
        with self._access(write=False):
            col = self.collection(name, create=False)
            return [] if col is None else list(col.get(include=[])["ids"])

    def server_time(self) -> float | None:
        """The Chroma server's clock (seconds since the epoch, from its heartbeat), None without a
        server: times that other machines compare (the team lease) come from here, never from
        this machine's clock alone."""
        if not self._server:
            return None
        with self._access(write=False):
            return int(self._client.heartbeat()) / 1e9

    def existing(self, name: str, ids: Sequence[str]) -> set[str]:
        """Which of `ids` the collection holds (no vectors fetched)."""
        if self._absent or not ids:
            return set()
        found: set[str] = set()
        with self._access(write=False):
            col = self.collection(name, create=False)
            if col is None:
                return set()
            for start in range(0, len(ids), CHROMA_BATCH):
                found.update(col.get(ids=list(ids[start:start + CHROMA_BATCH]), include=[])["ids"])
        return found

    def count(self, name: str) -> int:
        if self._absent:
            return 0
        with self._access(write=False):
            col = self.collection(name, create=False)
            return 0 if col is None else col.count()


def _segment_dirs(path: Path, name: str) -> list[Path]:
    """The directories of the collection's vector segments in the embedded store at `path`, read
    from Chroma's own `segments` table (as storecheck reads `collections`); none when it cannot tell."""
    try:
        db = sqlite3.connect(f"file:{quote_path(path / 'chroma.sqlite3')}?mode=ro", uri=True)
        try:
            ids = [str(i) for (i,) in db.execute(
                "SELECT s.id FROM segments s JOIN collections c ON c.id = s.collection WHERE c.name = ? "
                "AND s.scope = 'VECTOR'", (name,))]
        finally:
            db.close()
    except sqlite3.Error:
        return []
    # Chroma names them by UUID, directly in the store's directory: nothing else is removed.
    return [path / i for i in ids if re.fullmatch(r"[0-9a-f-]{36}", i) and (path / i).is_dir()]


def _store_error(exc: Exception, server: str | None, path: Path, settings: StoreSettings) -> CodevouchError:
    text = f"{type(exc).__name__}: {exc}"
    if is_disk_full(exc):
        return disk_full(path if not server else "the Chroma server's disk", exc)
    if server and _timed_out(exc):
        return StoreUnavailable(
            f"the Chroma server at CODEVOUCH_CHROMA_URL={server} did not answer within {settings.chroma_timeout:g} s "
            "(CODEVOUCH_CHROMA_TIMEOUT): it is stalled or overloaded; `--mode lexical` searches without it, "
            "or raise CODEVOUCH_CHROMA_TIMEOUT for a slow server.")
    if server:
        return StoreUnavailable(
            f"the Chroma server at CODEVOUCH_CHROMA_URL={server} cannot be used ({text}); start it "
            "(`chroma run --path DIR --port PORT`) or unset CODEVOUCH_CHROMA_URL to use the embedded store.")
    return BadIndex(f"the vector store {path} cannot be used ({text}); if the index directory is read-only, "
                    "search with --mode lexical; if it is damaged, run `codevouch index build --repair` (it "
                    "rebuilds the vectors from the embedding cache, without embedding anything).")


def _timed_out(exc: BaseException) -> bool:
    """Whether `exc`, or what it was raised from, is an HTTP timeout (httpx's, through chromadb)."""
    seen: BaseException | None = exc
    for _ in range(5):
        if seen is None:
            return False
        if isinstance(seen, TimeoutError) or "Timeout" in type(seen).__name__:
            return True
        seen = seen.__cause__ or seen.__context__
    return False
