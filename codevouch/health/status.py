"""`codevouch index status`: what the index holds per repository and branch (store/status.py),
and how far behind each branch is, counted in git here."""
from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from codevouch.call import carried
from codevouch.errors import GitError, NoCommits
from codevouch.searchpool import in_parallel
from codevouch.store.settings import DEFAULT, StoreSettings
from codevouch.store.status import branch_rows
from codevouch.worktree import gitio
from codevouch.worktree.identity import holds, identify


def index_status(index_dir: Path, repo: Path | None = None, store: StoreSettings = DEFAULT) -> list[dict[str, Any]]:
    """Per branch: its state and how far behind it is. With `repo`, only that repository's
    branches (found by root commit, so from any clone), counted in that clone; else each
    branch is counted in the clone it was built from (store/status.py says which rows).
    `store`: the caller's store settings (a team reader's server)."""
    try:
        ident = identify(repo, index_dir) if repo is not None else None
    except NoCommits:
        return []  # nothing committed: nothing of it can be indexed
    rows = (branch_rows(index_dir, (ident.id, ident.root), store, holds(ident.root)) if ident is not None
            else branch_rows(index_dir, None, store))
    # Each row's git processes on the pool's threads: they wait on git, and an index directory of
    # 100 repositories counted them one after another (~2 s through the engine).
    found = in_parallel([carried(lambda row=row: head_and_behind(
        ident.root if ident is not None else Path(row["repo"]), row["branch"], row["commit"])) for row in rows])
    for row, (head, behind) in zip(rows, found):
        row["head"], row["commits_behind"] = head, behind
    return rows


def head_and_behind(repo: Path, branch: str, indexed: str) -> tuple[str | None, int | None]:
    """The branch's current head and how many commits the index lacks (None if unknown)."""
    try:
        # HEAD's branch from head_state, which drift's check of the checkout asks next: one git
        # process for both, none in the engine while HEAD and its ref are unchanged.
        checkout = gitio.head_state(repo)
        head = checkout.commit if checkout is not None and checkout.branch == branch else \
            gitio.branch_commit(repo, branch)
        if head == indexed:
            return head, 0        # built at its head: nothing to count
        out = gitio.run(repo, "rev-list", "--count", f"{indexed}..{head}", ok_codes=(0, 128))
        return head, int(out.decode().strip()) if out.strip() else None
    except GitError:
        return None, None


def ages(stamp: str | None, now: datetime) -> dict[str, Any]:
    """age_seconds, never negative: a build stamped in the future (its clock was ahead) is 0 s
    old, and clock_ahead_seconds says by how much."""
    age = _age(stamp, now)
    if age is None or age >= 0:
        return {"age_seconds": age}
    return {"age_seconds": 0, "clock_ahead_seconds": -age,
            "note": "the build's clock was ahead of this one: built_at is in the future"}


def _age(stamp: str | None, now: datetime) -> int | None:
    try:
        return int((now - datetime.strptime(stamp or "", "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc))
                   .total_seconds())
    except ValueError:
        return None
