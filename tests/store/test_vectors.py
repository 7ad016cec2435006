"""The vector store (store/vectors.py) on a real embedded Chroma: vectors by id, data records,
and readers that never create anything."""
from __future__ import annotations

from pathlib import Path

import pytest

from codevouch.environment import Environment
from codevouch.errors import CodevouchError
from codevouch.store import IndexDir, StoreSettings, VectorStore
from tests.storehelp import SPACE


def test_vectors_by_id_nearest_first(index_dir: Path) -> None:
    with VectorStore(index_dir) as store:
        store.upsert(SPACE, ["east", "north", "north-east"], [[1.0, 0.0], [0.0, 1.0], [0.7, 0.7]])
        found = store.query(SPACE, [1.0, 0.1], 2)
        assert [cid for cid, _ in found] == ["east", "north-east"]
        assert found[0][1] == pytest.approx(0.995, abs=1e-3)  # cosine similarity, not distance
        assert store.count(SPACE) == 3 and store.collections() == [SPACE]
        store.upsert(SPACE, ["east"], [[0.0, 1.0]])  # same id: replaced, not added
        assert store.count(SPACE) == 3 and store.query(SPACE, [0.0, 1.0], 1)[0][0] in ("east", "north")
        store.delete(SPACE, ["east", "unknown"])
        assert store.count(SPACE) == 2
        store.drop(SPACE)
        store.drop(SPACE)  # absent is fine
        assert store.collections() == [] and store.query(SPACE, [1.0, 0.0], 3) == []
    # Another client (another process, later) sees what this one wrote.
    with VectorStore(index_dir) as store:
        store.upsert("cv-b-txt", ["x"], [[1.0, 0.0]])
    with VectorStore(index_dir, readonly=True) as reader:
        assert reader.count("cv-b-txt") == 1


def test_more_neighbours_than_stored_gives_what_is_stored(index_dir: Path) -> None:
    with VectorStore(index_dir) as store:
        store.upsert(SPACE, ["a", "b"], [[1.0, 0.0], [0.0, 1.0]])
        assert len(store.query(SPACE, [1.0, 0.0], 50)) == 2 and store.query(SPACE, [1.0, 0.0], 0) == []


def test_data_records_with_documents_and_metadata(index_dir: Path) -> None:
    with VectorStore(index_dir) as store:
        items = [(f"gen:{n}", f"part {n}", {"part": n}) for n in range(70)]  # more than one write batch
        store.put_documents("cv-x-ledger", items)
        got = store.get_documents("cv-x-ledger", ["gen:0", "gen:69", "missing"])
        assert got == {"gen:0": ("part 0", {"part": 0}), "gen:69": ("part 69", {"part": 69})}
        assert len(store.document_ids("cv-x-ledger")) == 70
        assert store.get_documents("cv-none", ["a"]) == {} and store.document_ids("cv-none") == []


def test_a_reader_of_an_index_without_vectors_creates_nothing(index_dir: Path) -> None:
    index_dir.mkdir()
    with VectorStore(index_dir, readonly=True) as reader:
        assert reader.query(SPACE, [1.0], 5) == [] and reader.collections() == [] and reader.count(SPACE) == 0
        assert reader.get_documents("cv-x-ledger", ["HEAD"]) == {}
    assert list(index_dir.iterdir()) == []
    with VectorStore(index_dir) as store:
        store.upsert(SPACE, ["a"], [[1.0]])
    assert IndexDir(index_dir).chroma_file.is_file() and IndexDir(index_dir).vectors_lock.is_file()


def test_a_server_url_that_is_not_http_is_refused(index_dir: Path) -> None:
    settings = StoreSettings(Environment({"CODEVOUCH_CHROMA_URL": "ftp://localhost:1"}))
    with VectorStore(index_dir, settings=settings) as store, pytest.raises(CodevouchError, match="is not http"):
        store.count(SPACE)


def test_a_few_neighbours_asked_are_the_exact_nearest_best_first(index_dir: Path) -> None:
    """Asked for the few dozen a search fuses, the store answers with the exact nearest (an
    exhaustive numpy search says which), in order: its graph search looks at ANN_LEAST candidates."""
    import numpy as np

    rng = np.random.default_rng(7)
    centres = rng.normal(size=(40, 32))
    vectors = centres[rng.integers(0, 40, 3000)] + rng.normal(0, 0.4, (3000, 32))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ids = [f"v{i}" for i in range(len(vectors))]
    with VectorStore(index_dir) as store:
        store.upsert(SPACE, ids, vectors.tolist())
        for q in rng.normal(size=(30, 32)):
            q /= np.linalg.norm(q)
            found = store.query(SPACE, q.tolist(), 12)
            assert [cid for cid, _ in found] == [ids[i] for i in np.argsort(-(vectors @ q))[:12]]
            assert [round(s, 4) for _, s in found] == sorted((round(s, 4) for _, s in found), reverse=True)
