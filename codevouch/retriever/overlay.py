"""The working-tree overlay, as the retriever sees it: what differs between a branch's indexed
commit and the working tree, chunked, embedded within a bound, and ranked beside the index.

The overlay is made by codevouch/indexer/overlay.py (the git side, the rules and the chunker:
the same as a build's); this module holds its data, finds or makes its vectors, and scores
its chunks so that they merge into the index's two rankings (dense: cosine similarity, as the
vector store answers; lexical: BM25 as the lexical index scores, lexindex.bm25, over its
statistics plus the overlay's), before the usual rank fusion (search._fuse).

Vectors: looked up by embedded-text hash in the ledger's embedding cache (read-only), then in
the overlay's own cache (store/overlaycache.py, which says why it is a separate file); only
texts never seen are embedded, by the search's encoder (embedding.search_encoder: NumPy for the
packaged model, so a search never imports torch), within a time budget per call, new
definitions first. A changed definition left without its own vector ranks with its indexed
version's (a stand-in, retriever/standin.py); the rest of the overlay is searched lexically
only, and the summary says how many chunks that is. `embed_rest` embeds what is left, for a
resident caller once it has answered.
"""
from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from codevouch import caches, call, environment
from codevouch.embedding import Embedder, search_encoder
from codevouch.retriever import standin
from codevouch.store import BranchState, ChunkRecord, Ledger, lexical, lexindex, overlaycache
from codevouch.worktree.gitio import WorktreeStatus

# New chunks embedded per call, at most: a ceiling beside the time budget, which decides first
# (CODEVOUCH_OVERLAY_SECONDS, 0.5 s: the NumPy encoder embeds 4-10 chunks a second on one of the
# benchmark's 2 shared cores, and a first query after a large change must stay near 3 s;
# docs/OVERLAY.md). The count stays for callers that want a fixed number (scripts, tests); its
# default is CODEVOUCH_OVERLAY_LIMIT's (environment.py).
EMBED_LIMIT: int = environment.OVERLAY_LIMIT.default
# Seconds one search may spend embedding, when its caller gives none: CODEVOUCH_OVERLAY_SECONDS's default.
EMBED_SECONDS: float = environment.OVERLAY_SECONDS.default
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
    renamed_from: dict[str, str] = field(default_factory=dict)   # new path -> indexed path, renamed since
    not_searched: int = 0                       # changed files past the file limit
    embedded: int = 0                           # chunks embedded by this call
    unembedded: int = 0                         # chunks without their own vector (past the budget)
    stand_ins: int = 0                          # of those, chunks ranked with their indexed version's
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
                "not_embedded": self.unembedded, "stand_ins": self.stand_ins, "files_not_searched": self.not_searched,
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
            words = self.unembedded - self.stand_ins
            how = ("searched by words only" if not self.stand_ins else
                   f"{self.stand_ins} ranked with their indexed version's vector, {words} by words only")
            line += (f"; {self.unembedded} chunk{'s' if self.unembedded != 1 else ''} not embedded ({how}); run "
                     "`codevouch index build`")
        if self.not_searched:
            line += (f"; {self.not_searched} changed file{'s' if self.not_searched != 1 else ''} not searched "
                     "(over the overlay's file limit); run `codevouch index build`")
        return line


@dataclass(frozen=True)
class OverlayVectors:
    """The overlay's vectors for one call: each chunk's own, and the stand-ins (retriever/standin.py)."""
    own: dict[str, list[float]]                                      # chunk id -> its text's vector
    borrowed: dict[str, list[float]] = field(default_factory=dict)   # chunk id -> its indexed version's

    def every(self) -> dict[str, list[float]]:
        """chunk id -> the vector it ranks with (its own, else a stand-in)."""
        return {**self.borrowed, **self.own} if self.borrowed else self.own


@dataclass(frozen=True)
class Unfinished:
    """An overlay whose last search left texts unembedded: what a resident engine embeds after
    answering (embed_rest), so the next search ranks them by meaning."""
    overlay: Overlay
    embedder: Embedder
    index_dir: Path
    state: BranchState | None


# The latest search's unfinished overlay, if any (one slot: an older one is superseded). Only a
# resident caller takes it; a one-shot CLI process exits with it unread.
_UNFINISHED: list[Unfinished] = []


def take_unfinished() -> Unfinished | None:
    """The latest search's overlay with texts left to embed, once (None when there is none)."""
    return _UNFINISHED.pop() if _UNFINISHED else None


def has_unfinished() -> bool:
    """Whether the latest search left texts to embed (take_unfinished would give them)."""
    return bool(_UNFINISHED)


