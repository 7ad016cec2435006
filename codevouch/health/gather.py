"""`Index.health`'s facts, fetched: a repository branch's recent usage records, its indexed
commit, head and commits behind, the working tree's dirty paths and the chunks per file a
rebuild's estimate reads (git and the ledger), for assess.py to judge (pure)."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from codevouch.errors import InputError
from codevouch.health import assess as health
from codevouch.health.status import head_and_behind
from codevouch.store import BranchState, Ledger, usage
from codevouch.worktree import gitio
from codevouch.worktree.config import load_repo_config


def index_health(repo: Path, index_dir: Path, branch: str | None, recent: int | None,
                 branch_state: Callable[[Path, str], BranchState | None]) -> health.Health:
    """`Index.health` of the repository at `repo` in the index at `index_dir`. branch_state: the
    branch's state in the ledger (None when it was never built)."""
    if recent is not None and recent < 1:
        raise InputError(f"recent must be at least 1 call (got {recent}).")
    root = gitio.repo_root(repo)
    branch = branch or gitio.current_branch(root)
    limits = health.thresholds(load_repo_config(root))
    limits = replace(limits, recent=recent) if recent is not None else limits
    records = usage.UsageLog(index_dir).recent(str(root), limits.recent, branch)
    state = branch_state(root, branch)
    head, behind = head_and_behind(root, branch, state.commit) if state else (None, None)
    # A stale hit's cause is read against the working tree now, and only the checked-out
    # branch has one: another branch's records are judged by its commits alone.
    dirty: frozenset[str] = frozenset()
    checked_out = gitio.head_state(root)
    if checked_out is not None and checked_out.branch == branch:
        status = gitio.worktree_status(root)
        dirty = status.changed | status.untracked
    changed = len(gitio.diff_trees(root, state.commit, head)) if state and head and behind else None
    standing = health.Standing(state.commit if state else None, head, behind, dirty=dirty, changed_files=changed,
                               chunks_per_file=_chunks_per_file(index_dir, state) if changed else 8.0)
    return health.assess(str(root), branch, records, standing, limits)


def _chunks_per_file(index_dir: Path, state: BranchState | None) -> float:
    """The branch's live chunks per live file (8 when it has none), for a rebuild's estimate."""
    if state is None:
        return 8.0
    ledger = Ledger(index_dir, readonly=True)
    try:
        files = sum(1 for f in ledger.files(state.coll).values() if f.status != "deleted")
        chunks = sum(ledger.chunk_counts(state.coll).values())
    finally:
        ledger.close()
    return chunks / files if files else 8.0
