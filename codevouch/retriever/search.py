"""Dense and lexical search over one branch of a repository's shared store; the hit text comes from git
at the indexed blob."""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from codevouch import caches
from codevouch.call import carried
from codevouch.embedding import Embedder
from codevouch.errors import NotIndexed
from codevouch.request import SearchRequest
from codevouch.retriever import blobcache, defined, fusion, lexlists, matching, queryencoder, stubs
from codevouch.retriever import held as holding
from codevouch.retriever import overlay as live
from codevouch.retriever import query as reading
from codevouch.retriever.collapse import collapse
from codevouch.retriever.matching import DEFINITION_NAME
from codevouch.retriever.members import members, space_size
from codevouch.retriever.mode import SearchMode
from codevouch.retriever.notindexed import not_indexed
from codevouch.retriever.searchrun import NO_CALL, Caller, SearchRun
from codevouch.retriever.settings import DEFAULT, Settings
from codevouch.retriever.standin import STAND_IN
from codevouch.store import (
    BranchState,
    ChunkRecord,
    Ledger,
    StoreSettings,
    VectorStore,
)
from codevouch.store.team import open_for_search
from codevouch.syntax.lines import decode
from codevouch.worktree import gitio
from codevouch.worktree.identity import holds, identify, repo_id
from codevouch.worktree.rules import path_filter

# What made a candidate: it defines a name the query spells (`definition-name`), or the lexical
# or dense list ranked it; `stand-in`: the dense list ranked a working-tree chunk with its
# indexed version's vector (retriever/standin.py). Candidate.matched holds those that apply,
# strongest first.
LEXICAL, DENSE = "lexical", "dense"
MATCHES = (DEFINITION_NAME, LEXICAL, DENSE, STAND_IN)


@dataclass(frozen=True)
class Candidate:
    """One ranked chunk before any check: its record as this search cites it, its fused score,
    its text at the indexed blob, and what matched (MATCHES, strongest first). The public hit is
    `codevouch.Hit` (results.py), made from this."""
    record: ChunkRecord
    score: float
    text: str
    matched: tuple[str, ...] = ()
    # The cosine similarity of the query's and the chunk's vectors (the model's own measure,
    # comparable across queries, unlike `score`, a rank fusion); None in lexical mode, or
    # when no vector of the chunk could be read.
    similarity: float | None = None


class Results(list[Candidate]):
    """The candidates, best first, the working-tree overlay they were searched with (None: off)
    and the query as the search read it (`query`: the api matches each hit's name with it)."""

    def __init__(self, hits: list[Candidate], overlay: live.Overlay | None = None, model: str | None = None,
                 root: Path | None = None, head: gitio.HeadState | None = None,
                 state: BranchState | None = None) -> None:
        super().__init__(hits)
        self.overlay = overlay
        self.model = model     # the model the branch was built with (whose space `similarity` is in)
        self.root = root       # the repository's work tree top
        # What the search learned from git and the ledger: the work tree's top, HEAD and branch
        # (None when rev-parse could not say them in one go), and the branch's indexed state.
        # The validation and the usage record of the same call read them instead of asking again.
        self.head = head
        self.state = state
        self.query: reading.Query | None = None   # the query as read once (retriever/query.py)
        # The indexed definitions of a name the query spells, from files the working tree changed,
        # when nothing defines that name now (deleted since the build): the api says so.
        self.gone: list[ChunkRecord] = []


# What makes a branch's working-tree overlay: (repository root, branch state, the work tree's
# HEAD when known) -> Overlay. The api passes one made of codevouch.indexer.overlay.derive (the
# chunker lives above the retriever).
OverlaySource = Callable[[Path, BranchState, "gitio.HeadState | None"], live.Overlay]


