"""The root commit kept in the index directory between processes (codevouch/worktree/rootcache.py):
a hit gives what the walk gives, and whatever can change the walk's answer for the same HEAD
(a deepened shallow clone, a replace ref, grafts, a new HEAD) or spoil the file gives the
walk's answer again. Real git repositories in temp dirs; the walk is counted, not mocked."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from codevouch import clear_caches
from codevouch.worktree import gitio, rootcache
from codevouch.worktree.identity import identify, repo_id
from tests.gitrepo import GIT_ENV, Repo


def _history(repo: Repo, n: int) -> list[str]:
    return [repo.commit(f"c{i}", **{"f.txt": f"{i}\n"}) for i in range(n)]


def _walks() -> int:
    return gitio.PROCESSES["rev-list"]


def _id(root: Path, index_dir: Path) -> tuple[str, int]:
    """The repository's id as a fresh process finds it, and how many rev-list processes it took."""
    clear_caches()
    before = _walks()
    found = identify(root, index_dir).id
    return found, _walks() - before


def _clone(source: Path, dest: Path, *args: str) -> Repo:
    subprocess.run(["git", "clone", "-q", *args, f"file://{source}", str(dest)], check=True,
                   env={**os.environ, **GIT_ENV}, capture_output=True)
    repo = Repo.__new__(Repo)
    repo.root = dest
    return repo


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    d = tmp_path / "index"
    d.mkdir()
    (d / rootcache.LEDGER).write_bytes(b"")       # an index directory: the file is kept beside a ledger
    return d


def test_a_hit_gives_the_same_identity_without_walking(repo: Repo, cache: Path) -> None:
    first = _history(repo, 3)[0]
    assert _id(repo.root, cache) == (first, 1)           # the walk, kept
    assert (cache / rootcache.FILE).is_file()
    found, walks = _id(repo.root, cache)
    assert found == first and walks == 1                 # one rev-list: the check, not the walk
    assert gitio.is_root(repo.root, first) and not gitio.is_root(repo.root, repo.head())


def test_no_index_no_file(repo: Repo, tmp_path: Path) -> None:
    first = _history(repo, 2)[0]
    missing, empty = tmp_path / "absent", tmp_path / "empty"
    empty.mkdir()
    assert _id(repo.root, missing)[0] == _id(repo.root, empty)[0] == first
    assert not missing.exists()                          # a read never creates an index directory ...
    assert list(empty.iterdir()) == []                   # ... nor leaves a file where no index is


def test_the_ledger_name_is_the_stores() -> None:
    from codevouch.store.indexdir import LEDGER

    assert rootcache.LEDGER == LEDGER


def test_a_new_head_is_a_new_key(repo: Repo, cache: Path) -> None:
    first = _history(repo, 2)[0]
    _id(repo.root, cache)
    repo.git("checkout", "-q", "--orphan", "other")
    other = repo.commit("another root", **{"g.txt": "x\n"})
    assert _id(repo.root, cache) == (other, 1)
    repo.git("checkout", "-q", "main")
    assert _id(repo.root, cache)[0] == first


def test_a_deepened_shallow_clone_gives_its_new_root(repo: Repo, cache: Path, tmp_path: Path) -> None:
    commits = _history(repo, 6)
    clone = _clone(repo.root, tmp_path / "shallow", "--depth", "2")
    assert _id(clone.root, cache)[0] == commits[-2]      # the boundary stands in for the root
    assert _id(clone.root, cache)[0] == commits[-2]
    clone.git("fetch", "-q", "--deepen", "2")
    assert clone.head() == commits[-1]                   # the same HEAD ...
    assert _id(clone.root, cache) == (commits[-4], 1)    # ... another answer, walked
    clone.git("fetch", "-q", "--unshallow")
    assert _id(clone.root, cache)[0] == commits[0]


def test_a_replace_ref_is_never_cached(repo: Repo, cache: Path) -> None:
    commits = _history(repo, 4)
    assert _id(repo.root, cache)[0] == commits[0]
    # commits[2] replaced by a copy without parents: from HEAD, the first-parent walk ends there
    # (git names the replaced commit by its own id).
    body = repo.git("cat-file", "commit", commits[2])
    orphan = repo.git("hash-object", "-t", "commit", "-w", "--stdin",
                      stdin="".join(ln + "\n" for ln in body.splitlines() if not ln.startswith("parent ")).encode()).strip()
    repo.git("replace", commits[2], orphan)
    assert rootcache.history_key(repo.root, repo.head()) is None
    assert _id(repo.root, cache)[0] == commits[2]
    repo.git("pack-refs", "--all")                       # packed, not loose: still seen
    assert not (repo.root / ".git" / "refs" / "replace" / commits[2]).exists()
    assert _id(repo.root, cache)[0] == commits[2]
    repo.git("replace", "-d", commits[2])
    assert _id(repo.root, cache)[0] == commits[0]


