"""The best a branch's hits could be for a query, found without searching it: what lets a search
across many repositories (codevouch/across.py) leave out those whose every hit would rank below
the fused top k.

A search across repositories fuses each repository's ranking by facts that mean the same in every
repository (across._hit_key): whether a hit matches a name the query spells, whether it is a good
match (that, or its cosine similarity reaching the model's threshold), then the similarity; a
repository's claim to the next place is the best of those among its next few hits
(across._head_key), so never more than its best hit's. A `Bound` holds the most each of those can
be for any chunk of a branch:

- `named`: some chunk could match by name. The name field is asked for the query's name keys
  (what the name tier looks up), the query written whole and its words squashed (what
  matching.spells compares with a symbol or its last part), and the `namewords` field for a chunk
  whose defined names hold every word of the query (spells' same-words rule): False only when no
  chunk of the branch's lexical copy could match. A query of one token is a bare name: always True.
- `similarity`: the nearest vector of the branch's space (a space is shared by a repository's
  branches: its nearest may be another branch's, which only raises the bound). A small space is
  held in this process's memory (retriever/held.py), and its nearest is exact, by the same cosines
  the search of it ranks by; a larger one, or one the cache does not hold whole, asks the store, as
  the dense list does (its nearest neighbours: store/vectors.ANN_LEAST).

No bound (None) when the search must run to know: the branch not indexed here or out of date (the
search says why, or finds a team snapshot), or the working tree differing from the indexed commit
(its overlay's chunks are searched live, and their vectors are made by that search).

What a bound reads besides the query (HEAD, the branch's entry, whether it is out of date, the
working tree's status, the lexical copy, the held space: ~0.8 ms of a repository's ~1.4) is kept
for the next query while the call's look at the work tree (worktree/git/unchanged.tree_state) and
the ledger file's stat data are what they were: a warm search over 100 repositories reads it again
only for those touched since, or rebuilt.
"""
from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path

from codevouch.embedding import Embedder
from codevouch.errors import NotIndexed
from codevouch.request import SearchRequest
from codevouch.retriever import held as holding
from codevouch.retriever import query as reading
from codevouch.retriever import queryencoder
from codevouch.retriever.members import space_size
from codevouch.retriever.mode import SearchMode
from codevouch.retriever.searchrun import Caller
from codevouch.retriever.settings import Settings
from codevouch.store import BranchState, Ledger, StoreSettings, VectorStore, lexical, lexindex, team
from codevouch.worktree import gitio
from codevouch.worktree.identity import holds, repo_id

# Added to the nearest vector's similarity: the store's float32 answer and the cosine a search
# computes for the same vector differ in the seventh digit.
MARGIN = 1e-5

Reader = Callable[[Ledger, Path, StoreSettings], VectorStore]   # retriever.search.vector_reader


@dataclass(frozen=True)
class Bound:
    """At most this, for any hit of the branch: see the module's docstring. `model`: the model the
    branch was built with (whose space `similarity` is in); `root`: the repository's top."""
    named: bool
    similarity: float
    model: str
    root: Path

    def key(self, threshold: float | None) -> tuple[bool, bool, float]:
        """The bound of across._hit_key, so of across._head_key: (name match, good match,
        similarity) at most. `threshold`: the similarity a good match reaches in this repository
        (None: no hit is a good match but by name)."""
        good = self.named or (threshold is not None and self.similarity >= threshold)
        return (self.named, good, max(self.similarity, 0.0) + MARGIN)


@dataclass(frozen=True)
class Snapshot:
    """A repository to bound by its team snapshot (Bounds.by_snapshot): its HEAD, id and branch."""
    head: gitio.HeadState
    rid: str
    branch: str


