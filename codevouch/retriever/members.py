"""A ranking over the repository's shared space, cut to one branch's chunks.

The vector store and the tantivy copy rank keys (a vector's text hash, a lexical row's key),
each of which stands for every chunk of a branch with that text. `members` asks a ranking for
enough keys that a search's depth of them (searchrun.SearchRun) are the branch's, by the ledger,
and asks again deeper when too few were; `space_size` is what it (and the dense list's
`expected`) counts the space by.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path

from codevouch import caches
from codevouch.retriever.searchrun import SearchRun
from codevouch.store import ChunkRecord, Ledger


def members(run: SearchRun, include_history: bool, records: dict[str, ChunkRecord],
            fetch: Callable[[int], list[str]], by: str = "text_hash", *, ranked: int | None = None,
            admit: Callable[[ChunkRecord], bool] | None = None) -> list[str]:
    """The best `run.depth` chunks (ids) of the run's branch from a ranking of keys over the
    repository's shared space: a vector's text hash, or a lexical row's key (by="lex_key"), which
    stand for every chunk of the branch with that text (as the branch sees it, see branch_members).

    No Chroma `where` filter (100-350 ms at 100k vectors): ask for depth / share results,
    where share is the branch's part of the space, keep the branch's members by the ledger,
    and ask again, deeper (at most settings.max_widenings asks), in the rare case that too few
    were members. `run.keep`: a --path filter, applied to the members, whose share of the space it
    makes smaller (so the first ask is already deep enough, on average, for `depth` members that it
    keeps). `ranked`: how many chunks `fetch` ranks, when not the whole space (the branch's lexical
    copy holds its live chunks only). `admit`: a rule on the chunks themselves, which asks again
    deeper when it refuses too many."""
    ledger, state, depth, keep = run.ledger, run.state, run.depth, run.keep
    assert state.space is not None
    # the space's vectors, with a killed build's leftovers
    total = ranked if ranked is not None else space_size(ledger, state.space) + ledger.pending_count()
    mine = (ledger.branch_size(state.coll, include_history) if keep is None
            else _kept_size(ledger, state.coll, include_history, keep))
    if total == 0 or mine == 0:
        return []
    n = min(total, math.ceil(depth * total / mine * 1.2))
    found: list[str] = []
    chunks: dict[str, list[ChunkRecord]] = {}
    for _ in range(run.settings.max_widenings):
        keys = fetch(n)
        fresh = [k for k in keys if k not in chunks]
        rows = ledger.branch_members(state, fresh, by, include_history)
        chunks.update((k, rows.get(k, [])) for k in fresh)
        found = _taken(keys, chunks, keep, admit)
        records.update((rec.id, rec) for key in keys for rec in chunks.get(key, ()) if rec.id not in records)
        if len(found) >= min(depth, mine) or n >= total or len(keys) < n:   # fewer than asked: all there are
            break
        n = min(total, n * 4)
    return found[:depth]


def _taken(keys: Sequence[str], chunks: dict[str, list[ChunkRecord]], keep: Callable[[str], bool] | None,
           admit: Callable[[ChunkRecord], bool] | None) -> list[str]:
    """The ids of the keys' chunks, in rank order, that the --path filter and the rule take."""
    return [rec.id for key in keys for rec in chunks.get(key, ())
            if (keep is None or keep(rec.path)) and (admit is None or admit(rec))]


def _kept_size(ledger: Ledger, coll: str, include_history: bool, keep: Callable[[str], bool]) -> int:
    """How many of the branch's chunks lie in files `keep` takes (live, plus history when asked)."""
    statuses = ("live", "deleted") if include_history else ("live",)
    return sum(row.chunks for row in ledger.files(coll).values() if row.status in statuses and keep(row.path))


# Counting a space's chunks reads its whole index (~15 ms CPU at 100k), twice a search. Every
# commit that adds or collects chunks of a space gives it a new lexical stamp, so the count is
# kept per stamp. (A space a branch moved away from loses chunks without a new stamp: its
# count is then too high, which only makes `members` ask for a few more neighbours.)
_SPACE_SIZES: dict[tuple[Path, str, str], int] = {}


def space_size(ledger: Ledger, space: str) -> int:
    """How many chunks the space holds (its vectors), counted once per lexical stamp."""
    stamp = ledger.lexical_stamp(space)
    if stamp is None:
        return ledger.space_size(space)
    key = (ledger.path, space, stamp)
    if key not in _SPACE_SIZES:
        if len(_SPACE_SIZES) > 64:
            _SPACE_SIZES.clear()
        _SPACE_SIZES[key] = ledger.space_size(space)
    return _SPACE_SIZES[key]


# Registered under the name it had while it lived in search.py (the names are the registry's keys).
caches.register("codevouch.retriever.search.space_sizes", _SPACE_SIZES.clear, _SPACE_SIZES.__len__)