def search(repo_path: Path | str, request: SearchRequest, index_dir: Path, embedder: Embedder | str | None = None,
           settings: Settings = DEFAULT, overlay: OverlaySource | None = None, caller: Caller = NO_CALL) -> Results:
    """The request's top k chunks of a branch, as it asks (request.py, checked when it was made):
    its query on its branch (None: the checked-out one), in its mode (hybrid: dense + lexical,
    fused by rank; dense; lexical), of its kinds (source, test, docs, config; None: every kind),
    with chunks of deleted files when include_history, and only of files its `paths` match
    (gitignore-style: `src/`, `*.py`, `!src/vendor/`), before ranking: each list looks as deep as
    it must for k such chunks, and the overlay's chunks are filtered alike. Its `overlay` and
    `validate` are the api's business: the api passes the overlay's source, or None.

    `embedder`: a model to reuse for the query, or the name of the one expected; either way the
    query is embedded by the model the branch was built with. `settings`: the ranking's knobs
    (kind weights, fusion, collapsing: see settings.py); its build knobs are the index's
    business. `overlay`: what differs from the index in the working tree, searched beside it
    (retriever/overlay.py): an index hit from a changed file gives way to the file's current
    chunks, and at most `caller.embed_limit` new chunks are embedded, within
    `caller.embed_seconds()` (the rest are ranked by words only, and the Results' overlay says
    how many). `caller`: what the caller's Call sets (searchrun.Caller), its store settings too."""
    query, k, mode, kinds = request.query, request.k, request.mode, request.kinds
    keep = path_filter(request.paths) if request.paths else None
    with ThreadPoolExecutor(max_workers=1) as pool:
        held, early = _early_query(pool, embedder, index_dir, mode, query, caller.queries)
        repo, repo_id, branch, head = _locate(repo_path, request.branch, index_dir)
        ledger, state = open_for_search(repo_id, branch, index_dir, str(repo), holds(repo), caller.store)
        try:
            outdated = ledger.outdated(repo_id, str(repo), branch)
            if state is None or outdated is not None:
                raise NotIndexed(not_indexed(repo, branch, index_dir, outdated, ledger.has_entries(repo_id, branch)))
            ov = overlay(repo, state, head) if overlay is not None else None
            searched = _within(ov, keep) if ov is not None and keep is not None else ov
            depth = max(3 * k, settings.list_depth)
            read = reading.read(query, mode, settings)
            # A kind filter drops candidates after ranking: the lists look 4 times deeper, so that k
            # can still be filled, but they are fused at the default's depth first (_scored).
            run = SearchRun(ledger, index_dir, state, read, depth * (4 if kinds else 1), request.include_history, mode,
                            settings, pool, searched if searched is not None and not searched.empty else None,
                            keep, repo, caller, depth)
            rankings = _rankings(run, queryencoder.for_query(held, state.embedder, mode), early)
            if ov is not None and searched is not ov and searched is not None:
                ov.embedded, ov.cached, ov.unembedded = searched.embedded, searched.cached, searched.unembedded
                ov.stand_ins = searched.stand_ins
            read = rankings.read or read   # plain words that name nothing are a sentence
            found, tier, fill = _scored(rankings, settings, read, kinds, list(read.names), depth)
            rankings.fill, rankings.depth = fill, depth if kinds else None
        finally:
            ledger.close()
    def tier_of(rec: ChunkRecord) -> defined.RankKey:
        return tier.get(rec.id, defined.NOT_A_DEFINITION)
    found = fusion.dedupe(fusion.settled(sorted(found, key=lambda item: (tier_of(item[0]), item[1]), reverse=True),
                                         tier_of, lambda rec: _evidence(rankings, rec.id), settings.tie_band))
    # What only fills k follows, ordered on its own: no stub's implementation, no window of a
    # definition, is drawn from it into the default's order (_scored).
    return _results([*_ordered([f for f in found if f[0].id not in fill], settings, tier_of),
                     *_ordered([f for f in found if f[0].id in fill], settings, tier_of)][:k],
                    rankings, read, state, repo, head, ov)


