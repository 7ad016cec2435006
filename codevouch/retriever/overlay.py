"""The working-tree overlay, as the retriever sees it: what differs between a branch's indexed
commit and the working tree, chunked, embedded within a bound, and ranked beside the index.

The overlay is made by codevouch/indexer/overlay.py (the git side, the rules and the chunker:
the same as a build's); this module holds its data, finds or makes its vectors, and scores
its chunks so that they merge into the index's two rankings (dense: cosine similarity, as the
vector store answers; lexical: BM25 as the lexical index scores, lexindex.bm25, over its
statistics plus the overlay's), before the usual rank fusion (search._fuse).

Vectors: looked up by embedded-text hash in the ledger's embedding cache (read-only), then in
the overlay's own cache (store/overlaycache.py, which says why it is a separate file); only
texts never seen are embedded, at most `limit` per call. The rest of the overlay is searched
lexically only, and the summary says how many chunks that is.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from codevouch import caches, environment
from codevouch.embedding import Embedder
from codevouch.store import ChunkRecord, Ledger, lexindex, overlaycache
from codevouch.worktree.gitio import WorktreeStatus

# New chunks embedded per call, at most: chosen by measurement (docs/OVERLAY.md): the fake
# and MiniLM models embed ~30 chunks/s on the 2-core benchmark machine, so 64 keeps a first
# query after a large edit within ~2 s; a typical edit (one to five files) is 5-40 chunks. The
# figure (64) is declared as the default of CODEVOUCH_OVERLAY_LIMIT (codevouch/environment.py).
EMBED_LIMIT: int = environment.OVERLAY_LIMIT.default
# Changed files read and chunked per call, at most (the rest are named in the summary, not
# searched): chunking runs at ~150 files/s, so a tree 10,000 files away still answers in seconds.
FILE_LIMIT = 500


@dataclass(frozen=True)
class OverlayFile:
    """One file the overlay covers: where it is now and what became of it."""
    path: str
    status: str              # added | modified | renamed | removed
    origin: str              # uncommitted | committed | removed
    chunks: int = 0
    note: str | None = None  # why it has no chunks: excluded (rule), skipped (reason), not searched


@dataclass(frozen=True)
class OverlayChunk:
    record: ChunkRecord      # origin "uncommitted" (commit "") or "committed" (commit: HEAD)
    text: str
    embedded: str            # what the model embeds (indexer/embedtext.py)
    doc: str                 # the lexical document (store/lexical.document)


@dataclass
class Overlay:
    """Everything that differs from the index, at one moment."""
    branch: str
    base: str                                   # the branch's indexed commit
    head: str | None                            # the working tree's HEAD
    commits_behind: int | None                  # commits from base to HEAD
    files: list[OverlayFile] = field(default_factory=list)
    chunks: list[OverlayChunk] = field(default_factory=list)
    texts: dict[str, bytes] = field(default_factory=dict)   # blob id -> content, for the hits' text
    replaced: frozenset[str] = frozenset()      # index paths whose chunks the overlay replaces
    deleted: frozenset[str] = frozenset()       # index paths gone from the working tree
    not_searched: int = 0                       # changed files past the file limit
    embedded: int = 0                           # chunks embedded by this call
    unembedded: int = 0                         # chunks searched lexically only (past the limit)
    cached: int = 0                             # chunks whose vector a cache held
    seconds: float = 0.0
    # The indexed commit is no longer in the repository (rewritten and garbage-collected): no
    # diff against it is possible, so nothing is searched live and the note says to rebuild.
    base_gone: bool = False
    # The `git status` (untracked files included) the overlay was derived from, at its moment:
    # the validator of the same search reads it instead of asking git again. None: not taken.
    status: WorktreeStatus | None = field(default=None, compare=False, repr=False)
    # Blob ids of the changed files the overlay hashed (path -> id), for the same validator.
    hashes: dict[str, str] = field(default_factory=dict, compare=False, repr=False)

    # The chunks' ids, made once they are all there (chunk_ids); not copied by dataclasses.replace.
    _ids: tuple[str, ...] | None = field(default=None, init=False, compare=False, repr=False)

    def chunk_ids(self) -> tuple[str, ...]:
        """The ids of the chunks, in order (the key of what warm calls keep: the same edits give
        the same ids). Call once the overlay is made."""
        if self._ids is None or len(self._ids) != len(self.chunks):
            self._ids = tuple(c.record.id for c in self.chunks)
        return self._ids

    @property
    def empty(self) -> bool:
        return not self.files and not self.not_searched and not self.commits_behind and not self.base_gone

    def summary(self) -> dict[str, Any]:
        """The overlay as data (`--json`'s "overlay", the MCP tools' too)."""
        return {"index": f"{self.branch}@{self.base[:7]}", "indexed_commit": self.base, "head": self.head,
                "commits_behind": self.commits_behind, "files_behind": len(self.files) + self.not_searched,
                "files_searched": sum(1 for f in self.files if f.chunks),
                "chunks": len(self.chunks), "embedded": self.embedded, "cached": self.cached,
                "not_embedded": self.unembedded, "files_not_searched": self.not_searched,
                "deleted": sorted(self.deleted),
                "skipped": [{"path": f.path, "reason": f.note} for f in self.files if f.note],
                "seconds": round(self.seconds, 3), "base_gone": self.base_gone, "note": self.note()}

    def note(self) -> str | None:
        """One line for text output when the index is behind the working tree, else None."""
        if self.empty:
            return None
        if self.base_gone:
            return (f"index {self.branch}@{self.base[:7]}: that commit is no longer in the repository (history "
                    "rewritten and garbage-collected), so the working tree is not searched live; run "
                    "`codevouch index build`")
        behind = []
        if self.commits_behind:
            behind.append(f"{self.commits_behind} commit{'s' if self.commits_behind != 1 else ''}")
        nfiles = len(self.files) + self.not_searched
        behind.append(f"{nfiles} file{'s' if nfiles != 1 else ''}")
        searched = sum(1 for f in self.files if f.chunks)
        line = (f"index {self.branch}@{self.base[:7]} is {' and '.join(behind)} behind the working tree; "
                f"{searched} file{'s' if searched != 1 else ''} searched live ({len(self.chunks)} chunks, "
                f"{self.embedded} embedded)")
        if self.unembedded:
            line += (f"; {self.unembedded} chunk{'s' if self.unembedded != 1 else ''} not embedded (searched by "
                     "words only); run `codevouch index build`")
        if self.not_searched:
            line += (f"; {self.not_searched} changed file{'s' if self.not_searched != 1 else ''} not searched "
                     "(over the overlay's file limit); run `codevouch index build`")
        return line


def vectors_for(overlay: Overlay, embedder: Embedder, ledger: Ledger, index_dir: Path,
                limit: int = EMBED_LIMIT) -> dict[str, list[float]]:
    """chunk id -> vector for the overlay's chunks: cached ones, and up to `limit` texts embedded
    now (kept in the overlay cache). Sets the overlay's embedded / cached / unembedded counts."""
    ids = overlay.chunk_ids()
    kept = _VECTORS.get((embedder.name, ids))
    if kept is not None and overlaycache.holds(embedder.name, kept[0]):
        # The same chunks as a call before, every vector in this process's memory: a warm call.
        overlay.embedded, overlay.cached, overlay.unembedded = 0, len(ids), 0
        return kept[1]
    by_hash: dict[str, list[OverlayChunk]] = {}
    for c in overlay.chunks:
        by_hash.setdefault(c.record.text_hash, []).append(c)
    # This process's memory first (a warm call reads no file), then the ledger's cache, then the overlay's.
    found: dict[str, list[float]] = overlaycache.remembered(embedder.name, by_hash)
    rest = [h for h in by_hash if h not in found]
    if rest:
        from_ledger = ledger.cached_vectors(embedder.name, rest)
        overlaycache.remember(embedder.name, from_ledger)
        found.update(from_ledger)
        found.update(overlaycache.get(index_dir, embedder.name, [h for h in rest if h not in found]))
    cached = set(found)
    missing = [h for h in by_hash if h not in found]
    todo, left = missing[:max(limit, 0)], missing[max(limit, 0):]
    if todo:
        texts = [by_hash[h][0].embedded for h in todo]
        made = {h: list(v) for h, v in zip(todo, embedder.embed(texts))}
        overlaycache.put(index_dir, embedder.name, made)
        found.update(made)
    overlay.embedded = sum(len(by_hash[h]) for h in todo)
    overlay.cached = sum(len(by_hash[h]) for h in cached)
    overlay.unembedded = sum(len(by_hash[h]) for h in left)
    result = {c.record.id: found[h] for h, cs in by_hash.items() if h in found for c in cs}
    if not left and overlaycache.holds(embedder.name, tuple(by_hash)):
        if len(_VECTORS) >= 8:
            _VECTORS.clear()
        _VECTORS[(embedder.name, ids)] = (tuple(by_hash), result)
    return result


