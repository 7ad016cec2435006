"""A killed build keeps the vectors it uploaded (issue 19, part 5): they are keyed by text hash,
valid whatever the ledger says, so the next build uses them instead of uploading them again,
and a build that is always killed still makes progress. Before, each build's start deleted
them. Real git, the real embedded Chroma store; the rebuild is told apart from a re-upload by
changing the embedding cache's copy of the leftover vectors in between."""
from __future__ import annotations

import sqlite3
from array import array
from pathlib import Path

import pytest

from codevouch.embedding import FakeEmbedder
from codevouch.indexer.build import build_index
from codevouch.store import VectorStore
from tests.gitrepo import Repo


def _space(index: Path) -> tuple[str, set[str]]:
    db = sqlite3.connect(f"file:{index / 'state.sqlite'}?mode=ro", uri=True)
    try:
        rows = db.execute("SELECT space, text_hash FROM space_texts").fetchall()
    finally:
        db.close()
    spaces = {s for s, _ in rows}
    assert len(spaces) == 1, spaces
    return spaces.pop(), {h for _, h in rows}


def test_a_killed_builds_vectors_are_reused_not_uploaded_again(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.commit_files({"a.py": "def first():\n    return 1\n"})
    index = tmp_path / "index"
    build_index(repo.root, index, FakeEmbedder())
    space, known = _space(index)
    repo.commit_files({f"m{i}.py": f"def added_{i}(x):\n    return x + {i}\n" for i in range(30)})

    def die(phase: str) -> None:
        if phase == "vectors-written":
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        build_index(repo.root, index, FakeEmbedder(), on_phase=die)
    assert _space(index)[1] == known                     # the ledger never saw the new texts
    with VectorStore(index) as vectors:
        ids = vectors.document_ids(space)
        leftover = sorted(set(ids) - known)
        assert len(leftover) >= 30
        uploaded = vectors.collection(space).get(ids=leftover, include=["embeddings"])
    before = {i: list(map(float, e)) for i, e in zip(uploaded["ids"], uploaded["embeddings"])}
    # The embedding cache's copy changes: a re-upload from it would show.
    db = sqlite3.connect(index / "state.sqlite")
    with db:
        db.executemany("UPDATE embeddings SET vector = ? WHERE text_hash = ?",
                       [(array("f", [0.5] * len(v)).tobytes(), h) for h, v in before.items()])
    db.close()

    build_index(repo.root, index, FakeEmbedder())
    space_after, known_after = _space(index)
    assert space_after == space and set(leftover) <= known_after
    with VectorStore(index) as vectors:
        kept = vectors.collection(space).get(ids=leftover, include=["embeddings"])
        assert vectors.count(space) == len(known_after)   # nothing left over now
    after = {i: list(map(float, e)) for i, e in zip(kept["ids"], kept["embeddings"])}
    assert after == before


def test_leftovers_the_next_build_does_not_need_are_removed(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.commit_files({"a.py": "def first():\n    return 1\n"})
    index = tmp_path / "index"
    build_index(repo.root, index, FakeEmbedder())
    repo.commit_files({"b.py": "def doomed():\n    return 2\n"})

    def die(phase: str) -> None:
        if phase == "vectors-written":
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        build_index(repo.root, index, FakeEmbedder(), on_phase=die)
    repo.git("reset", "-q", "--hard", "HEAD~1")          # that commit is abandoned
    repo.commit_files({"c.py": "def other():\n    return 3\n"})
    build_index(repo.root, index, FakeEmbedder())
    space, known = _space(index)
    with VectorStore(index) as vectors:
        assert set(vectors.document_ids(space)) == known