class Bounds:
    """The bounds of one query over the repositories of one index directory: one ledger, one vector
    reader (opened only for a space not held) and the query as read, for all of them. Used from one
    thread (the ledger's connection); `close` when done. A team reader (a Chroma server in the
    caller's store settings) bounds a repository its ledger does not hold, or all of them when its
    index directory holds no ledger, by the repository's team snapshot (its `HEAD` read, as its
    search reads it) and the server's nearest vector. Raises what opening the ledger raises
    (NotIndexed: the index is not here, and no server)."""

    def __init__(self, index_dir: Path, request: SearchRequest, settings: Settings, caller: Caller, reader: Reader,
                 embedder: Embedder | str | None = None) -> None:
        self.index_dir, self.request, self.caller, self.embedder = index_dir, request, caller, embedder
        self.ledger: Ledger | None = None
        self.held: holding.Held | None = None
        try:
            self.ledger = Ledger(index_dir, readonly=True)
            self.held = holding.held(index_dir, self.ledger.builds())
        except NotIndexed:
            if not caller.store.chroma_url:
                raise
        except BaseException:
            self.close()
            raise
        self._reader = reader
        self.read = reading.read(request.query, request.mode, settings)

    def close(self) -> None:
        if self.ledger is not None:
            self.ledger.close()

    def of(self, repo_path: Path) -> Bound | None | Snapshot:
        """The bound of the request's branch in the repository at `repo_path`; None: search it; a
        Snapshot: bound it by its team snapshot (`by_snapshot`, on any thread)."""
        request = self.request
        if request.mode == SearchMode.LEXICAL:
            return None
        look = self._look(repo_path)
        key = (str(self.index_dir), os.path.abspath(repo_path), request.branch, request.overlay)
        kept = _PLACED.get(key, look)
        if kept is not None:
            return self._bounded(kept[0])
        head = gitio.head_state(repo_path)
        if head is None or not (branch := request.branch or head.branch):
            return None
        rid = repo_id(head.root, head.commit, self.index_dir)
        state = self.ledger.find_branch(rid, branch, str(head.root), holds(head.root)) if self.ledger else None
        if state is None or self.ledger is None:
            return Snapshot(head, rid, branch) if self.caller.store.chroma_url else None
        placed = _placed(self.ledger, state, rid, branch, head, self.held, self.request)
        if state.repo == str(head.root) and str(head.root) == key[1]:
            # its own entry (no other clone's, which `holds` let answer: a git fact no look covers)
            _PLACED.put(key, look, (placed,))
        return self._bounded(placed)

    def start(self, repo_path: Path) -> None:
        """Start the `git status` the bound of the repository at `repo_path` may ask (its working
        tree against the indexed commit: `_clean`), so that several repositories' run at once:
        only inside a call's look scope, where that ask takes this answer (gitio.in_look_scope),
        for a work tree's top, and when the overlay is searched. An answer kept from an earlier
        call (gitio.start_worktree_status) starts nothing."""
        if (self.request.overlay and self.request.mode != SearchMode.LEXICAL and gitio.in_look_scope()
                and os.path.isdir(os.path.join(repo_path, ".git"))):
            _status(repo_path)

    def _look(self, repo_path: Path) -> gitio.Seen | None:
        """The call's look at the work tree at `repo_path` and the ledger's (store/ledgerlook.py,
        taken as it opened), as one: what a kept `_Placed` was read under (None: nothing kept is
        used or kept)."""
        ledger = self.ledger.look if self.ledger is not None else None
        tree = gitio.tree_state(repo_path) if ledger is not None else None
        if ledger is None or tree is None:
            return None
        return gitio.Seen((tree.state, ledger.state), tree.racy or ledger.racy)

    def by_snapshot(self, asked: Snapshot) -> Bound | None:
        """The bound of a repository the local ledger does not hold, by its team snapshot: its own
        ledger and the server's nearest vector, so safe on any thread (a team reader asks the
        server twice a repository: the bounds of several run at once, their waits overlapping)."""
        head, rid, branch = asked.head, asked.rid, asked.branch
        snapshot, state = team.open_snapshot(rid, branch, self.index_dir, str(head.root), holds(head.root),
                                             self.caller.store)
        try:
            # A snapshot holds no embedding cache, and its spaces change with each publication:
            # never held, the server asked.
            return None if state is None else self._bounded(
                _placed(snapshot, state, rid, branch, head, None, self.request), snapshot)
        finally:
            snapshot.close()

    def _bounded(self, placed: _Placed | None, ledger: Ledger | None = None) -> Bound | None:
        """The bound of a placed branch for the query (None: search it): `ledger`, a team
        snapshot's (its space never held); else the index directory's."""
        if placed is None:
            return None
        ledger = ledger if ledger is not None else self.ledger
        assert ledger is not None
        state = placed.state
        named = _may_name(self.index_dir, placed.copy, self.read)
        vector = _vector(self.caller, self.embedder, self.index_dir, state, self.read.text)
        return Bound(named, _nearest(ledger, placed.space, self._vectors(ledger), state, vector), state.embedder,
                     placed.head.root)

    def _vectors(self, ledger: Ledger) -> Callable[[], VectorStore]:
        """The vector reader for `ledger`'s spaces, opened only when asked (retriever.search.vector_reader)."""
        return lambda: self._reader(ledger, self.index_dir, self.caller.store)


