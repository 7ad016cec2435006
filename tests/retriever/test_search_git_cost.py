"""A validated search asks git once for what its parts share (issue 22.1), and stays exact.

The search's rev-parse (top, HEAD, branch) and the overlay's `git status` serve the validator and
the usage record too; commit objects and HEAD's tree are kept for the process; `git status`
reads a refreshed private copy of the index instead of hashing racily clean files on every call.
Counted by gitio's own counter (gitio.PROCESSES: every git process codevouch starts).
"""
from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from codevouch import Index
from codevouch.embedding import FakeEmbedder
from codevouch.store import usage
from codevouch.worktree import gitio
from codevouch.worktree.config import load_repo_config
from codevouch.worktree.git import hashing, status
from tests.gitrepo import Repo

FILES = {
    "shop/cancel.py": "def cancel_order(order):\n    \"\"\"Cancel an order.\"\"\"\n    order.cancel()\n    return order\n",
    "shop/refund.py": "def refund_order(order):\n    \"\"\"Refund an order.\"\"\"\n    return order.refund()\n",
    "pyproject.toml": "[project]\nname = 'shop'\n\n[tool.codevouch]\nvendor = ['build/*']\n",
}


def processes() -> int:
    return sum(gitio.PROCESSES.values())


def test_a_warm_validated_search_starts_at_most_three_git_processes(repo: Repo, index_dir: Path) -> None:
    head = repo.commit_files(FILES)
    index = Index(repo.root, index_dir, embedder=FakeEmbedder())
    index.build()
    index.search("cancel an order")                   # warm: HEAD's commit and tree, the hits' blobs
    before = processes()
    hits = index.search("cancel an order")
    # rev-parse (top, HEAD, branch) and status; a third when a hit's blob was never read.
    assert processes() - before <= 3, dict(gitio.PROCESSES)
    assert hits and hits[0].path == "shop/cancel.py" and hits[0].reason == "same-commit"
    # The usage record still names the branch, the index's commit and HEAD, from the search's facts.
    rec = usage.UsageLog(index_dir).recent(str(repo.root.resolve()), 1)[-1]
    assert (rec.op, rec.branch, rec.index_commit, rec.head) == ("search", "main", head, head)
    # Before: 13 processes (two statuses, three rev-parse HEAD, two --show-toplevel, identity, remote ...).


def test_an_edit_between_searches_is_seen_with_the_shared_status(repo: Repo, index_dir: Path) -> None:
    repo.commit_files(FILES)
    index = Index(repo.root, index_dir, embedder=FakeEmbedder(), record=False)
    index.build()
    assert index.search("refund an order")[0].reason == "same-commit"
    repo.write("shop/refund.py", FILES["shop/refund.py"].replace("order.refund()", "order.refund(all=True)"))
    hit = next(h for h in index.search("refund an order", overlay=False) if h.path == "shop/refund.py")
    assert hit.verdict == "historical-only" and hit.reason == "content-changed"
    hit = next(h for h in index.search("refund an order") if h.path == "shop/refund.py")
    assert hit.record.origin == "uncommitted" and hit.verdict == "usable"


def test_a_same_second_same_size_edit_is_never_called_unchanged(repo: Repo) -> None:
    """git's racy-git rule still decides against the private copy: an edit in the second the copy
    was refreshed, same size, same mtime (ctime not trusted), is hashed and seen."""
    repo.commit_files(FILES)
    repo.git("config", "core.trustctime", "false")     # only the racy rule can catch it now
    root = Path(gitio.repo_root(repo.root))
    path = root / "shop" / "cancel.py"
    # Its mtime at or after the second the copy is refreshed in (a later second stands for it,
    # whatever second the refresh falls in): git cannot trust its stat data, and says so in the copy.
    soon = (int(time.time()) + 30) * 10**9
    os.utime(path, ns=(soon, soon))
    assert gitio.worktree_status(root, untracked=False, toplevel=True).changed == frozenset()
    copy = status._private_index(root)
    assert copy is not None and not copy.startswith(str(root))     # outside the repository
    st = path.stat()
    path.write_text(FILES["shop/cancel.py"].replace("Cancel", "Cancal"))   # same size
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_size == st.st_size
    assert gitio.worktree_status(root, untracked=False, toplevel=True).changed == {"shop/cancel.py"}
    assert gitio.worktree_status(root, untracked=False, toplevel=True).changed == {"shop/cancel.py"}
    # The repository's own index was never written.
    assert gitio.worktree_status(root, untracked=False).changed == {"shop/cancel.py"}