def test_grafts_are_part_of_the_key(repo: Repo, cache: Path) -> None:
    commits = _history(repo, 4)
    assert _id(repo.root, cache)[0] == commits[0]
    (repo.root / ".git" / "info").mkdir(exist_ok=True)
    (repo.root / ".git" / "info" / "grafts").write_text(f"{commits[1]}\n")    # commits[1] without parents
    assert _id(repo.root, cache)[0] == commits[1]
    (repo.root / ".git" / "info" / "grafts").unlink()
    assert _id(repo.root, cache)[0] == commits[0]


def test_the_replace_base_variable_turns_the_cache_off(repo: Repo, cache: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    _history(repo, 2)
    monkeypatch.setenv("GIT_REPLACE_REF_BASE", "refs/heads/")
    assert rootcache.history_key(repo.root, repo.head()) is None


@pytest.mark.parametrize("content", [
    b"garbage\n",
    b"\x00" * 100,
    b"",
    "planted",      # a well-formed line for this key naming a commit that is not a root
    "foreign",      # ... naming a commit this repository does not have
])
def test_a_corrupt_or_planted_file_is_a_miss(repo: Repo, cache: Path, content: bytes | str) -> None:
    commits = _history(repo, 3)
    key = rootcache.history_key(repo.root, repo.head())
    assert key is not None
    checked = isinstance(content, str)          # a line of the right form is checked by git first
    if content == "planted":
        content = f"{key} {commits[1]}\n".encode()
    elif content == "foreign":
        content = f"{key} {'ab' * 20}\n".encode()
    assert isinstance(content, bytes)
    (cache / rootcache.FILE).write_bytes(content)
    assert _id(repo.root, cache) == (commits[0], 1 + checked)      # (the failed check), the walk
    assert _id(repo.root, cache) == (commits[0], 1)      # the file is right again


def test_a_symlinked_or_fifo_cache_file_is_not_read(repo: Repo, cache: Path, tmp_path: Path) -> None:
    first = _history(repo, 2)[0]
    key = rootcache.history_key(repo.root, repo.head())
    outside = tmp_path / "outside"
    outside.write_text(f"{key} {first}\n")
    (cache / rootcache.FILE).symlink_to(outside)
    assert rootcache.lookup(cache, str(key)) is None
    assert _id(repo.root, cache) == (first, 1)           # walked; the link replaced by a file
    assert not (cache / rootcache.FILE).is_symlink() and outside.read_text() == f"{key} {first}\n"
    (cache / rootcache.FILE).unlink()
    os.mkfifo(cache / rootcache.FILE)
    assert rootcache.lookup(cache, str(key)) is None     # and did not block


def test_two_clones_keep_two_entries_and_the_file_is_bounded(repo: Repo, cache: Path, tmp_path: Path) -> None:
    first = _history(repo, 2)[0]
    clone = _clone(repo.root, tmp_path / "clone")
    assert rootcache.history_key(clone.root, clone.head()) != rootcache.history_key(repo.root, repo.head())
    assert _id(repo.root, cache)[0] == _id(clone.root, cache)[0] == first
    for i in range(rootcache.MAX_ENTRIES + 5):
        rootcache.remember(cache, f"{i:064x}", first)
    lines = (cache / rootcache.FILE).read_text().splitlines()
    assert len(lines) == rootcache.MAX_ENTRIES and lines[-1] == f"{rootcache.MAX_ENTRIES + 4:064x} {first}"


def test_a_linked_worktree_shares_the_repository_key(repo: Repo, cache: Path, tmp_path: Path) -> None:
    first = _history(repo, 2)[0]
    repo.git("worktree", "add", "-q", str(tmp_path / "wt"), "-b", "side")
    wt = tmp_path / "wt"
    assert rootcache.history_key(wt, repo.head()) == rootcache.history_key(repo.root, repo.head())
    assert repo_id(wt, repo.head(), cache) == first


def test_a_process_keeps_the_identity_of_every_repository_one_query_may_search(tmp_path: Path) -> None:
    # A query across repositories asks each one's id on every call: a process-wide memory smaller
    # than the number of repositories (it held 64) forgot each before it came round again, and
    # every warm call started a rev-list per repository.
    from codevouch.across import MAX_REPOS

    clear_caches()
    roots = []
    for n in range(MAX_REPOS):
        repo = Repo(tmp_path / f"r{n}")
        roots.append((repo.root, repo.commit("one", **{"f.txt": f"{n}\n"})))
    for root, head in roots:
        repo_id(root, head, None)
    before = _walks()
    assert [repo_id(root, head, None) for root, head in roots] == [head for _, head in roots]
    assert _walks() == before