# (model, overlay chunk ids) -> (their text hashes, chunk id -> vector), for warm calls
_VECTORS: dict[tuple[str, tuple[str, ...]], tuple[tuple[str, ...], dict[str, list[float]]]] = {}
caches.register("codevouch.retriever.overlay.vectors", _VECTORS.clear, _VECTORS.__len__)


def dense_scores(overlay: Overlay, vectors: dict[str, list[float]], query: Sequence[float],
                 limit: int | None = None) -> list[tuple[str, float]]:
    """(chunk id, cosine similarity to the query), best first: what the vector store answers
    (the `limit` best, when given)."""
    import numpy as np

    every = overlay.chunk_ids()
    # vectors holds only overlay chunks (vectors_for): as many as there are chunks means all.
    ids = every if len(vectors) == len(every) else tuple(i for i in every if i in vectors)
    if not ids:
        return []
    unit = _MATRICES.get(ids)
    if unit is None:
        # Normalised once per set of chunks: a warm call (the same edits) is one product.
        mat = np.asarray([vectors[i] for i in ids], dtype=np.float32)
        norms = np.linalg.norm(mat, axis=1, keepdims=True)
        unit = mat / np.where(norms == 0, 1.0, norms)
        if len(_MATRICES) >= 8:
            _MATRICES.clear()
        _MATRICES[ids] = unit
    q = np.asarray(query, dtype=np.float32)
    sims = (unit @ q) / (float(np.linalg.norm(q)) or 1.0)
    order = np.argsort(-sims, kind="stable")
    return [(ids[i], float(sims[i])) for i in order[:limit]]


