"""`codevouch index forget`: which entries of the index `--repo` (and `--branch`) name, removed
under the writer lock as a build writes (store/writer.py: one ledger transaction, then garbage).

`--repo` names entries as `index status` shows them: the path of the clone that built them (on
disk or not), else, for a path that is a clone of an indexed repository (a moved or second clone),
that repository's entries (its root commit), else a root commit id (7 hex digits or more). With a
Chroma server (CODEVOUCH_CHROMA_URL) the builder's lease is claimed first, as a build claims it,
and the repository's team snapshot is published again, or withdrawn with its last branch.
"""
from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from codevouch.errors import GitError, NotIndexed
from codevouch.store import BranchState, IndexDir, team
from codevouch.store.forget import Forgotten
from codevouch.store.settings import DEFAULT, StoreSettings
from codevouch.store.writer import PhaseHook, Writer, open_writer
from codevouch.worktree import gitreads
from codevouch.worktree.identity import RepoIdentity, identify


@dataclass(frozen=True)
class ForgetReport:
    """What `index forget` removed (`to_json()`: its --json document, but for the index)."""
    repo: str                       # the path that built the entries, as `index status` shows it
    repo_id: str | None             # the repository's root commit (None: built by an older release)
    branches: list[str]             # the branches forgotten (one per entry: two clones' entries of one branch twice)
    remaining: list[str]            # the repository's branches still indexed; none: the repository is forgotten
    chunks: int                     # chunk rows removed (those no remaining entry shares)
    vectors: int                    # vectors removed (distinct texts no remaining chunk uses)
    cache_removed: int              # embedding-cache rows removed with those vectors
    cache_kept: int                 # cache rows of removed vectors kept: another space still holds the text
    server: str | None = None       # the Chroma server the vectors were on
    entries: list[dict[str, Any]] = field(default_factory=list)

    @property
    def repository(self) -> bool:
        return not self.remaining

    def to_json(self) -> dict[str, Any]:
        return {"repo": self.repo, "repo_id": self.repo_id, "branches": self.branches,
                "repository_forgotten": self.repository, "remaining_branches": self.remaining,
                "removed": {"entries": self.entries, "chunks": self.chunks, "vectors": self.vectors,
                            "embedding_cache": self.cache_removed},
                "kept": {"embedding_cache": self.cache_kept}, "server": self.server}


def forget(index_dir: Path, repo: Path, given: str, branches: Sequence[str] = (), wait: float = 0,
           store: StoreSettings = DEFAULT, on_phase: PhaseHook | None = None) -> ForgetReport:
    """Forget the entries `repo` names (`given`: the words the caller typed, for a root commit id
    and the messages), only those of `branches` when given. NotIndexed, with nothing changed,
    when the index holds no such repository or branch; IndexLocked after `wait` seconds behind
    another writer."""
    if not IndexDir(index_dir).has_ledger():
        raise NotIndexed(f"nothing is indexed in {index_dir}, so there is nothing to forget.")
    ident = _identity(repo, index_dir)
    with open_writer(index_dir, wait, store) as writer:
        every = writer.ledger.branches()
        chosen = _select(every, repo, given, ident)
        if not chosen:
            held = len({s.repo_id or s.repo for s in every})
            raise NotIndexed(f"{given} is not in the index at {index_dir} (it holds {held} "
                             f"{'repository' if held == 1 else 'repositories'}: `codevouch index status --index "
                             f"{index_dir}` lists them by the path that built them); nothing was forgotten.")
        chosen = _of_branches(chosen, branches, index_dir)
        ids = sorted({s.repo_id for s in chosen if s.repo_id})
        server = writer.vectors.settings.chroma_url
        if server:
            _claim(writer, ids, chosen)
        done = writer.forget(chosen, on_phase or (lambda _phase: None))
        paths = {s.repo for s in chosen if s.repo_id is None}
        left = [s for s in writer.ledger.branches() if s.repo_id in ids or (s.repo_id is None and s.repo in paths)]
        if server:
            _republish(writer, ids, left)
        writer.after_forget(done)
    return _report(chosen, done, left, server)


def _identity(repo: Path, index_dir: Path) -> RepoIdentity | None:
    """The repository at `repo` when it is a clone on disk; None when it is not (gone, not a
    repository, nothing committed)."""
    if not repo.is_dir():
        return None
    gitreads.guard(repo)
    try:
        return identify(repo, index_dir)
    except GitError:
        return None


def _select(states: Sequence[BranchState], repo: Path, given: str, ident: RepoIdentity | None) -> list[BranchState]:
    """The entries `--repo` names (the module docstring says in which order)."""
    paths = {str(repo), os.path.realpath(repo)}
    found = [s for s in states if s.repo in paths]
    if found:
        return found
    if ident is not None:
        return [s for s in states if s.repo_id == ident.id or (s.repo_id is None and s.repo == str(ident.root))]
    if re.fullmatch(r"[0-9a-f]{7,40}", given):
        ids = {s.repo_id for s in states if s.repo_id and s.repo_id.startswith(given)}
        if len(ids) == 1:
            return [s for s in states if s.repo_id in ids]
    return []


def _of_branches(chosen: list[BranchState], branches: Sequence[str], index_dir: Path) -> list[BranchState]:
    """The entries of `branches` among `chosen` (all with none named); NotIndexed for a branch
    the repository has no entry of."""
    if not branches:
        return chosen
    have = sorted({s.branch for s in chosen})
    missing = [b for b in dict.fromkeys(branches) if b not in have]
    if missing:
        raise NotIndexed(f"branch {missing[0]!r} of {chosen[0].repo} is not in the index at {index_dir} (its "
                         f"indexed branches: {', '.join(have)}); nothing was forgotten.")
    return [s for s in chosen if s.branch in branches]


def _claim(writer: Writer, ids: Sequence[str], chosen: Sequence[BranchState]) -> None:
    """One builder per repository and server: the lease, as a build claims it (store/lease.py)."""
    for repo_id in ids:
        writer.claim(repo_id, next((s.space for s in chosen if s.repo_id == repo_id and s.space), ""))


def _republish(writer: Writer, ids: Sequence[str], left: Sequence[BranchState]) -> None:
    """A server's readers see the forget: each repository's snapshot again, or none with its last branch."""
    for repo_id in ids:
        if any(s.repo_id == repo_id for s in left):
            writer.publish(repo_id)
        else:
            team.withdraw(writer.vectors, repo_id)


def _report(chosen: Sequence[BranchState], done: Forgotten, left: Sequence[BranchState],
            server: str | None) -> ForgetReport:
    first = chosen[0]
    return ForgetReport(
        repo=first.repo, repo_id=first.repo_id, branches=[s.branch for s in chosen],
        remaining=sorted({s.branch for s in left}), chunks=done.chunks, vectors=done.vectors,
        cache_removed=done.cache_removed, cache_kept=done.cache_kept, server=server,
        entries=[{"repo": s.repo, "branch": s.branch, "commit": s.commit, "built_at": s.built_at} for s in chosen])
