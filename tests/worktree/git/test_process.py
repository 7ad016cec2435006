"""Every git process ignores the variables that would point it at another repository."""
from __future__ import annotations

from pathlib import Path

import pytest

from codevouch.worktree import gitio
from tests.gitrepo import Repo


def test_repository_locating_variables_are_ignored(repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    head = repo.commit(**{"a.py": "A = 1\n"})
    other = Repo(tmp_path / "other")
    other.commit(**{"b.py": "B = 2\n"})
    blob = repo.blob("HEAD", "a.py")   # before the variables are set: they redirect the helper too
    for name in gitio.REPO_LOCATING_VARS:
        monkeypatch.setenv(name, str(other.root / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(other.root))
    assert gitio.head_commit(repo.root) == head
    assert set(gitio.ls_tree(repo.root, head)) == {"a.py"}
    assert gitio.worktree_status(repo.root).changed == frozenset()
    with gitio.blob_reader(repo.root) as reader:
        assert reader.read(blob) == b"A = 1\n"
    assert gitio.no_git_env({"GIT_DIR": "x", "GIT_CONFIG_GLOBAL": "g", "PATH": "p"}) == {
        "GIT_CONFIG_GLOBAL": "g", "PATH": "p"}
