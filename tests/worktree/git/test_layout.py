"""Git directories as git resolves them, and config values with the scope that set them."""
from __future__ import annotations

from pathlib import Path

import pytest

from codevouch.worktree import gitio
from tests.gitrepo import Repo


def test_git_dirs_of_a_clone_and_of_a_linked_worktree(repo: Repo, tmp_path: Path) -> None:
    repo.commit(**{"a.py": "A = 1\n"})
    plain = gitio.git_dirs(repo.root)
    assert plain.git_dir == plain.common_dir == (repo.root / ".git").resolve()
    repo.git("worktree", "add", "-q", "-b", "side", str(tmp_path / "linked"))
    linked = gitio.git_dirs(tmp_path / "linked")
    assert linked.common_dir == plain.common_dir
    assert linked.git_dir.parent == plain.common_dir / "worktrees"


def test_a_commondir_file_moves_the_common_dir_where_it_points(repo: Repo, tmp_path: Path) -> None:
    repo.commit(**{"a.py": "A = 1\n"})
    other = Repo(tmp_path / "other")
    other.commit(**{"o.py": "O = 1\n"})
    (repo.root / ".git" / "commondir").write_text(str(other.root / ".git"))
    dirs = gitio.git_dirs(repo.root)
    assert dirs.git_dir == (repo.root / ".git").resolve() and dirs.common_dir == (other.root / ".git").resolve()


def test_config_values_follow_includes_give_scopes_and_skip_the_command_line(
        repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo.commit(**{"a.py": "A = 1\n"})
    # Every git process codevouch starts says `-c core.hooksPath=/dev/null`: it is not a config file's.
    assert gitio.config_values(repo.root, "core.hooksPath") == []
    user = tmp_path / "gitconfig"
    user.write_text("[core]\n\thooksPath = /mine\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(user))
    (repo.root / ".git" / "extra").write_text("[core]\n\thooksPath = /theirs\n")
    repo.git("config", "include.path", "extra")
    values = gitio.config_values(repo.root, "core.hooksPath")
    assert [(v.scope, v.value) for v in values] == [("global", "/mine"), ("local", "/theirs")]
