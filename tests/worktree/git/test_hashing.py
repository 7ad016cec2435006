"""Blob ids of working-tree files, and the ids kept by stat data."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from codevouch.worktree import gitio
from codevouch.worktree.git import hashing
from tests.gitrepo import Repo


def test_hash_worktree_files_matches_git_and_skips_what_it_cannot_hash(repo: Repo) -> None:
    repo.write("a.py", "A = 1\n")
    repo.write("b.py", "B = 2\n")
    commit = repo.commit("files")
    hashed = gitio.hash_worktree_files(repo.root, ["a.py", "missing.py", "b.py"])
    assert hashed == {"a.py": repo.blob(commit, "a.py"), "b.py": repo.blob(commit, "b.py")}


def _age(path: Path, seconds: float = 60.0) -> None:
    """Set the file's mtime back; its ctime is then now, so it is aged too by waiting past RACY_NS
    (we stand in for that by lowering RACY_NS, the one knob: see the tests below)."""
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns - int(seconds * 1e9)))


def _git_hash(repo: Repo, path: str) -> str:
    return repo.git("hash-object", "--", path).strip()


def test_a_file_hashed_before_is_not_hashed_again_until_it_changes(
        repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    import time
    repo.write("a.py", "A = 1\n")
    repo.commit("a")
    target = repo.write("a.py", "A = 2\n")
    _age(target)
    monkeypatch.setattr(hashing, "RACY_NS", 0)     # the ctime is "old enough" at once
    time.sleep(0.01)
    first = gitio.hash_worktree_files(repo.root, ["a.py"])
    before = gitio.PROCESSES["hash-object"]
    assert gitio.hash_worktree_files(repo.root, ["a.py"]) == first == {"a.py": _git_hash(repo, "a.py")}
    assert gitio.PROCESSES["hash-object"] == before            # remembered: no process
    # Rewritten with the same size, and its mtime set back to the remembered one: the ctime moved.
    old = target.stat()
    target.write_text("A = 3\n")
    os.utime(target, ns=(old.st_atime_ns, old.st_mtime_ns))
    again = gitio.hash_worktree_files(repo.root, ["a.py"])
    assert gitio.PROCESSES["hash-object"] == before + 1
    assert again == {"a.py": _git_hash(repo, "a.py")} != first


def test_a_file_changed_too_close_to_its_hashing_is_never_remembered(repo: Repo) -> None:
    repo.write("a.py", "A = 1\n")
    repo.commit("a")
    repo.write("a.py", "A = 2\n")      # just now: within RACY_NS of the hashing
    before = gitio.PROCESSES["hash-object"]
    gitio.hash_worktree_files(repo.root, ["a.py"])
    gitio.hash_worktree_files(repo.root, ["a.py"])
    assert gitio.PROCESSES["hash-object"] == before + 2


def test_a_changed_attributes_file_or_index_makes_files_hashed_again(
        repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    import time
    repo.write("sub/a.txt", b"one\r\ntwo\r\n")
    repo.commit("a")
    target = repo.root / "sub" / "a.txt"
    _age(target)
    monkeypatch.setattr(hashing, "RACY_NS", 0)
    time.sleep(0.01)
    crlf = gitio.hash_worktree_files(repo.root, ["sub/a.txt"])
    assert crlf == {"sub/a.txt": _git_hash(repo, "sub/a.txt")}
    # An attributes file in the file's folder (not the top one) that makes it text: git now
    # stores it with LF, so its blob id changes though the file did not.
    repo.write("sub/.gitattributes", "*.txt text\n")
    lf = gitio.hash_worktree_files(repo.root, ["sub/a.txt"])
    assert lf == {"sub/a.txt": _git_hash(repo, "sub/a.txt")} != crlf
    before = gitio.PROCESSES["hash-object"]
    repo.git("add", "sub/.gitattributes")        # the index changed: hashed again, same answer
    assert gitio.hash_worktree_files(repo.root, ["sub/a.txt"]) == lf
    assert gitio.PROCESSES["hash-object"] == before + 1


def test_nothing_is_remembered_when_configured_filters_may_run(
        repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    import time
    repo.write("a.py", "A = 1\n")
    repo.commit("a")
    _age(repo.write("a.py", "A = 2\n"))
    monkeypatch.setattr(hashing, "RACY_NS", 0)
    monkeypatch.setenv(gitio.RUN_FILTERS_VAR, "1")
    time.sleep(0.01)
    before = gitio.PROCESSES["hash-object"]
    gitio.hash_worktree_files(repo.root, ["a.py"])
    gitio.hash_worktree_files(repo.root, ["a.py"])
    assert gitio.PROCESSES["hash-object"] == before + 2