def test_racily_clean_files_are_hashed_once_not_on_every_status(repo: Repo) -> None:
    """A fresh clone's files are racily clean (same second as the index): the private copy is
    refreshed once, then trusted: the next status opens no file (checked through /proc/self/io
    would be flaky; instead, the copy git rewrote carries the files' stat data)."""
    repo.commit_files(FILES)
    root = Path(gitio.repo_root(repo.root))
    second = repo.settle(*FILES)
    real = root / ".git" / "index"
    os.utime(real, ns=(second * 10**9 + 5 * 10**8,) * 2)        # racy: the same second
    real_bytes = real.read_bytes()
    assert gitio.worktree_status(root, toplevel=True).changed == frozenset()
    copy = Path(status._private_index(root) or "")
    assert copy.is_file() and copy.stat().st_mtime_ns > real.stat().st_mtime_ns   # git refreshed it
    assert gitio.worktree_status(root, toplevel=True).changed == frozenset()
    assert real.read_bytes() == real_bytes and real.stat().st_mtime_ns == second * 10**9 + 5 * 10**8
    # A `git add` changes the real index: the copy is taken again and sees the staged file.
    repo.write("shop/new.py", "x = 1\n")
    repo.git("add", "shop/new.py")
    assert gitio.worktree_status(root, toplevel=True).changed == {"shop/new.py"}


def test_the_repository_config_is_read_again_when_it_changes(repo: Repo) -> None:
    repo.commit_files(FILES)
    assert load_repo_config(repo.root).table == {"vendor": ["build/*"]}
    load_repo_config(repo.root).table["vendor"].append("mutated")      # a caller's copy only
    assert load_repo_config(repo.root).table == {"vendor": ["build/*"]}
    repo.write("pyproject.toml", FILES["pyproject.toml"].replace("build/*", "dist/*"))
    assert load_repo_config(repo.root).table == {"vendor": ["dist/*"]}


def test_a_usage_file_removed_between_records_is_made_again(repo: Repo, index_dir: Path) -> None:
    repo.commit_files(FILES)
    index = Index(repo.root, index_dir, embedder=FakeEmbedder())
    index.build()
    index.search("cancel an order")
    log = usage.UsageLog(index_dir)
    assert len(log.recent(str(repo.root.resolve()), 10)) == 1
    for suffix in ("", "-wal", "-shm"):
        Path(f"{log.path}{suffix}").unlink(missing_ok=True)
    index.search("cancel an order")
    assert len(log.recent(str(repo.root.resolve()), 10)) == 1


def test_an_edit_in_the_second_the_real_index_was_written_is_seen_in_the_copy(repo: Repo) -> None:
    """The copy keeps the real index's mtime: git judges raciness by it, so a file changed in the
    second the real index was written (same size, mtime equal to the second, ctime not trusted)
    is hashed, as it would be with the real index, not trusted because the copy is newer."""
    repo.commit_files(FILES)
    repo.git("config", "core.trustctime", "false")
    root = Path(gitio.repo_root(repo.root))
    second = repo.settle(*FILES)
    os.utime(root / ".git" / "index", ns=(second * 10**9 + 5 * 10**8,) * 2)
    path = root / "shop" / "refund.py"
    path.write_text(FILES["shop/refund.py"].replace("Refund", "Refand"))       # same size
    os.utime(path, ns=(second * 10**9 + 7 * 10**8,) * 2)                        # the same second
    assert gitio.worktree_status(root, untracked=False).changed == {"shop/refund.py"}   # git itself
    assert gitio.worktree_status(root, untracked=False, toplevel=True).changed == {"shop/refund.py"}
    assert gitio.worktree_status(root, untracked=False, toplevel=True).changed == {"shop/refund.py"}