def _ordered(found: list[tuple[ChunkRecord, float]], settings: Settings,
             tier_of: Callable[[ChunkRecord], defined.RankKey]) -> list[tuple[ChunkRecord, float]]:
    """Ranked candidates with each stub after its implementation of the same tier, and one hit
    per definition."""
    found = stubs.after_implementations(found, tier_of)
    return collapse(found) if settings.collapse else found


def _early_query(pool: ThreadPoolExecutor, embedder: Embedder | str | None, index_dir: Path, mode: str, query: str,
                 shared: queryencoder.QueryVectors | None) -> tuple[Embedder | None, tuple[Embedder, Future[list[float]]] | None]:
    """The model the caller holds (None in lexical mode), and, for one that may (see _rankings),
    its embedding of the query started on `pool`'s thread: the held model is most often the
    branch's own, so it starts while git and the ledger say which branch and model this is for."""
    held = None if mode == SearchMode.LEXICAL else queryencoder.held_in(shared, embedder, index_dir)
    early = ((held, queryencoder.shared(shared, held, query, lambda: _start_query(pool, held, query)))
             if held is not None and getattr(held, "threadsafe_query", False) else None)
    return held, early


def _scored(rankings: _Rankings, settings: Settings, read: reading.Query, kinds: frozenset[str] | None,
            names: list[str], depth: int) -> tuple[list[tuple[ChunkRecord, float]], dict[str, defined.RankKey],
                                                  set[str]]:
    """The fused candidates of the kinds asked for, each with its score (weighted by kind when
    no kind filter is given), each definition's rank key, which sorts before the score (a
    definition of a name the query spells ranks above every chunk that only uses it; several
    rank by the fused score, the rest of the query), and the ids that only fill k (after all
    the others).

    A kind filter keeps, it does not reorder: its chunks are scored by the lists cut at the
    default's `depth`, so they come in the default's order; the deeper lists it asked for only
    rank the chunks that none of those reached, after them (fused 4 times deeper, a filter's
    order was its own: `--kind source` beat or lost to the default by where depth moved a target)."""
    scores = [rankings.scores.get(i) for i in range(len(rankings.lists))]
    floors = _floors(rankings, settings)
    fused = fusion.fused(rankings.lists, scores, settings, depth if kinds is not None else None, floors)
    deeper = fusion.fused(rankings.lists, scores, settings, None, floors) if kinds is not None else {}
    fill = {cid for cid in deeper if cid not in fused}
    fused.update((cid, deeper[cid]) for cid in fill)
    tiered = bool(names)
    weights = read.kind_weights(settings)
    found: list[tuple[ChunkRecord, float]] = []
    tier: dict[str, defined.RankKey] = {}   # a definition's rank key (defined.rank_key)
    members = defined.member_names((rankings.records[cid] for cid in fused), names) if tiered else set()
    for cid, score in fused.items():
        rec = rankings.records[cid]
        if kinds is not None and rec.kind not in kinds:
            continue
        if tiered and (cid in rankings.defining or _defines(rec, names)):
            tier[rec.id] = defined.rank_key(rec, read, names, members, cid in rankings.own_case,
                                            cid in rankings.constructors)
        weight = 1.0 if kinds is not None else weights.get(rec.kind, 1.0)
        if rec.declaration and rec.id not in tier and not read.declarations:   # what code does: bodies first
            weight *= settings.declaration_weight
        found.append((rec, score * weight))
    return found, tier, fill


def _floors(rankings: _Rankings, settings: Settings) -> list[float]:
    """Each list's floor in score fusion: the dense list's Settings.dense_floor, the others' 0.0."""
    return [settings.dense_floor if i == rankings.dense_at else 0.0 for i in range(len(rankings.lists))]


def _evidence(rankings: _Rankings, cid: str) -> tuple[float, float]:
    """What breaks a tie of fused scores: the dense similarity, then the lexical score."""
    return rankings.similarity.get(cid, -math.inf), rankings.lexical.get(cid, -math.inf)


