"""Why a search found no entry for the branch it was asked about, said for a user: an older
layout to move, a branch git does not know, a fork's entry passed over, or no build yet."""
from __future__ import annotations

from pathlib import Path

from codevouch.store.records import Outdated
from codevouch.worktree import gitio


def not_indexed(repo: Path, branch: str, index_dir: Path, outdated: Outdated | None, passed_over: bool) -> str:
    """Why the branch has no entry to search, for a user. `passed_over`: the index holds an entry of
    a repository with the same root commit, built at a commit this one does not have (nor any of
    its sampled ancestors)."""
    build = f"`codevouch index build --repo {repo} --branch {branch} --index {index_dir}`"
    if outdated is not None and outdated.layout == "per-chunk":  # see migrations.m004, m005
        return (f"branch {branch!r} of {repo} was indexed by an older codevouch, which stored a vector per "
                f"chunk rather than per distinct text; run {build} once to move it to the new store (it "
                "embeds each chunk once more: the embedded text now carries the chunk's path and symbol).")
    if outdated is not None:  # per-branch: before migrations.m003
        return (f"branch {branch!r} of {repo} was indexed by an older codevouch, which kept a copy of every "
                f"vector per branch; run {build} once to move it to the shared store (it embeds each chunk "
                "once more: the embedded text now carries the chunk's path and symbol).")
    if not _branch_exists(repo, branch):
        # A name git does not know: building it cannot work, so say that instead.
        return (f"{repo} has no branch {branch!r} (nor a commit of that name); `git -C {repo} branch` lists "
                "its branches: pass one of them to --branch.")
    if passed_over:
        return (f"branch {branch!r} of {repo} is not in the index at {index_dir}: an entry there shares this "
                "repository's first commit but was built at a commit this repository does not have (nor any "
                "of the commits before it that the build sampled), so it is "
                "another repository's (a fork's, or a project started from the same commit) or one this clone "
                f"has not fetched. If this is a clone of the same repository, `git fetch` it; else run {build}.")
    return f"branch {branch!r} of {repo} is not in the index at {index_dir}; run {build} first."


def _branch_exists(repo: Path, branch: str) -> bool:
    from codevouch.errors import GitError

    try:
        gitio.resolve_commit(repo, branch)
        return True
    except GitError:
        return False
