"""One search's fixed facts, gathered once by search.search after it has found the branch, and
handed whole to the functions that build its lists (search.py's dense and name lists,
lexlists.py's tantivy ones, each cut to the branch by members.members) instead of a dozen
arguments each."""
from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from codevouch.retriever import overlay as live
from codevouch.retriever import query as reading
from codevouch.retriever.queryencoder import QueryVectors
from codevouch.retriever.settings import Settings
from codevouch.store import BranchState, Ledger, StoreSettings
from codevouch.store.settings import DEFAULT as STORE_DEFAULT


@dataclass(frozen=True)
class Caller:
    """What the caller's Call sets for one search (the api reads it from the Call: callreads.py):
    at most `embed_limit` new overlay chunks are embedded, within `embed_seconds()` (its
    CODEVOUCH_OVERLAY_SECONDS, asked only when the overlay embeds), and the store's settings
    (its busy timeout, its server); `queries`: the query vectors the call's searches share (a
    search of several repositories: queryencoder.QueryVectors; None: embed it here), and whether
    a small space's nearest are ranked from its vectors held in memory (retriever/held.py: a search
    of several repositories, as their bounds are) rather than asked of the store. The default: no
    Call, the declared defaults."""
    embed_limit: int = live.EMBED_LIMIT
    embed_seconds: Callable[[], float] = lambda: live.EMBED_SECONDS
    store: StoreSettings = STORE_DEFAULT
    queries: QueryVectors | None = None
    held: bool = False


@dataclass(frozen=True)
class SearchRun:
    """What every list of one search is built from; none of it changes while they are built."""
    ledger: Ledger                # open for the search's length (search.search closes it)
    index_dir: Path
    state: BranchState            # the branch's indexed state: its space, collection and commit
    read: reading.Query           # the query as read once (retriever/query.py)
    depth: int                    # how deep each list looks: 4 times the default's under a kind filter
    include_history: bool         # chunks of deleted files too
    mode: str                     # hybrid, dense or lexical (SearchMode)
    settings: Settings            # the ranking's knobs (settings.py)
    pool: ThreadPoolExecutor      # the thread the query may be embedded on while the lexical half runs
    overlay: live.Overlay | None  # the working-tree overlay as searched (--path applied); None: off or empty
    keep: Callable[[str], bool] | None   # a --path filter, applied by each list to the branch's members
    repo: Path | None             # the clone whose git the definitions' blobs are read from
    caller: Caller                # the caller's overlay embedding limits and store settings
    fused: int | None = None      # how deep the lists are fused for the first hits (the default's depth; None: depth)


NO_CALL = Caller()     # a search with no Call: the declared defaults
