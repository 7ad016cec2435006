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


def test_a_git_without_config_env_is_refused_with_a_clear_error() -> None:
    """git before 2.31 does not know --config-env (the filter guard): the command is refused, and
    the message says to upgrade, instead of running it without the guard or printing git's words."""
    from codevouch.errors import GitError
    from codevouch.worktree.git._process import _checked

    cmd = ("git", "--config-env=filter.x=y.clean=CV_GIT_EMPTY", "-C", "/r", "status")
    with pytest.raises(GitError) as caught:
        _checked(cmd, 129, b"", b"unknown option: --config-env=filter.x=y.clean=CV_GIT_EMPTY\nusage: git ...", (0,))
    assert "older than 2.31" in str(caught.value) and "upgrade git" in str(caught.value)


def test_filter_guard_names_every_driver_whole(repo: Repo) -> None:
    """A driver name holding `=` (or a dot, a quote) is one subsection to git: each gets
    --config-env options whose key is the whole name, and the variables they name are set."""
    from codevouch.worktree.git import _process
    from codevouch.worktree.git.filters import filter_overrides

    repo.commit(**{"a.py": "A = 1\n"})
    with open(repo.root / ".git" / "config", "a") as handle:
        handle.write('[filter "x=y"]\n\tclean = cat\n[filter "a.b"]\n\tsmudge = cat\n')
    options = filter_overrides(repo.root)
    assert "--config-env=filter.x=y.process=CV_GIT_EMPTY" in options
    assert "--config-env=filter.a.b.required=CV_GIT_FALSE" in options
    assert not any(o.startswith("-c") for o in options)
    assert _process._env()["CV_GIT_EMPTY"] == "" and _process._env()["CV_GIT_FALSE"] == "false"