def _results(top: list[tuple[ChunkRecord, float]], rankings: _Rankings, read: reading.Query, state: BranchState,
             repo: Path, head: gitio.HeadState | None, ov: live.Overlay | None) -> Results:
    """The top candidates as cited, with their text at the indexed blob (an overlay chunk's
    from the overlay), what matched each and its similarity, and the query as read."""
    names = list(read.names)
    matched = {rec.id: _matched(rec, rankings, names) for rec, _ in top}
    sims = rankings.similarity
    found = [(_cited(rec, state, repo), score) for rec, score in top]
    texts = ov.texts if ov is not None else {}
    blobs = blobcache.read_blobs(repo, [rec.blob_sha for rec, _ in found if rec.blob_sha not in texts])
    blobs.update((rec.blob_sha, texts[rec.blob_sha]) for rec, _ in found if rec.blob_sha in texts)
    lines: dict[str, list[str]] = {}  # a blob split once, however many of its chunks hit
    out = Results([Candidate(rec, score, chunk_text_of(blobs.get(rec.blob_sha), rec, lines), matched[rec.id],
                             sims.get(rec.id)) for rec, score in found], ov, state.embedder, repo, head, state)
    out.query = read
    out.gone = [_cited(rec, state, repo) for rec in rankings.gone]
    return out


def _defines(rec: ChunkRecord, names: list[str]) -> bool:
    """The chunk defines one of the names the query spells (lexical.query_name_keys) by its symbol."""
    return defined.by_symbol(rec, names)


def _matched(rec: ChunkRecord, rankings: _Rankings, names: list[str]) -> tuple[str, ...]:
    # a hit the filter's default-depth fusion scored was matched by the lists it was scored by
    cut = rankings.depth if rec.id not in rankings.fill else None
    found = {label for label, ranks in rankings.members.items() if ranks.get(rec.id, math.inf) < (cut or math.inf)}
    if names and (rec.id in rankings.defining or _defines(rec, names)):
        found.add(DEFINITION_NAME)
    if rec.id in rankings.stand_ins and DENSE in found:
        found.add(STAND_IN)
    return tuple(m for m in MATCHES if m in found)


def _within(ov: live.Overlay, keep: Callable[[str], bool]) -> live.Overlay:
    """The overlay as a --path search sees it: only its chunks of files `keep` takes (the
    files it replaces in the index stay replaced, whatever the filter)."""
    return replace(ov, chunks=[c for c in ov.chunks if keep(c.record.path)])


def _cited(rec: ChunkRecord, state: BranchState, repo: Path) -> ChunkRecord:
    """The record as this search cites it. A live chunk's file is unchanged up to the branch's
    indexed commit, which the last build recorded: cite that commit and that build's time. The
    index may have been built from another clone: cite this one. An overlay chunk's record
    already names what it was cut from (retriever/overlay.py)."""
    if rec.origin != "index":
        return rec
    if rec.status == "live":
        return replace(rec, repo=str(repo), commit=state.commit, commit_date=state.commit_date,
                       indexed_at=state.built_at)
    return replace(rec, repo=str(repo))


def _locate(repo_path: Path | str, branch: str | None,
            index_dir: Path) -> tuple[Path, str, str, gitio.HeadState | None]:
    """This clone's root, the repository's id, the branch to search and the work tree's HEAD:
    one git process while all is well (a search needs no remote label, which identify() also
    reads), else the separate calls, whose errors say what is wrong (not a repository, no
    commits, detached). The root commit may be kept in the index directory (worktree/rootcache.py)."""
    head = gitio.head_state(repo_path)
    name = branch or (head.branch if head is not None else None)
    if head is not None and name:
        return head.root, repo_id(head.root, head.commit, index_dir), name, head
    ident = identify(repo_path, index_dir)
    return ident.root, ident.id, branch or gitio.current_branch(ident.root), head


