"""The refresh plan: what a build must do, decided from the ledger's manifest and the new tree.

Pure: no git, no store. Comparing blob ids path by path (rather than trusting a diff from
the last indexed commit) keeps the plan right when that commit was force-pushed away,
when a previous build was killed half way, or when the exclusion rules changed.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from codevouch.store import FileRow
from codevouch.worktree.gitio import TreeEntry


@dataclass(frozen=True)
class RefreshPlan:
    index: tuple[str, ...]       # files to read, chunk and embed at the new commit
    retire: tuple[str, ...]      # files whose current chunks are replaced (changed or re-indexed)
    to_history: tuple[str, ...]  # files gone from the branch: their chunks become history
    drop: tuple[str, ...]        # gone files that had no chunks (skipped or excluded)
    unchanged: int

    @property
    def is_noop(self) -> bool:
        return not (self.index or self.retire or self.to_history or self.drop)


def plan_refresh(old: Mapping[str, FileRow], new: Mapping[str, TreeEntry], full: bool = False) -> RefreshPlan:
    """`full` re-reads every file (rules or model changed); embeddings still come from the cache."""
    index: list[str] = []
    retire: list[str] = []
    unchanged = 0
    for path, entry in sorted(new.items()):
        row = old.get(path)
        present = row is not None and row.status != "deleted"
        if present and not full and row is not None and row.blob_sha == entry.blob_sha:
            unchanged += 1
            continue
        index.append(path)
        if present:
            retire.append(path)
    to_history: list[str] = []
    drop: list[str] = []
    for path, row in sorted(old.items()):
        if path in new or row.status == "deleted":
            continue
        (to_history if row.status == "live" and row.chunks else drop).append(path)
    return RefreshPlan(tuple(index), tuple(retire), tuple(to_history), tuple(drop), unchanged)