# (chunk ids with a vector) -> their vectors as unit rows; (chunk ids) -> their lexical postings
_MATRICES: dict[tuple[str, ...], Any] = {}
caches.register("codevouch.retriever.overlay.matrices", _MATRICES.clear, _MATRICES.__len__)


@dataclass(frozen=True)
class _Postings:
    """The overlay's chunks as an inverted index: a query then touches only the chunks that hold
    one of its terms (scoring every chunk per call was most of a warm call on ~1,000 chunks)."""
    ids: tuple[str, ...]
    lengths: tuple[int, ...]
    avgdl: float
    terms: dict[str, list[tuple[int, int]]]     # token -> (chunk position, its frequency there)
    names: dict[str, list[int]]                 # definition key -> chunk positions (lexical.definition_keys)


_POSTINGS: dict[tuple[str, ...], _Postings] = {}
caches.register("codevouch.retriever.overlay.postings", _POSTINGS.clear, _POSTINGS.__len__)


def _postings(overlay: Overlay, analyse: Callable[[str], list[str]]) -> _Postings:
    from codevouch.store import lexical

    ids = overlay.chunk_ids()
    found = _POSTINGS.get(ids)
    if found is None:
        terms: dict[str, list[tuple[int, int]]] = {}
        names: dict[str, list[int]] = {}
        lengths = []
        for at, c in enumerate(overlay.chunks):
            tf, dl = _tokens(c.doc, analyse)
            lengths.append(dl)
            for t, n in tf.items():
                terms.setdefault(t, []).append((at, n))
            for key in lexical.definition_keys(c.doc, c.record.symbol):
                names.setdefault(key, []).append(at)
        found = _Postings(ids, tuple(lengths), (sum(lengths) / len(lengths) if lengths else 0.0) or 1.0, terms, names)
        if len(_POSTINGS) >= 8:
            _POSTINGS.clear()
        _POSTINGS[ids] = found
    return found