@dataclass
class _Rankings:
    lists: list[tuple[float, list[str]]]   # (weight, chunk ids best first): the branch's members only
    records: dict[str, ChunkRecord]        # the branch's view of every ranked chunk
    members: dict[str, dict[str, int]] = field(default_factory=dict)  # DENSE / LEXICAL -> id -> its rank there
    defining: set[str] = field(default_factory=set)  # ids that define a name the query spells
    own_case: set[str] = field(default_factory=set)  # those that define it as the query spells it (_scored)
    constructors: set[str] = field(default_factory=set)  # those that define it only as a constructor (_scored)
    similarity: dict[str, float] = field(default_factory=dict)   # chunk id -> cosine to the query
    stand_ins: set[str] = field(default_factory=set)   # overlay ids the dense list ranked with a stand-in
    read: reading.Query | None = None   # the query as read once the index was asked (Query.undecided)
    depth: int | None = None   # a kind filter's: how deep the lists were fused for its first hits (_scored)
    fill: set[str] = field(default_factory=set)   # ids scored by the deeper lists only, to fill k
    gone: list[ChunkRecord] = field(default_factory=list)   # the query's names defined when indexed, gone now
    scores: dict[int, dict[str, float]] = field(default_factory=dict)  # a list's place in `lists` -> its scores
    lexical: dict[str, float] = field(default_factory=dict)   # chunk id -> its lexical score (higher better)
    dense_at: int | None = None   # the dense list's place in `lists`


def _rankings(run: SearchRun, embedder: Embedder | None,
              early: tuple[Embedder, Future[list[float]]] | None = None) -> _Rankings:
    """(weight, ranking) of each list to fuse: dense, then lexical, then the chunks that define a
    name the query spells (`run.read`, the query as read once: its text is embedded, its words are
    the lexical terms, its names the name tier's; the tantivy copy's name field, each candidate
    confirmed by the syntax: retriever/defined.py, its blobs read from `run.repo`).
    `run.keep`: a --path filter, applied by each list to the branch's members (see members.members).

    An embedder that says it may (`threadsafe_query`, see embedding.Embedder) embeds the query on
    `run.pool`'s thread while the lexical half runs on this one: the encoder's matrix products
    release the GIL, and each half is about a third of a search. Any other embeds it in line.
    `early`: a model and its embedding of the query already under way, used when it is `embedder`.

    `run.overlay`: the working-tree overlay. Each list then holds the index's candidates, less
    those of files the overlay replaces, merged by score with the overlay's chunks (cosine
    similarity for the dense list, BM25 on the lexical index's scale for the other;
    retriever/overlay.py)."""
    ledger, index_dir, state, read, mode = run.ledger, run.index_dir, run.state, run.read, run.mode
    settings, ov = run.settings, run.overlay
    assert state.space is not None
    out = _Rankings([], {})
    qvec: Future[list[float]] | None = None
    if mode != SearchMode.LEXICAL and embedder is not None:
        qvec = early[1] if early is not None and early[0] is embedder else queryencoder.shared(
            run.caller.queries, embedder, read.text, lambda: _start_query(run.pool, embedder, read.text))
    lexical_records: dict[str, ChunkRecord] = {}
    lex_scores: dict[str, float] = {}
    ids = lexlists.lexical_ranking(run, lexical_records, lex_scores) if mode != SearchMode.DENSE else []
    dense: _Dense | None = None
    if qvec is not None:
        dense = _dense_ranking(run, qvec.result(), out.records, embedder)
        out.dense_at = len(out.lists)
        out.scores[len(out.lists)] = out.similarity   # filled below, for every ranked chunk
        out.lists.append((1.0, dense.ids))
        out.members[DENSE] = fusion.ranks(dense.ids)
        out.stand_ins = dense.stand_ins
    out.records.update((cid, rec) for cid, rec in lexical_records.items() if cid not in out.records)
    if ov is not None and mode != SearchMode.DENSE:
        terms = lexlists.terms(read, mode, settings)
        own = live.lexical_scores(ov, terms, index_dir, ledger.copy_of(state))
        ids = live.merged(_kept(ids, out.records, ov, run.include_history, state,
                                lambda cid: lex_scores.get(cid, 0.0)), own, run.depth)
        lex_scores.update(own)
    if ov is not None:
        out.records.update((c.record.id, c.record) for c in ov.chunks)
    if ids:
        out.scores[len(out.lists)] = out.lexical = lex_scores
        out.lists.append((settings.lexical_weight, ids))
        out.members[LEXICAL] = fusion.ranks(ids)
    if mode != SearchMode.DENSE:
        _add_name_lists(out, run, ids)
    if dense is not None and embedder is not None:
        sims = _store_sims(dense, out.records, run.fused or run.depth)
        out.similarity.update(_similarities(out, dense.vector, sims, dense.own_vectors,
                                       lambda hashes: ledger.cached_vectors(embedder.name, hashes), dense.own_sims))
    return out


