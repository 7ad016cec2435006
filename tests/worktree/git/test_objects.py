"""Reading the object store: trees, blobs, object names and commits."""
from __future__ import annotations

import os

import pytest

from codevouch.worktree import gitio
from tests.gitrepo import Repo


def test_ls_tree_lists_blobs_only(repo: Repo) -> None:
    repo.write("a.py", "A = 1\n")
    repo.write("dir/b.txt", "b\n")
    os.symlink("a.py", repo.root / "link.py")
    commit = repo.commit("files")
    tree = gitio.ls_tree(repo.root, commit)
    assert set(tree) == {"a.py", "dir/b.txt"}  # the symlink is left out
    assert tree["a.py"].blob_sha == repo.blob(commit, "a.py") and tree["a.py"].size == 6


def test_blob_reader_and_batch_check(repo: Repo) -> None:
    commit = repo.commit(**{"a.py": "A = 1\n"})
    blob = repo.blob(commit, "a.py")
    assert gitio.read_blobs(repo.root, [blob, "0" * 40]) == {blob: b"A = 1\n"}
    found = gitio.batch_check(repo.root, ["HEAD", f"{commit}:a.py", "f" * 40, "--output=x"])
    assert found == {"HEAD": (commit, "commit"), f"{commit}:a.py": (blob, "blob")}


def test_read_commits_gives_ids_types_and_the_dates_git_gives(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    commits = []
    for n, zone in enumerate(("+0000", "+0530", "-0800", "+1400")):
        monkeypatch.setenv("GIT_COMMITTER_DATE", f"2021-03-0{n + 1}T05:06:07 {zone}")
        commits.append(repo.commit(**{"a.py": f"A = {n}\n"}))
    blob = repo.blob("HEAD", "a.py")
    found = gitio.read_commits(repo.root, ["HEAD", commits[0][:9], *commits, blob, "f" * 40, "--output=x"])
    dates = gitio.commit_dates(repo.root, commits)     # git's own %cI
    assert {c: found[c] for c in commits} == {c: (c, "commit", dates[c]) for c in commits}
    assert dates[commits[1]] == "2021-03-02T05:06:07+05:30"
    assert found["HEAD"] == found[commits[-1]] and found[commits[0][:9]] == found[commits[0]]
    assert found[blob] == (blob, "blob", None)
    assert "f" * 40 not in found and "--output=x" not in found
