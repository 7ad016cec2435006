"""A reader's small answers kept under the ledger file's stat data (codevouch/store/ledgerlook.py),
on real builds into a real index: kept while nothing commits, read again after a commit."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from codevouch import Index, clear_caches
from codevouch.store import IndexDir, Ledger, ledgerlook
from tests.gitrepo import Repo

FAKE = "fake-bow-64"


def _answers(index_dir: Path) -> tuple[object, ...]:
    ledger = Ledger(index_dir, readonly=True)
    try:
        builds = ledger.builds()
        states = [ledger.branch(coll) for coll, _, _ in builds]
        assert all(s is not None for s in states)
        return (builds, [ledger.branch_size(s.coll) for s in states if s is not None],
                [ledger.branch_stamp(s) for s in states if s is not None])
    finally:
        ledger.close()


def _fresh(index_dir: Path) -> tuple[object, ...]:
    clear_caches()
    return _answers(index_dir)


def test_a_readers_answers_are_kept_until_a_build_commits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ledgerlook, "RACY_NS", 0)     # files written a moment ago count as settled
    repo = Repo.create(tmp_path / "repo")
    repo.commit_files({"a.py": "def a():\n    return 1\n"})
    index_dir = tmp_path / "index"
    Index(repo.root, index_dir, embedder=FAKE, record=False).build()
    _answers(index_dir)             # the first reader after the writer closed makes the log anew: a new look
    first = _answers(index_dir)
    again = _answers(index_dir)
    assert again == first and again[0] is first[0]           # the same answer, kept: not read again
    repo.commit_files({"b.py": "def b():\n    return 2\n"})
    Index(repo.root, index_dir, embedder=FAKE, record=False).build()
    after = _answers(index_dir)
    assert after[0] != first[0]
    assert after != first and after == _fresh(index_dir)      # the commit's: read again


def test_nothing_is_kept_under_a_racy_look(tmp_path: Path) -> None:
    """With the real RACY_NS, a ledger written a moment ago is asked each time."""
    repo = Repo.create(tmp_path / "repo")
    repo.commit_files({"a.py": "def a():\n    return 1\n"})
    Index(repo.root, tmp_path / "index", embedder=FAKE, record=False).build()
    os.utime(IndexDir(tmp_path / "index").ledger)     # written now, however long the build took after its commit
    ledger = Ledger(tmp_path / "index", readonly=True)
    try:
        assert ledger.look is not None and ledger.look.racy
        assert ledgerlook.kept(ledger.path, ledger.look) is None
        assert ledger.builds() is not ledger.builds()
    finally:
        ledger.close()


def test_the_repositories_listed_are_kept_until_another_repository_is_built(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ledgerlook, "RACY_NS", 0)
    index_dir = tmp_path / "index"
    one, two = Repo.create(tmp_path / "one"), Repo.create(tmp_path / "two")
    for repo in (one, two):
        repo.commit_files({"a.py": "def a():\n    return 1\n"})
    Index(one.root, index_dir, embedder=FAKE, record=False).build()

    def listed() -> tuple[str, ...]:
        ledger = Ledger(index_dir, readonly=True)
        try:
            found = ledger.repositories()
            assert found == tuple(dict.fromkeys(b.repo for b in ledger.branches()))
            return found
        finally:
            ledger.close()
    listed()                        # the first reader after the writer closed makes the log anew
    first = listed()
    assert first == (str(one.root),) and listed() is first
    Index(two.root, index_dir, embedder=FAKE, record=False).build()
    assert set(listed()) == {str(one.root), str(two.root)}