def _store_sims(dense: _Dense, records: dict[str, ChunkRecord], fused: int) -> dict[str, float]:
    """The vector store's cosines of the dense list's first `fused` (the default's depth) only:
    the others are computed as the default computes them (_similarities), so a kind filter's
    deeper list does not change a tie's evidence (the store's float32 answer differs from the
    cosine computed here in the eighth digit)."""
    first = {records[cid].text_hash for cid in dense.ids[:fused] if cid in records}
    return {h: s for h, s in dense.sims.items() if h in first}


@dataclass
class _Dense:
    """The dense list and what its similarities are read from."""
    ids: list[str]                    # chunk ids best first: the branch's members, merged with the overlay's
    vector: list[float]               # the query's
    sims: dict[str, float]            # text hash -> cosine, as the vector store answered
    own_vectors: dict[str, list[float]] = field(default_factory=dict)   # overlay chunk id -> its vector
    own_sims: dict[str, float] = field(default_factory=dict)     # overlay chunk id -> cosine, as its list scored it
    stand_ins: set[str] = field(default_factory=set)   # overlay chunk ids scored with a stand-in vector


def _dense_ranking(run: SearchRun, vector: list[float], records: dict[str, ChunkRecord],
                   embedder: Embedder | None) -> _Dense:
    """The branch's nearest chunks to the query's vector (their records added to `records`);
    with the overlay and the model to embed its chunks, merged by cosine with the overlay's."""
    ledger, index_dir, state, depth, ov = run.ledger, run.index_dir, run.state, run.depth, run.overlay
    assert state.space is not None
    space = state.space
    out = _Dense([], vector, {})
    nearest_of = holding.nearest_of(run, vector) if run.caller.held else None
    if nearest_of is None:
        vectors = vector_reader(ledger, index_dir, run.caller.store)
        nearest_of = lambda n: vectors.query(space, vector, n, expected=space_size(ledger, space))  # noqa: E731

    def nearest(n: int) -> list[str]:
        found = nearest_of(n)
        out.sims.update(found)
        return [cid for cid, _ in found]
    out.ids = members(run, run.include_history, records, nearest)
    if ov is not None and embedder is not None:
        given = live.vectors_for(ov, embedder, ledger, index_dir, run.caller.embed_limit, run.caller.embed_seconds,
                                 state=state)
        own_dense = live.dense_scores(ov, given, vector, depth)
        out.own_sims.update(own_dense)
        out.ids = live.merged(_kept(out.ids, records, ov, run.include_history, state,
                                    lambda cid: out.sims.get(records[cid].text_hash, 0.0)),
                              own_dense, depth)
        # Only the dense score is borrowed: the hit keeps the chunk's current text, record and check.
        out.own_vectors = given.every()
        out.stand_ins = set(given.borrowed)
    return out


def _add_name_lists(out: _Rankings, run: SearchRun, lexical_ids: Sequence[str]) -> None:
    """A name query's definitions (_add_definitions); a sentence's name-words list (_add_name_words).
    Plain words that spell a name only as a whole, and that no definition has, are a sentence
    (Query.undecided): `out.read`."""
    read = run.read
    if read.names:
        _add_definitions(out, run, lexical_ids)
        if read.undecided and not out.defining:
            out.read = read = read.as_sentence()
    if read.sentence:
        _add_name_words(out, run, read)


