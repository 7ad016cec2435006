"""worktree/gitowner.py through gitreads.guard: a repository whose git data lies in another
repository (a `.git` file, a `.git` link, `commondir`, alternates) is refused before git runs,
naming the pointer and CODEVOUCH_ALLOW_OUTSIDE_GIT_DIR; linked worktrees and submodules are its own."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from codevouch.worktree.gitowner import outside_git_dir
from tests.clihelp import FAKE, cv
from tests.gitrepo import Repo

SECRET = {"secret.py": "def private_key_loader():\n    return 'the other repository'\n"}


@pytest.fixture
def other(tmp_path: Path) -> Repo:
    repo = Repo(tmp_path / "other")
    repo.commit_files(SECRET)
    return repo


def _planted(tmp_path: Path, how: str, other: Repo) -> Path:
    """A directory that looks like a repository and points into `other`."""
    top = tmp_path / "planted"
    top.mkdir()
    (top / "a.py").write_text("def f():\n    return 1\n")
    if how == "gitdir absolute":
        (top / ".git").write_text(f"gitdir: {other.root / '.git'}\n")
    elif how == "gitdir relative":
        (top / ".git").write_text("gitdir: ../other/.git\n")
    elif how == "link":
        (top / ".git").symlink_to(other.root / ".git")
    elif how == "forged worktree":       # other's own worktree entry, which links back elsewhere
        other.git("worktree", "add", "-q", str(tmp_path / "real-wt"), "-b", "wt")
        (top / ".git").write_text(f"gitdir: {other.root / '.git' / 'worktrees' / 'real-wt'}\n")
    return top


@pytest.mark.parametrize("how", ["gitdir absolute", "gitdir relative", "link", "forged worktree"])
def test_a_pointer_into_another_repository_is_refused(tmp_path: Path, other: Repo, how: str) -> None:
    top = _planted(tmp_path, how, other)
    assert "reads git data from another directory" in (outside_git_dir(top) or "")
    index = tmp_path / "index"
    out = cv("index", "build", "--repo", str(top), *FAKE, index=index)
    assert out.returncode == 1 and "CODEVOUCH_ALLOW_OUTSIDE_GIT_DIR" in out.stderr, out.stderr
    assert ".git" in out.stderr and not index.joinpath("state.sqlite").exists()
    search = cv("search", "private key loader", "--repo", str(top), "--include-history", index=index)
    assert search.returncode == 1 and "private_key_loader" not in search.stdout


def test_alternates_and_commondir_elsewhere_are_refused(tmp_path: Path, other: Repo) -> None:
    repo = Repo(tmp_path / "repo")
    repo.commit_files({"a.py": "A = 1\n"})
    alternates = repo.root / ".git" / "objects" / "info" / "alternates"
    alternates.write_text(f"{other.root / '.git' / 'objects'}\n")
    assert "borrows objects from" in (outside_git_dir(repo.root) or "")
    alternates.unlink()
    (repo.root / ".git" / "commondir").write_text(str(other.root / ".git") + "\n")
    assert "commondir" in (outside_git_dir(repo.root) or "")


def test_clones_linked_worktrees_and_submodules_are_their_own(tmp_path: Path, other: Repo) -> None:
    assert outside_git_dir(other.root) is None
    other.git("worktree", "add", "-q", str(tmp_path / "wt"), "-b", "feature")
    assert outside_git_dir(tmp_path / "wt") is None
    sub = Repo(tmp_path / "sub")
    sub.commit_files({"s.py": "S = 1\n"})
    other.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub.root), "vendor/sub")
    assert (other.root / "vendor" / "sub" / ".git").is_file()
    assert outside_git_dir(other.root / "vendor" / "sub") is None
    out = cv("index", "build", "--repo", str(tmp_path / "wt"), *FAKE, index=tmp_path / "index")
    assert out.returncode == 0, out.stderr


def test_the_users_own_setting_lets_a_git_directory_elsewhere_be_read(tmp_path: Path, other: Repo) -> None:
    shutil.copytree(other.root / ".git", tmp_path / "kept-apart.git")
    top = tmp_path / "work"
    top.mkdir()
    (top / ".git").write_text(f"gitdir: {tmp_path / 'kept-apart.git'}\n")
    (top / "secret.py").write_text(SECRET["secret.py"])
    refused = cv("index", "build", "--repo", str(top), *FAKE, index=tmp_path / "index")
    assert refused.returncode == 1
    allowed = cv("index", "build", "--repo", str(top), *FAKE, index=tmp_path / "index",
                 env={"CODEVOUCH_ALLOW_OUTSIDE_GIT_DIR": "1"})
    assert allowed.returncode == 0, allowed.stderr
    assert os.environ.get("CODEVOUCH_ALLOW_OUTSIDE_GIT_DIR") is None
