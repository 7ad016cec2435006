"""Which repository an index entry belongs to: its root commit, the same in every clone.

A path names one clone on one machine; the root commit (reached from HEAD by first parents)
names the repository wherever it is cloned or moved, so a second clone, or a reader on
another machine, finds the index that a first clone built. The remote URL is a label for
people, the path a tag of the clone that built it.

A root commit is a key, not a proof: a fork, or another project started from the same first
commit, shares it. So an entry built in another clone answers for this one only when this one
holds the entry's indexed commit or one of the ancestors the build sampled on its first-parent
chain, never the root commit (`holds`: that commit and its tree are objects of this repository):
a second clone, one with newer commits, or one that has not fetched the last commits yet holds
one; a fork that shares only the first commit does not, and is told it is not indexed
(Ledger.find_branch applies the rule).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache, partial
from pathlib import Path

from codevouch.caches import clearable
from codevouch.worktree import gitio, rootcache


@dataclass(frozen=True)
class RepoIdentity:
    root: Path          # this clone's work tree
    id: str             # root commit
    remote: str | None  # origin's URL, credentials removed


def identify(path: Path | str, cache_dir: Path | None = None) -> RepoIdentity:
    """`cache_dir`: an index directory that may keep the root commit between processes
    (worktree/rootcache.py)."""
    root = gitio.repo_root(path)
    return RepoIdentity(root, repo_id(root, gitio.head_commit(root), cache_dir), gitio.remote_url(root))


def holds(root: Path) -> Callable[[Sequence[str]], bool]:
    """Whether any of some commits (full ids) is in the repository whose work tree is `root`: the
    test an index entry built in another clone must pass to answer for this one (its indexed
    commit and sampled ancestors, one git process). Asked afresh each time (a `git fetch` between
    two calls of a warm process brings the commit in)."""
    return partial(gitio.has_any_commit, root)


def repo_id(root: Path, head: str | None, cache_dir: Path | None = None) -> str:
    """The id of the repository whose work tree `root` has commit `head` checked out. With
    `cache_dir`, the answer is kept there for the next process (rootcache.py says when it is
    not, and how a kept one is checked)."""
    key = rootcache.history_key(root, head) if head is not None else None
    if key is None:
        return gitio.root_commit(root, head)      # no commits (NoCommits), or a history not keyed
    return _root_commit(root, head, key, cache_dir)


@clearable
@lru_cache(maxsize=1024)    # over the repositories one query may search (across.MAX_REPOS): 64 thrashed at 100
def _root_commit(root: Path, head: str, key: str, cache_dir: Path | None) -> str:
    # Finding the root walks the first-parent history (70 ms of CPU at 18,000 commits): a
    # long-lived process (the MCP server) asks once per key, a new process once per key and
    # index directory.
    if cache_dir is not None:
        kept = rootcache.lookup(cache_dir, key)
        if kept is not None and gitio.is_root(root, kept):
            return kept
    found = gitio.root_commit(root, head)       # from `head`, which the key names, not today's HEAD
    if cache_dir is not None and rootcache.history_key(root, head) == key:   # unchanged while walking
        rootcache.remember(cache_dir, key, found)
    return found