def _add_definitions(out: _Rankings, run: SearchRun, lexical_ids: Sequence[str] = ()) -> None:
    """The chunks that define a name the query spells (the overlay's replacing the index's for its
    files), proposed by the name field and the lexical list (`lexical_ids`), as their syntax says
    (defined.confirmed): `out.defining`, and a list to fuse when they weigh something."""
    read, ov, repo = run.read, run.overlay, run.repo
    names = read.lookup
    defs = lexlists.name_ranking(run, names, list(read.words), out.records)
    indexed = defs
    if ov is not None:
        defs = [cid for cid, _ in _kept(defs, out.records, ov, run.include_history, run.state, lambda cid: 0.0)]
        defs += live.defining(ov, names)
    defs = defined.proposed(defs, lexical_ids, out.records)
    texts = ov.texts if ov is not None else {}

    def blobs(shas: list[str]) -> dict[str, bytes]:
        found = {sha: texts[sha] for sha in shas if sha in texts}
        rest = [sha for sha in shas if sha not in found]
        if rest and repo is not None:
            found.update(blobcache.read_blobs(repo, rest))
        return found
    defs = defined.confirmed(defs, out.records, read, blobs)
    out.defining.update(defs)
    inside = defined.defined_inside(defs, out.records, blobs)
    out.own_case.update(defined.spelled_as_written(defs, out.records, read, inside))
    out.constructors.update(defined.constructors_only(defs, out.records, names, inside))
    if not defs and ov is not None:
        # Defined at the indexed commit, in files the working tree has changed, and nowhere now.
        out.gone = [_named(out.records[cid], read) for cid in defined.confirmed(
            [cid for cid in indexed if out.records[cid].path in ov.replaced], out.records, read, blobs)]
    if defs and run.settings.name_weight > 0:
        out.lists.append((run.settings.name_weight, defs))


def _named(rec: ChunkRecord, read: reading.Query) -> ChunkRecord:
    """The record under the one name of its symbol the query spells (a chunk of several small
    definitions is named `build_environ, Environ`)."""
    part = next((p for p in rec.symbol.split(", ") if matching.spells(read, p)), None)
    return replace(rec, symbol=part) if part else rec


def _add_name_words(out: _Rankings, run: SearchRun, read: reading.Query) -> None:
    """A sentence's lists of the chunks whose defined names share its words: against the
    qualified names' words at name_words_weight, and each name's own words at own_words_weight
    (lexlists.NAME_WORDS); the index's, less the overlay's replaced files, merged by score with
    the overlay's own. `read`: the run's query, or that query read as a sentence (_add_name_lists)."""
    ov, state = run.overlay, run.state
    for words_of, knob in lexlists.NAME_WORDS.items():
        weight = getattr(run.settings, knob)
        if weight <= 0:
            continue
        scores: dict[str, float] = {}
        named = lexlists.name_words_ranking(run, read, out.records, scores, words_of)
        if ov is not None:
            own = live.name_words_scores(ov, read.words, run.index_dir, run.ledger.copy_of(state), words_of)
            named = live.merged(_kept(named, out.records, ov, run.include_history, state,
                                      lambda cid: scores.get(cid, 0.0)), own, run.depth)   # noqa: B023
            scores.update(own)
        if words_of == "ownwords" and run.settings.own_words_per_name:   # the overlay's too, alike
            named = lexlists.per_name(named, out.records, scores, lexlists.field_stats(run, words_of), read.words)
        if named:
            out.scores[len(out.lists)] = scores
            out.lists.append((weight, named))