def vectors_for(overlay: Overlay, embedder: Embedder, ledger: Ledger, index_dir: Path,
                limit: int | None = EMBED_LIMIT, seconds: float | Callable[[], float] = EMBED_SECONDS,
                state: BranchState | None = None) -> OverlayVectors:
    """The overlay's chunks' vectors: cached ones, and texts embedded now within `seconds` (the
    caller's CODEVOUCH_OVERLAY_SECONDS; a function is asked once the cached vectors are known,
    so a bad value fails only a search that gets that far) and at most `limit` of them, kept in the overlay cache;
    new definitions first (nothing stands in for them), then changed ones, which meanwhile rank
    with their indexed version's vector (`state`: the branch, to find it; None: no stand-ins).
    Sets the overlay's embedded / cached / unembedded / stand_ins counts."""
    ids = overlay.chunk_ids()
    kept = _VECTORS.get((embedder.name, ids))
    if kept is not None and overlaycache.holds(embedder.name, kept[0]):
        # The same chunks as a call before, every vector in this process's memory: a warm call.
        overlay.embedded, overlay.cached, overlay.unembedded, overlay.stand_ins = 0, len(ids), 0, 0
        return OverlayVectors(kept[1])
    by_hash, found = _known(overlay, embedder.name, ledger, index_dir)
    cached = set(found)
    missing, borrowed_hash = _to_embed(overlay, by_hash, found, ledger, state)
    made = _embed_within(missing, by_hash, embedder, limit, seconds() if callable(seconds) else seconds)
    overlaycache.put(index_dir, embedder.name, made)
    found.update(made)
    left = [h for h in missing if h not in made]
    _UNFINISHED[:] = [Unfinished(overlay, embedder, index_dir, state)] if left else []
    overlay.embedded = sum(len(by_hash[h]) for h in made)
    overlay.cached = sum(len(by_hash[h]) for h in cached)
    overlay.unembedded = sum(len(by_hash[h]) for h in left)
    result = {c.record.id: found[h] for h, cs in by_hash.items() if h in found for c in cs}
    borrowed = _borrowed(borrowed_hash, result, embedder.name, ledger)
    overlay.stand_ins = len(borrowed)
    if not left and overlaycache.holds(embedder.name, tuple(by_hash)):
        if len(_VECTORS) >= 8:
            _VECTORS.clear()
        _VECTORS[(embedder.name, ids)] = (tuple(by_hash), result)
    return OverlayVectors(result, borrowed)


def embed_rest(overlay: Overlay, embedder: Embedder, ledger: Ledger, index_dir: Path,
               state: BranchState | None = None, stop: Callable[[], bool] | None = None) -> int:
    """Embed every chunk of `overlay` no cache holds a vector for, and keep them in the overlay
    cache (this process's memory and overlay-cache.sqlite): the next search of the same overlay
    then finds them all. For a resident caller, after it has answered; `stop()` is asked between
    two texts (True: stop now). With the branch's `state`, new definitions go first (changed ones
    have a stand-in meanwhile). The number of texts embedded."""
    by_hash, found = _known(overlay, embedder.name, ledger, index_dir)
    missing, _ = _to_embed(overlay, by_hash, found, ledger, state)
    encode = search_encoder(embedder)
    made: dict[str, list[float]] = {}
    for h in missing:
        if stop is not None and stop():
            break
        made[h] = list(encode(by_hash[h][0].embedded))
        if len(made) % 32 == 0:   # a killed caller keeps most of its work
            overlaycache.put(index_dir, embedder.name, made)
    overlaycache.put(index_dir, embedder.name, made)
    return len(made)


def _known(overlay: Overlay, model: str, ledger: Ledger, index_dir: Path
           ) -> tuple[dict[str, list[OverlayChunk]], dict[str, list[float]]]:
    """(text hash -> the overlay's chunks of that text, text hash -> a vector some cache holds)."""
    by_hash: dict[str, list[OverlayChunk]] = {}
    for c in overlay.chunks:
        by_hash.setdefault(c.record.text_hash, []).append(c)
    # This process's memory first (a warm call reads no file), then the ledger's cache, then the overlay's.
    found: dict[str, list[float]] = overlaycache.remembered(model, by_hash)
    rest = [h for h in by_hash if h not in found]
    if rest:
        from_ledger = ledger.cached_vectors(model, rest)
        overlaycache.remember(model, from_ledger)
        found.update(from_ledger)
        found.update(overlaycache.get(index_dir, model, [h for h in rest if h not in found]))
    return by_hash, found


