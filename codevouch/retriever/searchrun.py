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
from codevouch.retriever.settings import Settings
from codevouch.store import BranchState, Ledger, StoreSettings


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
    embed_limit: int              # at most this many new overlay chunks are embedded
    keep: Callable[[str], bool] | None   # a --path filter, applied by each list to the branch's members
    repo: Path | None             # the clone whose git the definitions' blobs are read from
    store: StoreSettings          # the caller's store settings: the vector reader's busy timeout, its server
    embed_seconds: Callable[[], float]   # the caller's overlay time budget, read when the overlay embeds
