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



def test_file_count_is_ls_trees_count_asked_once_per_commit(repo: Repo) -> None:
    from codevouch import clear_caches
    from codevouch.worktree.git._process import PROCESSES

    repo.write("a.py", "A = 1\n")
    repo.write("dir/b.txt", "b\n")
    os.symlink("a.py", repo.root / "link.py")
    first = repo.commit("files")
    second = repo.commit(**{"dir/c.py": "C = 3\n"})
    clear_caches()
    assert gitio.file_count(repo.root, first) == len(gitio.ls_tree(repo.root, first)) == 2   # not the symlink
    started = sum(PROCESSES.values())
    assert gitio.file_count(repo.root, first) == 2 and sum(PROCESSES.values()) == started   # kept by commit
    assert gitio.file_count(repo.root, second) == 3 and sum(PROCESSES.values()) == started + 1
    # A name that can move (HEAD) is asked each time.
    assert gitio.file_count(repo.root, "HEAD") == 3 and gitio.file_count(repo.root, "HEAD") == 3
    assert sum(PROCESSES.values()) == started + 3

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


def test_the_trees_of_many_small_repositories_are_all_kept(tmp_path) -> None:
    # One query across repositories checks hits in many of them: kept by count (4 trees), each
    # repository's tree was listed again by a process on every call.
    from codevouch.worktree.git import objects

    kept = []
    for n in range(12):
        repo = Repo(tmp_path / f"r{n}")
        commit = repo.commit("one", **{"f.txt": f"{n}\n"})
        gitio.keep_tree(repo.root, commit, {"f.txt": repo.blob(commit, "f.txt")})
        kept.append((repo.root, commit))
    assert all(gitio.kept_tree(root, commit) is not None for root, commit in kept)
    objects._TREES.clear()


def test_kept_trees_are_bounded_by_the_paths_they_hold(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    from codevouch.worktree.git import objects

    monkeypatch.setattr(objects, "KEPT_TREES_PATHS", 5)
    kept = []
    for n in range(3):
        repo = Repo(tmp_path / f"r{n}")
        commit = repo.commit("one", **{"f.txt": f"{n}\n"})
        gitio.keep_tree(repo.root, commit, {f"{i}.txt": "0" * 40 for i in range(2)})
        kept.append((repo.root, commit))
    assert [gitio.kept_tree(root, commit) is not None for root, commit in kept] == [False, True, True]
    assert sum(map(len, objects._TREES.values())) <= 5
    objects._TREES.clear()
