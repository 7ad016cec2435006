"""`codevouch index status`, the store's half: what the index holds per repository and branch.

No git here: how far each branch is behind its head is the caller's to add (health/status.py
fills each row's `head` and `commits_behind`, left None here)."""
from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from codevouch.errors import NotIndexed
from codevouch.store.ledger import Ledger
from codevouch.store.records import BranchState
from codevouch.store.settings import DEFAULT, StoreSettings
from codevouch.store.vectors import VectorStore

# A repository as the caller identified it: (its id, the root commit's hash; its clone's root).
RepoKey = tuple[str, Path]


def branch_rows(index_dir: Path, ident: RepoKey | None = None, settings: StoreSettings = DEFAULT,
                holds: Callable[[Sequence[str]], bool] = lambda commits: True) -> list[dict[str, Any]]:
    """Per branch: its state (`head` and `commits_behind` None, for the caller to fill). With
    `ident`, only that repository's branches (found by root commit, so from any clone: the entry
    its searches use, Ledger.find_branch, which takes `holds`: whether any of some commits is in that clone),
    its `where` the clone. A team reader (CODEVOUCH_CHROMA_URL set, none of the repository's
    branches in its own index) gets the branches of the team snapshot its searches use, marked
    `"source": "team snapshot"`. `settings`: the caller's (store/settings.py)."""
    try:
        ledger: Ledger | None = Ledger(index_dir, readonly=True)
    except NotIndexed:
        ledger = None
    rows: list[dict[str, Any]] = []
    if ledger is not None:
        try:
            rows = _rows(ledger, ident, holds, {"source": "local"})
        finally:
            ledger.close()
    if ident is not None and not rows and settings.chroma_url:
        rows = _team_rows(index_dir, ident, settings, holds)
    return rows


def _team_rows(index_dir: Path, ident: RepoKey, settings: StoreSettings,
               holds: Callable[[Sequence[str]], bool]) -> list[dict[str, Any]]:
    """The branches of the repository's team snapshot (fetched as a search would fetch it)."""
    from codevouch.store import team

    with VectorStore(index_dir, readonly=True, settings=settings) as vectors:
        snapshot = team.fetch(vectors, ident[0], index_dir)
    if snapshot is None:
        return []
    ledger = Ledger(snapshot, readonly=True)
    try:
        return _rows(ledger, ident, holds, {"source": "team snapshot", "server": settings.chroma_url,
                                     "snapshot": snapshot.name})
    finally:
        ledger.close()


def _rows(ledger: Ledger, ident: RepoKey | None, holds: Callable[[Sequence[str]], bool],
          source: dict[str, Any]) -> list[dict[str, Any]]:
    rows = []
    outdated = ledger.outdated_branches()
    for state in ledger.branches():
        if ident is not None and not _same_repository(state, ident):
            continue
        if ident is not None and state.repo_id:
            # Several clones' entries of one branch: the one this clone's searches use (none: a
            # fork's, another project's that shares only the root commit, is not this repository's).
            chosen = ledger.find_branch(ident[0], state.branch, str(ident[1]), holds)
            if chosen is None or chosen.coll != state.coll:
                continue
        where = ident[1] if ident is not None else Path(state.repo)
        files = ledger.files(state.coll)
        rows.append({
            # A team snapshot's branches were built in the builder's clone: counted in this one.
            "repo": state.repo if source["source"] == "local" else str(where),
            "repo_id": state.repo_id, "remote": state.remote,
            "branch": state.branch, "commit": state.commit,
            "commit_date": state.commit_date, "head": None, "commits_behind": None,
            "built_at": state.built_at, "embedder": state.embedder,
            # Built by an older release: `index build` moves it to the shared store.
            "needs_rebuild": state.coll in outdated,
            "files_by_kind": dict(Counter(f.kind for f in files.values() if f.status != "deleted")),
            "files_by_status": dict(Counter(f.status for f in files.values())),
            "chunks_by_kind": ledger.chunk_counts(state.coll),
            "history_chunks": sum(ledger.chunk_counts(state.coll, "deleted").values()),
            "rules": json.loads(state.rules_json),
            **source,
        })
    return rows


def _same_repository(state: BranchState, ident: RepoKey) -> bool:
    return state.repo_id == ident[0] if state.repo_id else state.repo == str(ident[1])
