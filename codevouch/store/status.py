"""`codevouch index status`: what the index holds per repository and branch, and how far behind it is."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from codevouch.errors import GitError, NoCommits, NotIndexed
from codevouch.store.ledger import Ledger
from codevouch.store.naming import server_url
from codevouch.store.records import BranchState
from codevouch.store.vectors import VectorStore
from codevouch.worktree import gitio
from codevouch.worktree.identity import RepoIdentity, identify


def index_status(index_dir: Path, repo: Path | None = None) -> list[dict[str, Any]]:
    """Per branch: its state and how far behind it is. With `repo`, only that repository's
    branches (found by root commit, so from any clone), counted in that clone. A team reader
    (CODEVOUCH_CHROMA_URL set, none of the repository's branches in its own index) gets the
    branches of the team snapshot its searches use, marked `"source": "team snapshot"`."""
    try:
        ident = identify(repo) if repo is not None else None
    except NoCommits:
        return []  # nothing committed: nothing of it can be indexed
    try:
        ledger: Ledger | None = Ledger(index_dir, readonly=True)
    except NotIndexed:
        ledger = None
    rows: list[dict[str, Any]] = []
    if ledger is not None:
        try:
            rows = _rows(ledger, ident, {"source": "local"})
        finally:
            ledger.close()
    if ident is not None and not rows and server_url():
        rows = _team_rows(index_dir, ident)
    return rows


def _team_rows(index_dir: Path, ident: RepoIdentity) -> list[dict[str, Any]]:
    """The branches of the repository's team snapshot (fetched as a search would fetch it)."""
    from codevouch.store import team

    with VectorStore(index_dir, readonly=True) as vectors:
        snapshot = team.fetch(vectors, ident.id, index_dir)
    if snapshot is None:
        return []
    ledger = Ledger(snapshot, readonly=True)
    try:
        return _rows(ledger, ident, {"source": "team snapshot", "server": server_url(),
                                     "snapshot": snapshot.name})
    finally:
        ledger.close()


def _rows(ledger: Ledger, ident: RepoIdentity | None, source: dict[str, Any]) -> list[dict[str, Any]]:
    rows = []
    outdated = ledger.outdated_branches()
    for state in ledger.branches():
        if ident is not None and not _same_repository(state, ident):
            continue
        where = ident.root if ident is not None else Path(state.repo)
        head, behind = head_and_behind(where, state.branch, state.commit)
        files = ledger.files(state.coll)
        rows.append({
            # A team snapshot's branches were built in the builder's clone: counted in this one.
            "repo": state.repo if source["source"] == "local" else str(where),
            "repo_id": state.repo_id, "remote": state.remote,
            "branch": state.branch, "commit": state.commit,
            "commit_date": state.commit_date, "head": head, "commits_behind": behind,
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


def _same_repository(state: BranchState, ident: RepoIdentity) -> bool:
    return state.repo_id == ident.id if state.repo_id else state.repo == str(ident.root)


def head_and_behind(repo: Path, branch: str, indexed: str) -> tuple[str | None, int | None]:
    """The branch's current head and how many commits the index lacks (None if unknown)."""
    try:
        head = gitio.branch_commit(repo, branch)
        out = gitio.run(repo, "rev-list", "--count", f"{indexed}..{head}", ok_codes=(0, 128))
        return head, int(out.decode().strip()) if out.strip() else None
    except GitError:
        return None, None