def _to_embed(overlay: Overlay, by_hash: dict[str, list[OverlayChunk]], found: dict[str, list[float]],
              ledger: Ledger, state: BranchState | None) -> tuple[list[str], dict[str, str]]:
    """The text hashes no cache holds a vector for, in the order to embed them, and the stand-ins
    of their chunks (_stand_in_hashes)."""
    missing = [h for h in by_hash if h not in found]
    borrowed = _stand_in_hashes(overlay, [c for h in missing for c in by_hash[h]], ledger, state)
    # Nothing stands in for a new definition: it is embedded first.
    missing.sort(key=lambda h: all(c.record.id in borrowed for c in by_hash[h]))
    return missing, borrowed


def _stand_in_hashes(overlay: Overlay, chunks: Sequence[OverlayChunk], ledger: Ledger,
                     state: BranchState | None) -> dict[str, str]:
    """chunk id -> its indexed version's text hash, for those of `chunks` that have one."""
    if state is None or state.space is None or not chunks:
        return {}
    # Every chunk of the overlay is paired (the n-th window of a symbol with the n-th), then only
    # those asked for are kept.
    wanted = {c.record.id for c in chunks}
    records = [c.record for c in overlay.chunks]
    indexed = overlaycache.indexed_versions(ledger, state, standin.old_paths(
        [c.record for c in chunks], overlay.renamed_from))
    return {cid: h for cid, h in standin.stand_ins(records, overlay.renamed_from, indexed).items() if cid in wanted}


def _borrowed(hashes: dict[str, str], own: dict[str, list[float]], model: str, ledger: Ledger) -> dict[str, list[float]]:
    """chunk id -> its stand-in vector, for the chunks left without their own."""
    wanted = {cid: h for cid, h in hashes.items() if cid not in own}
    if not wanted:
        return {}
    vectors = overlaycache.remembered(model, wanted.values())
    rest = [h for h in set(wanted.values()) if h not in vectors]
    if rest:
        from_ledger = ledger.cached_vectors(model, rest)
        overlaycache.remember(model, from_ledger)
        vectors.update(from_ledger)
    return {cid: vectors[h] for cid, h in wanted.items() if h in vectors}


def _embed_within(todo: Sequence[str], by_hash: dict[str, list[OverlayChunk]], embedder: Embedder,
                  limit: int | None, seconds: float) -> dict[str, list[float]]:
    """Vectors of `todo`'s texts, in order, until `seconds` are spent (checked before each: one
    text at least when seconds > 0) or `limit` texts are made."""
    if seconds <= 0 or not todo or (limit is not None and limit <= 0):
        return {}
    encode = search_encoder(embedder)
    started = time.monotonic()
    made: dict[str, list[float]] = {}
    for h in todo[:limit]:
        if made and time.monotonic() - started >= seconds:
            break
        call.check()              # a caller that gave up stops here, between two texts
        made[h] = list(encode(by_hash[h][0].embedded))
    return made


# (model, overlay chunk ids) -> (their text hashes, chunk id -> vector), for warm calls
_VECTORS: dict[tuple[str, tuple[str, ...]], tuple[tuple[str, ...], dict[str, list[float]]]] = {}
caches.register("codevouch.retriever.overlay.vectors", _VECTORS.clear, _VECTORS.__len__)


def dense_scores(overlay: Overlay, given: OverlayVectors, query: Sequence[float],
                 limit: int | None = None) -> list[tuple[str, float]]:
    """(chunk id, cosine similarity to the query), best first: what the vector store answers
    (the `limit` best, when given); a chunk with a stand-in scores with it."""
    import numpy as np

    every = overlay.chunk_ids()
    vectors = given.every()
    # vectors holds only overlay chunks (vectors_for): as many as there are chunks means all.
    ids = every if len(vectors) == len(every) else tuple(i for i in every if i in vectors)
    if not ids:
        return []
    # The same ids may rank with a stand-in in one call and their own vector in the next.
    key = (ids, tuple(i for i in ids if i in given.borrowed)) if given.borrowed else (ids, ())
    unit = _MATRICES.get(key)
    if unit is None:
        # Normalised once per set of chunks: a warm call (the same edits) is one product.
        mat = np.asarray([vectors[i] for i in ids], dtype=np.float32)
        norms = np.linalg.norm(mat, axis=1, keepdims=True)
        unit = mat / np.where(norms == 0, 1.0, norms)
        if len(_MATRICES) >= 8:
            _MATRICES.clear()
        _MATRICES[key] = unit
    q = np.asarray(query, dtype=np.float32)
    sims = (unit @ q) / (float(np.linalg.norm(q)) or 1.0)
    order = np.argsort(-sims, kind="stable")
    return [(ids[i], float(sims[i])) for i in order[:limit]]


