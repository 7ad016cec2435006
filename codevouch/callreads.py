"""What the api reads of a `Call` (codevouch/call.py) and hands below it as values: the index
directory, the overlay's limit, the store's settings; and the commit a branch was indexed at, by
the call's store settings. The modules below the api take these as arguments and never ask the
environment themselves (tests/test_environment_readers.py).

Beside the api (under it in pyproject's layers) so that the api's methods, its module-level
functions and the commands make them one way; `import codevouch` loads nothing of the store
through it (the store is imported inside the functions that need it).
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from codevouch.call import Call
from codevouch.errors import InputError, NotIndexed

if TYPE_CHECKING:
    from codevouch.retriever.queryencoder import QueryVectors
    from codevouch.retriever.searchrun import Caller
    from codevouch.store.settings import StoreSettings
    from codevouch.worktree.identity import RepoIdentity


def model_as_meant(value: str, call: Call) -> str:
    """A model setting (`--embedder`, CODEVOUCH_EMBEDDING_MODEL) as the caller meant it: a
    directory relative to the caller's working directory, `~` the caller's home; the packaged
    model's and the fake's names as they are. In the engine, this process's directory and home
    are not the caller's."""
    from codevouch.embedding import DIRECTORY_PREFIX, MODEL_NAME, FakeEmbedder  # heavy: the embedding package

    if value in (MODEL_NAME, FakeEmbedder.name):
        return value
    prefix = DIRECTORY_PREFIX if value.startswith(DIRECTORY_PREFIX) else ""
    return prefix + str(call.path(call.env.expanduser(value[len(prefix):])))


def index_dir_of(given: Path | str | None, call: Call) -> Path:
    """The index directory of `call`: the one given, else the default ($CODEVOUCH_INDEX, else
    XDG's), absolute (a relative one from the call's working directory)."""
    from codevouch.store import default_index_dir  # heavy: the store
    from codevouch.worktree import gitio

    where = call.path(call.env.expanduser(str(given or default_index_dir(call.env))))
    # Resolved once in a call's look (`gitio.one_look`): a search across 100 repositories made 100
    # Indexes of one index directory, each resolving it again (~4% of a warm call in the engine).
    return gitio.in_scope("index-dir", str(where), where.resolve)


def overlay_limit(given: int | None, call: Call) -> int:
    """The most new working-tree chunks a search embeds: the one given, else the call's
    CODEVOUCH_OVERLAY_LIMIT (unset: retriever.overlay.EMBED_LIMIT); InputError below 0."""
    if given is None:
        given = call.env.overlay_limit
    if given < 0:
        raise InputError(f"the overlay limit must be 0 or more chunks (got {given}).")
    return given


def store_settings(call: Call) -> StoreSettings:
    """The store's settings of `call` (codevouch/store/settings.py), each read at its use."""
    from codevouch.store.settings import StoreSettings  # heavy: the store

    return StoreSettings(call.env)


def search_caller(call: Call, embed_limit: int, queries: QueryVectors | None = None) -> Caller:
    """What `call` sets for a search: the overlay's limit (`embed_limit`, the Index's) and time
    budget (CODEVOUCH_OVERLAY_SECONDS, read when the overlay embeds), and the store's settings;
    `queries`: the query vectors the call's searches share (several repositories), if any; those
    searches rank small spaces from their held vectors, as the bounds that chose them did."""
    from codevouch.retriever.searchrun import Caller  # heavy: the store

    return Caller(embed_limit, lambda: call.env.overlay_seconds, store_settings(call), queries,
                  held=queries is not None)


def indexed_commit(index_dir: Path, root: Path, branch: str, ident: RepoIdentity | None = None,
                   call: Call | None = None) -> str:
    """The commit a branch was last indexed at (NotIndexed if never; creates nothing). `ident`: the
    repository's identity, when the caller has it; `call`: whose store settings (None: this process's)."""
    from codevouch.store.team import open_for_search  # heavy: the store
    from codevouch.worktree.identity import holds, identify

    ident = ident or identify(root, index_dir)
    store = store_settings(call or Call.of_process())
    ledger, state = open_for_search(ident.id, branch, index_dir, str(ident.root), holds(ident.root), store)
    ledger.close()
    if state is None:
        raise NotIndexed(f"branch {branch!r} of {root} is not in the index at {index_dir}; run "
                         f"`codevouch index build --repo {root} --branch {branch}` first.")
    return state.commit