def test_the_validator_reuses_the_overlays_status_and_hashes(repo: Repo, index_dir: Path) -> None:
    """Issue 18's warm latency: with edits in the working tree, the overlay's status and its
    hash-object serve the validator of the same search (one of each per call, not two)."""
    repo.commit_files(FILES)
    index = Index(repo.root, index_dir, embedder=FakeEmbedder(), record=False)
    index.build()
    repo.write("shop/refund.py", FILES["shop/refund.py"].replace("order.refund()", "order.refund(all=True)"))
    repo.write("shop/cancel.py", FILES["shop/cancel.py"] + "\n\ndef keep(order):\n    return order\n")
    index.search("refund an order")                   # warm: the overlay's chunks and vectors
    before = dict(gitio.PROCESSES)
    hits = index.search("refund an order", k=5)
    delta = {k: n - before.get(k, 0) for k, n in gitio.PROCESSES.items() if n != before.get(k, 0)}
    assert delta.get("status") == 1 and delta.get("hash-object") == 1, delta
    by_path = {h.path: h for h in hits}
    assert by_path["shop/refund.py"].record.origin == "uncommitted" and by_path["shop/refund.py"].verdict == "usable"
    assert by_path["shop/cancel.py"].verdict == "usable"


def test_a_warm_search_over_edits_starts_only_rev_parse_and_status_and_still_sees_the_next_edit(
        repo: Repo, index_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 18's warm latency: the changed files' blob ids are kept by stat data, and the diff
    against the indexed commit by what decides it, so a warm call over the same edits asks git
    for its status alone; an edit that keeps the size and sets the mtime back is still seen."""
    repo.commit_files(FILES)
    index = Index(repo.root, index_dir, embedder=FakeEmbedder(), record=False)
    index.build()
    edited = repo.write("shop/refund.py", FILES["shop/refund.py"].replace("order.refund()", "order.refund(all=True)"))
    repo.write("shop/new.py", "def apply_discount_coupon(order, coupon):\n    return order.discount(coupon)\n")
    monkeypatch.setattr(hashing, "RACY_NS", 0)      # files count as old at once (else after 2 s)
    time.sleep(0.02)
    index.search("refund an order")
    before = dict(gitio.PROCESSES)
    hits = index.search("refund an order", k=5)
    delta = {k: n - before.get(k, 0) for k, n in gitio.PROCESSES.items() if n != before.get(k, 0)}
    assert delta == {"rev-parse": 1, "status": 1}, delta
    assert next(h for h in hits if h.path == "shop/refund.py").code.count("all=True") == 1
    # Same size, mtime set back: the ctime moved, so the file is hashed again and its new text found.
    old = edited.stat()
    edited.write_text(edited.read_text().replace("all=True", "all=Fals"))
    os.utime(edited, ns=(old.st_atime_ns, old.st_mtime_ns))
    hit = next(h for h in index.search("refund an order", k=5) if h.path == "shop/refund.py")
    assert hit.verdict == "usable" and "all=Fals" in (hit.code or "") and "all=True" not in (hit.code or "")
    assert index.search("apply_discount_coupon")[0].path == "shop/new.py"


def test_an_uncommitted_hit_says_it_was_cut_from_the_working_tree(repo: Repo, index_dir: Path) -> None:
    """An overlay hit's reason was `same-commit` (indexed at HEAD), and the same hit validated
    after one more edit said the code "changed since it was indexed": it was never indexed."""
    repo.commit_files(FILES)
    index = Index(repo.root, index_dir, embedder=FakeEmbedder(), record=False)
    index.build()
    repo.write("shop/refund.py", FILES["shop/refund.py"].replace("order.refund()", "order.refund(all=True)"))
    hit = next(h for h in index.search("refund an order") if h.path == "shop/refund.py")
    assert (hit.record.origin, hit.verdict, hit.reason) == ("uncommitted", "usable", "same-worktree")
    snippet = hit.snippet()
    repo.write("shop/refund.py", FILES["shop/refund.py"].replace("order.refund()", "order.refund(all=False)"))
    again = index.validate([snippet])[0]
    assert again.verdict != "usable"
    assert "since it was indexed" not in again.detail and "cut from the working tree" in again.detail