# (chunk ids with a vector) -> their vectors as unit rows; (chunk ids) -> their lexical postings
_MATRICES: dict[tuple[tuple[str, ...], tuple[str, ...]], Any] = {}
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
    ids = overlay.chunk_ids()
    found = _POSTINGS.get(ids)
    if found is None:
        terms: dict[str, list[tuple[int, int]]] = {}
        names: dict[str, list[int]] = {}
        lengths = []
        for at, c in enumerate(overlay.chunks):
            tf, dl = _tokens(lexical.split(c.doc)[0], analyse)   # its terms, not the names its parse defines
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


def lexical_scores(overlay: Overlay, terms: Sequence[str], index_dir: Path,
                   copy: lexindex.Copy | None) -> list[tuple[str, float]]:
    """(chunk id, BM25) of the overlay's chunks that hold a query term, best first: the lexical
    index's own scoring (lexindex.bm25: its analysis, clauses and field norms) with its document
    count, tokens and frequencies plus the overlay's, so a chunk scores here as it will in the
    index once built there."""
    if not overlay.chunks or not terms:
        return []
    post = _postings(overlay, lexindex.analyzer())
    clauses = lexindex.clauses(terms)
    stats = lexindex.stats(index_dir, copy, [t for c in clauses for t, _ in c]) if copy is not None else None
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


def name_words_scores(overlay: Overlay, words: Sequence[str], index_dir: Path,
                      copy: lexindex.Copy | None, field: str = "ownwords") -> list[tuple[str, float]]:
    """(chunk id, BM25) of the overlay's chunks whose defined names hold a query word, best first:
    `field` (`ownwords` or `namewords`) as the lexical index scores it (lexindex.search with only=field),
    with the copy's counts for that field plus the overlay's, so a new or changed definition
    ranks in a sentence's name-words list as it will once built (retriever/search.py)."""
    if not overlay.chunks or not words:
        return []

    analyse = lexindex.analyzer()
    words_of = lexical.own_name_words if field == "ownwords" else lexical.name_words
    texts = [words_of(c.record.symbol) for c in overlay.chunks]
    counted = [_tokens(text, analyse) for text in texts]
    clauses = lexindex.clauses(words)
    stats = (lexindex.stats(index_dir, copy, [t for c in clauses for t, _ in c], field=field)
             if copy is not None else None)
    total, tokens, df_index = stats if stats is not None else (0, None, {})
    n = total + len(texts)
    own = sum(length for _tf, length in counted)
    avgdl = ((tokens + own) / n if tokens is not None else own / len(texts)) or 1.0
    scored: dict[int, float] = {}
    for clause in clauses:
        idf = sum(lexindex.idf(sum(1 for tf, _ in counted if tf[t]) + df_index.get(t, 0), n) for t, _ in clause)
        for at, tf in _name_clause_hits(texts, counted, clause):
            scored[at] = scored.get(at, 0.0) + lexindex.bm25(idf, tf, counted[at][1], avgdl)
    out = [(overlay.chunks[at].record.id, score) for at, score in sorted(scored.items()) if score > 0]
    return sorted(out, key=lambda item: -item[1])


def _name_clause_hits(texts: list[str], counted: list[tuple[Counter[str], int]],
                      clause: tuple[tuple[str, int], ...]) -> list[tuple[int, int]]:
    """(position, tf) of the name-words texts a clause matches: a word's count, or, for a word of
    several tokens (a phrase), its occurrences read from the text's positions."""
    if len(clause) == 1:
        return [(at, tf[clause[0][0]]) for at, (tf, _length) in enumerate(counted) if tf[clause[0][0]]]
    out = []
    (first, base), rest = clause[0], clause[1:]
    for at, text in enumerate(texts):
        where = {t: set(ps) for t, ps in lexindex.positions(text).items()}
        tf = sum(1 for p in where.get(first, ()) if all(p - base + off in where.get(t, ()) for t, off in rest))
        if tf:
            out.append((at, tf))
    return out


def _clause_hits(overlay: Overlay, post: _Postings, clause: tuple[tuple[str, int], ...]) -> list[tuple[int, int]]:
    """(chunk position, tf) of the chunks a clause matches: a term's postings, or a phrase's
    occurrences read from the positions of the chunks holding all its tokens."""
    if len(clause) == 1:
        return list(post.terms.get(clause[0][0], ()))
    held = [{at for at, _ in post.terms.get(t, ())} for t, _ in clause]
    out = []
    for at in sorted(set.intersection(*held)):
        where = _positions(lexical.split(overlay.chunks[at].doc)[0])
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
