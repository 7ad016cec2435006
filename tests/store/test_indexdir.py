"""IndexDir (store/indexdir.py): the one place the index directory's file names are spelled; a
real build writes exactly there."""
from __future__ import annotations

from pathlib import Path

import pytest

from codevouch import Index
from codevouch.errors import BadIndex
from codevouch.store import IndexDir
from codevouch.worktree import rootcache
from tests.gitrepo import Repo


def test_a_build_writes_where_indexdir_says(repo: Repo, index_dir: Path) -> None:
    repo.commit(**{"a.py": "def alpha():\n    return 1\n"})
    idx = Index(repo.root, index_dir, embedder="fake-bow-64")
    idx.build()
    where = IndexDir(index_dir)
    assert where.has_ledger() and where.chroma_file.is_file()
    assert where.write_lock.exists() and where.vectors_lock.exists()
    [space] = [p.name for p in where.lexical.iterdir()]
    assert where.lexical_space(space).is_dir()
    idx.validate([{"path": "a.py", "text": "def alpha():"}])  # a usage record beside the ledger
    assert where.usage.is_file()
    assert {p.name for p in index_dir.iterdir()} <= {
        where.ledger.name, where.usage.name, where.chroma.name, where.lexical.name, where.write_lock.name,
        where.vectors_lock.name, "state.sqlite-wal", "state.sqlite-shm",
        "usage.sqlite-wal", "usage.sqlite-shm",   # a process keeps its usage connection open
        rootcache.FILE}     # the repository's id kept by a read (spelled in worktree/: the store runs no git)


def test_ensure_says_why_a_path_cannot_be_an_index(tmp_path: Path) -> None:
    afile = tmp_path / "file"
    afile.write_text("x")
    with pytest.raises(BadIndex, match="is a file"):
        IndexDir(afile).ensure()
    with pytest.raises(BadIndex, match="lies under a file"):
        IndexDir(afile / "index").ensure()
    IndexDir(tmp_path / "new" / "index").ensure()
    assert (tmp_path / "new" / "index").is_dir() and not IndexDir(tmp_path / "new" / "index").has_ledger()
