"""A small space's vectors held in memory (codevouch/retriever/held.py): its nearest are exactly
those a sort of every cosine gives, a space too big or not whole is not held, a build that commits
is seen, and a search of several repositories ranks from them as the vector store would."""
from __future__ import annotations

import shutil
from array import array
from pathlib import Path

import numpy as np
import pytest

from codevouch import Index
from codevouch.errors import CodevouchError
from codevouch.request import SearchRequest
from codevouch.retriever import held as module
from codevouch.retriever.queryencoder import QueryVectors
from codevouch.retriever.search import search
from codevouch.retriever.searchrun import Caller
from codevouch.store.indexdir import IndexDir
from tests.gitrepo import Repo

FAKE = "fake-bow-64"


def _rows(vectors: dict[str, list[float]]) -> list[tuple[str, bytes]]:
    return [(h, array("f", v).tobytes()) for h, v in vectors.items()]


def test_the_nearest_are_every_cosine_sorted_ties_broken_by_id() -> None:
    rng = np.random.default_rng(7)
    vectors = {f"h{i:03}": rng.normal(size=8).tolist() for i in range(200)}
    vectors["h900"] = vectors["h010"]          # a tie: the id breaks it, as in the store's answer
    space = module.Held(()).space("s", len(vectors), lambda: _rows(vectors))
    assert space is not None
    query = rng.normal(size=8).tolist()
    q = np.asarray(query) / np.linalg.norm(query)
    exact = sorted(vectors, key=lambda h: (round(1 - float(np.dot(vectors[h], q) / np.linalg.norm(vectors[h])), 6), h))
    cosines = space.cosines(query)
    for n in (1, 5, 37, 200, 201, 500):
        got = space.nearest(cosines, n)
        assert [h for h, _ in got] == exact[:n], n
        assert all(c == pytest.approx(np.dot(vectors[h], q) / np.linalg.norm(vectors[h]), abs=1e-5) for h, c in got)
    assert space.best(query) == pytest.approx(got[0][1])
    assert space.nearest(cosines, 0) == [] and not space.fits([1.0, 2.0]) and space.fits(query)


def test_a_space_too_big_or_not_whole_in_the_cache_is_not_held(monkeypatch: pytest.MonkeyPatch) -> None:
    loads: list[str] = []

    def load(name: str, rows: list[tuple[str, bytes]] | None):  # type: ignore[no-untyped-def]
        return lambda: loads.append(name) or rows

    held = module.Held(())
    small = _rows({"a": [1.0, 0.0], "b": [0.0, 1.0]})
    assert held.space("whole", 2, load("whole", small)) is held.space("whole", 2, load("again", small))
    assert loads == ["whole"]                                     # read once
    assert held.space("not whole", 2, load("not whole", None)) is None
    monkeypatch.setattr(module, "SPACE_MAX", 1)
    assert held.space("too big", 2, load("too big", small)) is None and "too big" not in loads
    monkeypatch.setattr(module, "SPACE_MAX", 20_000)
    monkeypatch.setattr(module, "HELD_MAX", 5)                    # 4 numbers held: 4 more are over
    assert held.space("over the cap", 2, load("over", small)) is None
    empty = held.space("empty", 0, load("empty", []))
    assert empty is not None and empty.best([1.0, 0.0]) == 0.0 and empty.nearest(empty.cosines([1.0, 0.0]), 3) == []


def test_a_build_that_commits_is_seen() -> None:
    first = module.held(Path("/index"), ("build", 1))
    assert module.held(Path("/index"), ("build", 1)) is first
    assert module.held(Path("/index"), ("build", 2)) is not first


@pytest.fixture
def built(tmp_path: Path) -> tuple[Repo, Path]:
    repo = Repo.create(tmp_path / "repo")
    repo.commit_files({f"pkg/m{i}.py": f"def task_{i}(order, days):\n    return order.total * {i} + days\n"
                       for i in range(12)} |
                      {"pkg/fees.py": "def overdue_fee(loan, days):\n    return days * loan.rate\n",
                       "pkg/client.py": "class Response:\n    def raise_for_status(self):\n        raise ValueError\n"})
    Index(repo.root, tmp_path / "index", embedder=FAKE, record=False).build()
    return repo, tmp_path / "index"


def _hits(repo: Repo, index_dir: Path, query: str, held: bool) -> list[tuple[str, int, float | None]]:
    module._HELD.clear()
    found = search(repo.root, SearchRequest(query, k=8), index_dir, FAKE, caller=Caller(queries=QueryVectors(), held=held))
    return [(h.record.path, h.record.start_line, round(h.similarity or 0.0, 5)) for h in found]


def test_a_search_ranks_a_held_space_as_the_store_does(built: tuple[Repo, Path]) -> None:
    repo, index_dir = built
    for query in ("overdue fee for days past due", "order total days", "raise for status", "task_3"):
        assert _hits(repo, index_dir, query, True) == _hits(repo, index_dir, query, False), query
    # Held, the store is never asked: gone, the search still answers; asked, it says what is wrong.
    shutil.rmtree(IndexDir(index_dir).chroma)
    from codevouch import clear_caches

    clear_caches()
    assert _hits(repo, index_dir, "overdue fee for days past due", True)[0][0] == "pkg/fees.py"
    with pytest.raises(CodevouchError, match="vector store"):
        _hits(repo, index_dir, "overdue fee for days past due", False)