def _nearest(ledger: Ledger, space: holding.Space | None, vectors: Callable[[], VectorStore], state: BranchState,
             vector: list[float]) -> float:
    """The similarity of the branch's space's nearest vector to `vector` (0.0: it holds none):
    `space`, its vectors held in memory, or None: ask the store."""
    if space is None or not space.fits(vector):     # too big, not whole in the cache, not this model's, or a snapshot's
        assert state.space is not None
        found = vectors().query(state.space, vector, 1, expected=space_size(ledger, state.space))
        return found[0][1] if found else 0.0
    return space.best(vector)


@dataclass(frozen=True)
class _Placed:
    """What a branch's bound reads besides the query: its repository's HEAD, its entry, its lexical
    copy (None: the name test cannot tell) and its space's vectors as held (None: ask the store)."""
    head: gitio.HeadState
    state: BranchState
    copy: lexindex.Copy | None
    space: holding.Space | None


# The `_Placed` of each (index directory, repository path, branch asked, overlay searched), kept
# under the look it was read under (Bounds._look); None kept: no bound (out of date, or the working
# tree differs from the indexed commit) while that look holds.
_PLACED: gitio.Kept[tuple[str, str, str | None, bool], tuple[_Placed | None]] = \
    gitio.Kept("codevouch.retriever.bound.placed", 4096)


def _placed(ledger: Ledger, state: BranchState, rid: str, branch: str, head: gitio.HeadState,
            held: holding.Held | None, request: SearchRequest) -> _Placed | None:
    """The branch's `_Placed`, or None when it has no bound (see the module's docstring)."""
    if state.space is None or ledger.outdated(rid, str(head.root), branch) is not None:
        return None
    if request.overlay and head.branch == state.branch and not _clean(head.root, head.commit, state):
        return None
    space = holding.space_of(held, ledger, state) if held is not None else None
    return _Placed(head, state, ledger.copy_of(state), space)


def _clean(root: Path, head: str, state: BranchState) -> bool:
    """The working tree is the indexed commit, nothing changed or untracked: its overlay is empty.
    The same status as the overlay's (indexer/overlay.derive), so the search that may follow takes
    this answer."""
    if head != state.commit:
        return False
    status = gitio.parse_status(_status(root).result())
    return not status.changed and not status.untracked


def _status(root: Path) -> gitio.Later:
    """The status `_clean` reads and `Bounds.start` starts ahead: one question, so one answer in a
    call's look scope."""
    return gitio.start_worktree_status(root, untracked=True, toplevel=True)


def _may_name(index_dir: Path, copy: lexindex.Copy | None, read: reading.Query) -> bool:
    """Whether some chunk of the lexical copy could match the query by name (see the module's
    docstring); True when the copy cannot answer, and for a query of one token or of stop words
    only (a bare name: the name tier decides it, and the search must run)."""
    if copy is None or len(read.stripped.split()) <= 1 or not read.parts:
        return True
    keys = [*read.lookup, read.stripped.lower(), lexical.squashed("".join(read.parts))]
    found = lexindex.names_any(index_dir, copy, keys, read.parts)
    return found is None or found


def _vector(caller: Caller, embedder: Embedder | str | None, index_dir: Path, state: BranchState,
            text: str) -> list[float]:
    """The query's vector by the branch's model, shared with the call's other searches."""
    held = queryencoder.held_in(caller.queries, embedder, index_dir)
    model = queryencoder.for_query(held, state.embedder, SearchMode.DENSE)
    assert model is not None     # not in lexical mode (Bounds.of)

    def start() -> Future[list[float]]:
        done: Future[list[float]] = Future()
        done.set_result(model.embed_query(text))
        return done
    return queryencoder.shared(caller.queries, model, text, start).result()
