"""A branch searched from its index alone, with no working tree: a repository in the index that is
not on this machine (a teammate's, a clone moved or removed since its build). Search across
repositories (codevouch/across.py) asks it for such a repository instead of leaving it out.

The lists are the ones `search.search` builds (dense, lexical, names) and fused the same way, with
no overlay (there is no working tree to hold one) and no git facts of a checkout. A hit's text is
read at its indexed blob from `clone`, a clone on this machine that holds the indexed commit, when
there is one; else it is empty. Nothing here says a hit is current: the caller's verdict says
it was checked against the indexed commit only (validator.model, `not-on-this-machine`).

Keep `search_recorded` in step with the lines of `search.search` it repeats (the lists, then the
order: tiers, settling, stubs after their implementations, the fill last).
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from codevouch.embedding import Embedder
from codevouch.errors import CodevouchError
from codevouch.request import SearchRequest
from codevouch.retriever import blobcache, defined, fusion, queryencoder
from codevouch.retriever import query as reading
from codevouch.retriever import search as searching
from codevouch.retriever.searchrun import NO_CALL, Caller, SearchRun
from codevouch.retriever.settings import DEFAULT, Settings
from codevouch.store import BranchState, ChunkRecord, Ledger
from codevouch.worktree import gitio
from codevouch.worktree.rules import path_filter


def search_recorded(state: BranchState, request: SearchRequest, index_dir: Path, clone: Path | None,
                    embedder: Embedder | str | None = None, settings: Settings = DEFAULT,
                    caller: Caller = NO_CALL) -> searching.Results:
    """The request's top k chunks of the indexed branch `state` (its query, mode, kinds, paths and
    include_history; its branch and overlay do not apply), each cited at the indexed commit, its
    text read from `clone` at the indexed blob (None: no clone here holds it, and the text is
    empty). `embedder`, `settings`, `caller`: as `search.search` takes them."""
    query, k, mode, kinds = request.query, request.k, request.mode, request.kinds
    keep = path_filter(request.paths) if request.paths else None
    with ThreadPoolExecutor(max_workers=1) as pool:
        held, early = searching._early_query(pool, embedder, index_dir, mode, query, caller.queries)
        ledger = Ledger(index_dir, readonly=True)
        try:
            depth = max(3 * k, settings.list_depth)
            read = reading.read(query, mode, settings)
            run = SearchRun(ledger, index_dir, state, read, depth * (4 if kinds else 1), request.include_history, mode,
                            settings, pool, None, keep, clone, caller, depth)
            rankings = searching._rankings(run, queryencoder.for_query(held, state.embedder, mode), early)
            read = rankings.read or read
            found, tier, fill = searching._scored(rankings, settings, read, kinds, list(read.names), depth)
        finally:
            ledger.close()

    def tier_of(rec: ChunkRecord) -> defined.RankKey:
        return tier.get(rec.id, defined.NOT_A_DEFINITION)
    found = fusion.dedupe(fusion.settled(sorted(found, key=lambda item: (tier_of(item[0]), item[1]), reverse=True),
                                         tier_of, lambda rec: searching._evidence(rankings, rec.id), settings.tie_band))
    top = [*searching._ordered([f for f in found if f[0].id not in fill], settings, tier_of),
           *searching._ordered([f for f in found if f[0].id in fill], settings, tier_of)][:k]
    recorded = Path(state.repo)
    cited = [(searching._cited(rec, state, recorded), score) for rec, score in top]
    blobs = blobcache.read_blobs(clone, [rec.blob_sha for rec, _ in cited]) if clone is not None else {}
    lines: dict[str, list[str]] = {}
    out = searching.Results([searching.Candidate(rec, score, searching.chunk_text_of(blobs.get(rec.blob_sha), rec, lines),
                                                 searching._matched(rec, rankings, list(read.names)),
                                                 rankings.similarity.get(rec.id)) for rec, score in cited],
                            None, state.embedder, None, None, state)
    out.query = read
    return out


def holding_clone(state: BranchState, candidates: list[Path]) -> Path | None:
    """A clone on this machine that holds `state`'s indexed commit (and so its tree and blobs: a
    commit id names its content): the first of `candidates` (paths: the index's other clones of the
    repository, the other repositories searched) that is a repository here and has it."""
    for where in dict.fromkeys(candidates):
        if str(where) == state.repo or not where.is_dir():
            continue
        try:
            if gitio.has_commit(where, state.commit):
                return where
        except CodevouchError:   # not a repository, or unreadable: look on
            continue
    return None


def blobs_at(clone: Path, commit: str, records: list[ChunkRecord]) -> set[str]:
    """The records' paths whose blob at `commit` in `clone` is the indexed one."""
    tree = gitio.tree_blobs(clone, commit)
    return {rec.path for rec in records if tree.get(rec.path) == rec.blob_sha}


__all__ = ["blobs_at", "holding_clone", "search_recorded"]
