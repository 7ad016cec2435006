"""`codevouch index forget`: remove a repository, or some of its branches, from the index."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from codevouch.commands.common import IndexOpt, JsonOpt, fail, message_line, print_json
from codevouch.commands.invocation import echo, invocation
from codevouch.errors import CodevouchError
from codevouch.printable import plural


def index_forget(
    repo: Annotated[str, typer.Option(
        "--repo", metavar="PATH", help="The repository to forget: its path as `index status` shows it (it may be "
        "gone from disk), a clone of it, or its root commit id.")],
    branch: Annotated[Optional[list[str]], typer.Option(
        "--branch", "-b", metavar="BRANCH", help="Forget only this branch (repeatable; default: every branch, "
        "the repository). Forgetting its last branch forgets the repository.")] = None,
    index: IndexOpt = None,
    wait: Annotated[float, typer.Option(
        "--wait", metavar="SECONDS", help="Seconds to wait for a build on the same index to finish.")] = 0,
    as_json: JsonOpt = False,
) -> None:
    """Remove a repository, or branches of it, from the index (under the writer lock, safe to kill).

    What no remaining branch or repository shares goes: chunks, vectors, lexical copies, and the
    embedding cache's vectors of those texts; a vector another entry still uses is kept (see
    docs/INDEXING.md, "Forgetting"). Exit 5 when the index holds no such repository or branch."""
    from codevouch.callreads import index_dir_of, store_settings
    from codevouch.indexer.forget import forget

    call = invocation().call
    index_dir = index_dir_of(index, call)
    try:
        done = forget(index_dir, call.path(Path(repo)), repo, branch or (), wait, store_settings(call))
    except CodevouchError as exc:
        raise fail(exc) from exc
    if as_json:
        print_json({"index": str(index_dir), **done.to_json()})
        return
    branches = f"{plural(len(done.branches), 'branch', 'branches')} ({', '.join(done.branches)})"
    what = f"the repository {done.repo}, its {branches}," if done.repository else f"{branches} of {done.repo}"
    echo(f"forgot {message_line(what)} in {message_line(str(index_dir))}: "
         f"{plural(done.chunks, 'chunk')}, {plural(done.vectors, 'vector')} and "
         f"{plural(done.cache_removed, 'cached embedding')} removed")
    if done.remaining:
        echo(f"  still indexed: {message_line(', '.join(done.remaining))}")
    if done.cache_kept:
        echo(f"  kept {plural(done.cache_kept, 'cached embedding')} another indexed entry still uses "
             "(the cache is keyed by the text, so one vector serves every entry with that text)")
