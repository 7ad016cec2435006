"""The vectors of an index directory's small spaces, held in this process's memory: what a search
across many repositories ranks them by, exactly, instead of asking the vector store.

A search over 100 repositories asks each searched one's space for its nearest vectors. From
Chroma that is a query (~1.5 ms) and, the first time a process asks a collection, a count that
checks the store holds what the ledger lists (~15 ms): a third of the searches' time, measured.
The bounds (retriever/bound.py) hold the same vectors already. A space of at most SPACE_MAX
vectors, up to HELD_MAX numbers in all, is read whole from the ledger's embedding cache (one
query; Chroma's `get` of the same vectors cost ~20 ms a space) and held until a build commits
(Ledger.builds changes); its nearest are then a product with the query, exact, and the bound and
the search of a space see the same cosines. A larger space, or one the cache does not hold whole
(a team snapshot holds no embeddings), is None: ask the store.
"""
from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codevouch import caches
from codevouch.retriever.members import space_size
from codevouch.retriever.searchrun import SearchRun
from codevouch.store import BranchState, Ledger
from codevouch.store.vectors import TIE_DECIMALS

# A space's vectors are held up to this many (a repository of ~10k chunks), and all held spaces
# together up to this many numbers (2 GiB of float32: a million chunks of 384 numbers). A space
# that is not held asks the vector store, whose answers cost more in time and memory both:
# across 100 repositories of 10,000 chunks (bench across_scale --chunks 1000000: each query
# bounds all 100, searches 10), with 32M numbers held (8 spaces) a process peaked at 2,720 MiB
# (VmHWM; Chroma loads each collection it queries) and a warm query took p50 / p95 572-741 /
# 636-923 ms (5.7 ms a space for the bound's nearest vector); with every space held, 1,955 MiB
# and 306-311 / 378-389 ms.
SPACE_MAX = 20_000
HELD_MAX = 512 * 1024 * 1024

Nearest = Callable[[int], "list[tuple[str, float]]"]   # (id, cosine) of the n nearest, best first
Loader = Callable[[], "list[tuple[str, bytes]] | None"]    # Ledger.space_vectors, bound to a space


@dataclass(frozen=True, eq=False)
class Space:
    """One space's vectors: `ids` (text hashes), and `matrix`, their rows scaled to length 1."""
    ids: tuple[str, ...]
    matrix: Any                       # numpy float32 array, len(ids) x dimensions

    def fits(self, vector: Sequence[float]) -> bool:
        """Whether `vector` is of this space's model (its length): an empty space fits any."""
        return not self.ids or self.matrix.shape[1] == len(vector)

    def cosines(self, vector: Sequence[float]) -> Any:
        """The cosine of each row with `vector` (zeros for a zero vector)."""
        import numpy as np

        q = np.asarray(vector, dtype=np.float32)
        norm = float(np.linalg.norm(q))
        return self.matrix @ (q / norm) if norm and self.ids else np.zeros(len(self.ids), dtype=np.float32)

    def best(self, vector: Sequence[float]) -> float:
        """The nearest row's cosine (0.0: the space holds none)."""
        return float(self.cosines(vector).max()) if self.ids else 0.0

    def nearest(self, cosines: Any, n: int) -> list[tuple[str, float]]:
        """(id, cosine) of the `n` rows of highest `cosines` (this space's, for one query), best
        first, as the store answers (store/vectors.py): the distance rounded to TIE_DECIMALS, a
        tie broken by the id."""
        import numpy as np

        if n <= 0 or not self.ids:
            return []
        distances = np.round(1.0 - cosines.astype(np.float64), TIE_DECIMALS)
        rows = np.arange(len(self.ids))     # the ids' order: Ledger.space_vectors sorts by id
        if n < len(self.ids):
            rows = np.argpartition(distances, n - 1)[:n]
            # the rows at the n-th distance all join, so that the id decides which of a tie stay
            rows = np.flatnonzero(distances <= distances[rows].max())
        order = rows[np.lexsort((rows, distances[rows]))][:n]
        return [(self.ids[i], 1.0 - float(distances[i])) for i in order]


class Held:
    """The held spaces of one index directory as built when `builds` was read (Ledger.builds: a
    build that commits changes it, and a new Held is made); None for a space not held."""

    def __init__(self, builds: tuple[Any, ...]) -> None:
        self.builds = builds
        self._spaces: dict[str, Space | None] = {}
        self._numbers = 0
        self._lock = threading.Lock()

    def space(self, name: str, size: int, load: Loader) -> Space | None:
        """The space `name` of `size` vectors, loaded by `load` the first time it is asked."""
        with self._lock:
            if name in self._spaces:
                return self._spaces[name]
        got = _loaded(load) if size <= SPACE_MAX else None
        with self._lock:
            if name in self._spaces:       # another thread loaded it meanwhile
                return self._spaces[name]
            numbers = 0 if got is None else got.matrix.size
            if self._numbers + numbers > HELD_MAX:
                got, numbers = None, 0
            self._numbers += numbers
            self._spaces[name] = got
            return got

    def __len__(self) -> int:
        return len(self._spaces)


def _loaded(load: Loader) -> Space | None:
    import numpy as np

    rows = load()
    if rows is None:
        return None
    if not rows:
        return Space((), np.zeros((0, 0), dtype=np.float32))
    matrix = np.frombuffer(b"".join(v for _, v in rows), dtype=np.float32).reshape(len(rows), -1)
    matrix = matrix / np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
    return Space(tuple(h for h, _ in rows), matrix)


def space_of(spaces: Held, ledger: Ledger, state: BranchState) -> Space | None:
    """The branch's space as `spaces` holds it, read from `ledger`'s embedding cache at its first
    use; None when it is not held (too big, or not whole in the cache)."""
    space = state.space
    assert space is not None
    size = space_size(ledger, space)
    return spaces.space(space, size, lambda: ledger.space_vectors(space, state.embedder, size))


def nearest_of(run: SearchRun, vector: list[float]) -> Nearest | None:
    """The `n` nearest of the run's space to `vector`, exactly, from its vectors held in memory;
    None when the space is not held (too big, not whole in the embedding cache, or of another
    model): ask the store."""
    got = space_of(held(run.index_dir, run.ledger.builds()), run.ledger, run.state)
    if got is None or not got.fits(vector):
        return None
    cosines = got.cosines(vector)
    return lambda n: got.nearest(cosines, n)


_HELD: dict[Path, Held] = {}
_LOCK = threading.Lock()


def held(index_dir: Path, builds: tuple[Any, ...]) -> Held:
    """The held spaces of `index_dir` as its ledger's `builds` say it is now."""
    with _LOCK:
        found = _HELD.get(index_dir)
        if found is None or found.builds != builds:
            if found is None and len(_HELD) >= 8:    # index directories one process searches: a few
                _HELD.clear()
            found = _HELD[index_dir] = Held(builds)
        return found


caches.register("codevouch.retriever.held", _HELD.clear, lambda: sum(len(h) for h in _HELD.values()))