def _similarities(rankings: _Rankings, query: Sequence[float], sims: dict[str, float],
                  own: dict[str, list[float]],
                  cached: Callable[[list[str]], dict[str, list[float]]],
                  own_sims: dict[str, float] | None = None) -> dict[str, float]:
    """chunk id -> cosine similarity to the query, for every ranked chunk: the vector store's
    answer for the dense neighbours, else the vector from the overlay or the embedding cache
    (a chunk only the lexical half found), whose texts were embedded by this model."""
    import numpy as np

    out: dict[str, float] = {}
    missing: dict[str, list[str]] = {}
    for cid in {cid for _, ranking in rankings.lists for cid in ranking}:
        rec = rankings.records[cid]
        if rec.origin == "index" and rec.text_hash in sims:
            out[cid] = sims[rec.text_hash]
        elif own_sims and cid in own_sims:
            out[cid] = own_sims[cid]
        elif cid in own:
            out[cid] = _cosine(np, query, own[cid])
        elif rec.origin == "index":
            missing.setdefault(rec.text_hash, []).append(cid)
    for text_hash, vec in (cached(list(missing)) if missing else {}).items():
        for cid in missing[text_hash]:
            out[cid] = _cosine(np, query, vec)
    return out


def _cosine(np: Any, a: Sequence[float], b: Sequence[float]) -> float:
    x, y = np.asarray(a, dtype=np.float32), np.asarray(b, dtype=np.float32)
    norms = float(np.linalg.norm(x) * np.linalg.norm(y))
    return float(x @ y) / norms if norms else 0.0


def _kept(ids: list[str], records: dict[str, ChunkRecord], ov: live.Overlay, include_history: bool,
          state: BranchState, score: Callable[[str], float]) -> list[tuple[str, float]]:
    """The index's candidates that the overlay leaves standing, with their scores: a changed
    file's chunks give way to the overlay's; a file gone from the working tree stays only as
    history (with include_history), last seen at the indexed commit."""
    kept = []
    for cid in ids:
        rec = records[cid]
        if rec.status == "live" and rec.path in ov.replaced:
            if not (include_history and rec.path in ov.deleted):
                continue
            records[cid] = replace(rec, status="deleted", commit=state.commit, commit_date=state.commit_date)
        kept.append((cid, score(cid)))
    return kept


def _start_query(pool: ThreadPoolExecutor, embedder: Embedder, query: str) -> Future[list[float]]:
    """The query's vector: on `pool`'s thread for a model that says it may, else now, in line."""
    if getattr(embedder, "threadsafe_query", False):
        return pool.submit(carried(embedder.embed_query), query)   # in the call's environment
    done: Future[list[float]] = Future()
    done.set_result(embedder.embed_query(query))
    return done


# One open reader per index directory, with the ledger's branch states it was opened under.
# Opening Chroma costs ~40 ms and its first count/query reloads the HNSW index (~80 ms at 10k
# chunks): far more than a search. But a reader opened before another process wrote the store
# keeps serving the old data, so it is reopened as soon as any build has committed since.
_READERS: dict[Path, tuple[tuple[Any, ...], VectorStore]] = {}


def vector_reader(ledger: Ledger, index_dir: Path, store: StoreSettings) -> VectorStore:
    """The open reader of `index_dir`, with this call's `store` settings (its busy timeout: a
    reader kept from an earlier call keeps the server it was opened on, as it always has)."""
    states = ledger.builds()
    cached = _READERS.get(index_dir)
    if cached is not None and cached[0] == states:
        cached[1].settings = store
        return cached[1]
    if cached is not None:
        cached[1].close()
    reader = VectorStore(index_dir, readonly=True, settings=store)
    _READERS[index_dir] = (states, reader)
    return reader


def _close_readers() -> None:
    while _READERS:
        _, (_, reader) = _READERS.popitem()
        reader.close()


caches.register("codevouch.retriever.search.readers", _close_readers, _READERS.__len__)


def chunk_text_of(data: bytes | None, rec: ChunkRecord, split: dict[str, list[str]] | None = None) -> str:
    """The chunk's lines of its blob; `split` keeps blobs already split by id."""
    if data is None:  # the blob was garbage-collected from the repository
        return ""
    lines = split.get(rec.blob_sha) if split is not None else None
    if lines is None:
        lines = decode(data).split("\n")
        if split is not None:
            split[rec.blob_sha] = lines
    return "\n".join(lines[rec.start_line - 1:rec.end_line])
