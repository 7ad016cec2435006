"""The index directory's locks (store/locks.py): one build at a time, and readers that wait for
a vector write a bounded time instead of hanging."""
from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

import pytest

from codevouch.embedding import FakeEmbedder
from codevouch.environment import Environment
from codevouch.errors import IndexBusy, IndexLocked
from codevouch.indexer.build import build_index
from codevouch.store import IndexDir, StoreSettings, VectorStore, writer_lock
from codevouch.store.locks import vector_lock
from tests.gitrepo import Repo
from tests.storehelp import SPACE


def test_second_writer_gets_a_clear_message(repo: Repo, index_dir: Path) -> None:
    repo.commit(**{"a.py": "A = 1\n"})
    with writer_lock(index_dir, wait=0):
        with pytest.raises(IndexLocked, match="--wait"):
            build_index(repo.root, index_dir, FakeEmbedder())
        with pytest.raises(IndexLocked):
            with writer_lock(index_dir, wait=0.2):
                pass
    assert build_index(repo.root, index_dir, FakeEmbedder())[0].chunks == 1


# The caller's CODEVOUCH_BUSY_TIMEOUT, handed to the store (store/settings.py): never os.environ's.
QUICK = StoreSettings(Environment({"CODEVOUCH_BUSY_TIMEOUT": "0.3"}))


def test_a_reader_waits_for_a_vector_write_at_most_the_busy_timeout(index_dir: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    index_dir.mkdir()  # as a build's write.lock makes it: the lock file goes in an existing directory
    with VectorStore(index_dir) as store:
        store.upsert(SPACE, ["a"], [[1.0, 0.0]])
    monkeypatch.delenv("CODEVOUCH_BUSY_TIMEOUT", raising=False)   # the process's own is not read
    fd = os.open(IndexDir(index_dir).vectors_lock, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # as a build inside a write batch holds it
        started = time.monotonic()
        with VectorStore(index_dir, readonly=True, settings=QUICK) as reader, \
                pytest.raises(IndexBusy, match="--mode lexical"):
            reader.query(SPACE, [1.0, 0.0], 1)
        assert 0.3 <= time.monotonic() - started < 5
    finally:
        os.close(fd)
    with VectorStore(index_dir, readonly=True) as reader:
        assert reader.query(SPACE, [1.0, 0.0], 1)[0][0] == "a"


def test_readers_share_the_vector_lock_and_never_create_it(index_dir: Path) -> None:
    index_dir.mkdir()
    with vector_lock(index_dir, write=False, enabled=True):
        pass
    assert not IndexDir(index_dir).vectors_lock.exists()
    with vector_lock(index_dir, write=True, enabled=True):
        pass
    with vector_lock(index_dir, write=False, enabled=True), vector_lock(index_dir, write=False, enabled=True):
        pass  # two readers at once


def test_a_reader_opens_the_store_alone_then_shares_it(index_dir: Path) -> None:
    """Opening an embedded Chroma client writes its SQLite file, so a reader's first access
    waits for an exclusive turn (a build paused while opening, or another reader opening,
    failed searches with "database is locked"); once open, it reads beside other readers."""
    index_dir.mkdir()
    with VectorStore(index_dir) as store:
        store.upsert(SPACE, ["a"], [[1.0, 0.0]])
    with VectorStore(index_dir, readonly=True, settings=QUICK) as opened:
        assert opened.query(SPACE, [1.0, 0.0], 1)[0][0] == "a"
        fd = os.open(IndexDir(index_dir).vectors_lock, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_SH)  # another reader, mid-query
            assert opened.query(SPACE, [1.0, 0.0], 1)[0][0] == "a"
            with VectorStore(index_dir, readonly=True, settings=QUICK) as opening, pytest.raises(IndexBusy):
                opening.query(SPACE, [1.0, 0.0], 1)
        finally:
            os.close(fd)