def defining(overlay: Overlay, names: Sequence[str]) -> list[str]:
    """Ids of the overlay's chunks that define one of `names` (lexical.query_name_keys), in order."""
    if not overlay.chunks or not names:
        return []
    post = _postings(overlay, lexindex.analyzer())
    return [post.ids[at] for at in sorted({at for n in names for at in post.names.get(n, ())})]


def lexical_scores(overlay: Overlay, terms: Sequence[str], index_dir: Path, space: str,
                   stamp: str | None) -> list[tuple[str, float]]:
    """(chunk id, BM25) of the overlay's chunks that hold a query term, best first: the lexical
    index's own scoring (lexindex.bm25: its analysis, clauses and field norms) with its document
    count, tokens and frequencies plus the overlay's, so a chunk scores here as it will in the
    index once built there."""
    if not overlay.chunks or not terms:
        return []
    post = _postings(overlay, lexindex.analyzer())
    clauses = lexindex.clauses(terms)
    stats = lexindex.stats(index_dir, space, stamp, [t for c in clauses for t, _ in c]) if stamp else None
    total, tokens, df_index = stats if stats is not None else (0, None, {})
    n = total + len(post.ids)
    avgdl = (tokens + sum(post.lengths)) / n if tokens is not None else post.avgdl
    scored: dict[int, float] = {}
    for clause in clauses:
        idf = sum(lexindex.idf(len(post.terms.get(t, ())) + df_index.get(t, 0), n) for t, _ in clause)
        for at, tf in _clause_hits(overlay, post, clause):
            scored[at] = scored.get(at, 0.0) + lexindex.bm25(idf, tf, post.lengths[at], avgdl)
    out = [(post.ids[at], score) for at, score in sorted(scored.items()) if score > 0]
    return sorted(out, key=lambda item: -item[1])


def _clause_hits(overlay: Overlay, post: _Postings, clause: tuple[tuple[str, int], ...]) -> list[tuple[int, int]]:
    """(chunk position, tf) of the chunks a clause matches: a term's postings, or a phrase's
    occurrences read from the positions of the chunks holding all its tokens."""
    if len(clause) == 1:
        return list(post.terms.get(clause[0][0], ()))
    held = [{at for at, _ in post.terms.get(t, ())} for t, _ in clause]
    out = []
    for at in sorted(set.intersection(*held)):
        where = _positions(overlay.chunks[at].doc)
        (first, base), rest = clause[0], clause[1:]
        tf = sum(1 for p in where[first] if all(p - base + off in where[t] for t, off in rest))
        if tf:
            out.append((at, tf))
    return out


# a chunk's lexical document -> its tokens' positions (for phrases; kept for warm calls)
_POSITIONS: dict[str, dict[str, frozenset[int]]] = {}
caches.register("codevouch.retriever.overlay.positions", _POSITIONS.clear, _POSITIONS.__len__)


def _positions(doc: str) -> dict[str, frozenset[int]]:
    found = _POSITIONS.get(doc)
    if found is None:
        if len(_POSITIONS) > 50_000:
            _POSITIONS.clear()
        found = _POSITIONS[doc] = {t: frozenset(at) for t, at in lexindex.positions(doc).items()}
    return found


# a chunk's lexical document -> its analysed tokens and their number (kept for warm calls)
_TOKENS: dict[str, tuple[Counter[str], int]] = {}
caches.register("codevouch.retriever.overlay.tokens", _TOKENS.clear, _TOKENS.__len__)


def _tokens(doc: str, analyse: Callable[[str], list[str]]) -> tuple[Counter[str], int]:
    found = _TOKENS.get(doc)
    if found is None:
        if len(_TOKENS) > 50_000:
            _TOKENS.clear()
        tokens = analyse(doc)
        found = _TOKENS[doc] = (Counter(tokens), len(tokens))
    return found


def merged(index: Sequence[tuple[str, float]], overlay: Sequence[tuple[str, float]], depth: int) -> list[str]:
    """One ranking from the index's and the overlay's scored candidates (same scale), best first."""
    both = sorted([*index, *overlay], key=lambda item: -item[1])
    return [cid for cid, _ in both[:depth]]
