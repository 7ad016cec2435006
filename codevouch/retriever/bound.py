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
"""
from __future__ import annotations

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
        head = gitio.head_state(repo_path)
        if request.mode == SearchMode.LEXICAL or head is None or not (branch := request.branch or head.branch):
            return None
        rid = repo_id(head.root, head.commit, self.index_dir)
        state = self.ledger.find_branch(rid, branch, str(head.root), holds(head.root)) if self.ledger else None
        if state is not None and self.ledger is not None:
            return self._bound(self.ledger, state, rid, branch, head, self.held)
        return Snapshot(head, rid, branch) if self.caller.store.chroma_url else None

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
            return None if state is None else self._bound(snapshot, state, rid, branch, head, None)
        finally:
            snapshot.close()

    def _bound(self, ledger: Ledger, state: BranchState, rid: str, branch: str, head: gitio.HeadState,
               held: holding.Held | None) -> Bound | None:
        if state.space is None or ledger.outdated(rid, str(head.root), branch) is not None:
            return None
        if self.request.overlay and head.branch == state.branch and not _clean(head.root, head.commit, state):
            return None
        named = _may_name(self.index_dir, ledger.copy_of(state), self.read)
        vector = _vector(self.caller, self.embedder, self.index_dir, state, self.read.text)
        return Bound(named, _nearest(ledger, held, self._vectors(ledger), state, vector), state.embedder, head.root)

    def _vectors(self, ledger: Ledger) -> Callable[[], VectorStore]:
        """The vector reader for `ledger`'s spaces, opened only when asked (retriever.search.vector_reader)."""
        return lambda: self._reader(ledger, self.index_dir, self.caller.store)


def _nearest(ledger: Ledger, held: holding.Held | None, vectors: Callable[[], VectorStore], state: BranchState,
             vector: list[float]) -> float:
    """The similarity of the branch's space's nearest vector to `vector` (0.0: it holds none)."""
    got = holding.space_of(held, ledger, state) if held is not None else None
    if got is None or not got.fits(vector):     # too big, not whole in the cache, not this model's, or a snapshot's
        assert state.space is not None
        found = vectors().query(state.space, vector, 1, expected=space_size(ledger, state.space))
        return found[0][1] if found else 0.0
    return got.best(vector)


def _clean(root: Path, head: str, state: BranchState) -> bool:
    """The working tree is the indexed commit, nothing changed or untracked: its overlay is empty.
    The same status as the overlay's (indexer/overlay.derive), so the search that may follow takes
    this answer."""
    if head != state.commit:
        return False
    status = gitio.parse_status(gitio.start_worktree_status(root, untracked=True, toplevel=True).result())
    return not status.changed and not status.untracked


def _may_name(index_dir: Path, copy: lexindex.Copy | None, read: reading.Query) -> bool:
    """Whether some chunk of the lexical copy could match the query by name (see the module's
    docstring); True when the copy cannot answer, and for a query of one token or of stop words
    only (a bare name: the name tier decides it, and the search must run)."""
    if copy is None or len(read.stripped.split()) <= 1 or not read.parts:
        return True
    keys = [*read.lookup, read.stripped.lower(), lexical.squashed("".join(read.parts))]
    found = lexindex.search_names(index_dir, copy, list(dict.fromkeys(keys)), 1)
    if found is None or found:
        return True
    words = lexindex.search(index_dir, copy, [f"+{w}" for w in read.parts], 1, only="namewords")
    return words is None or bool(words)


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
