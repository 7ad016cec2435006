"""`codevouch index forget`: a branch or a repository removed from an index, under the writer lock,
crash-safe; real repositories, the real embedded Chroma store and ledger, the fake embedder."""
from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from codevouch.commands.exits import EXIT_NOT_INDEXED, EXIT_OK
from codevouch.embedding import FakeEmbedder
from codevouch.errors import NotIndexed
from codevouch.indexer.build import build_index
from codevouch.indexer.forget import forget
from codevouch.store import IndexDir, space_name
from codevouch.store.forget import DROP_ALL
from codevouch.worktree.identity import identify
from tests import storehelp
from tests.clihelp import FAKE, cv
from tests.gitrepo import Repo

SHARED = {"shop/orders.py": "def cancel_order(order):\n    return order.cancel()\n",
          "shop/refunds.py": "def refund_order(order):\n    return order.refund()\n"}


def space(repo: Repo) -> str:
    return space_name(identify(repo.root).id, "fake-bow-64")


def rows(index: Path, sql: str) -> list[tuple]:
    db = sqlite3.connect(f"file:{IndexDir(index).ledger}?mode=ro", uri=True)
    try:
        return db.execute(sql).fetchall()
    finally:
        db.close()


def collections(index: Path) -> set[str]:
    db = sqlite3.connect(f"file:{IndexDir(index).chroma_file}?mode=ro", uri=True)
    try:
        return {name for (name,) in db.execute("SELECT name FROM collections")}
    finally:
        db.close()


def search(repo: Repo, index: Path, query: str, branch: str) -> tuple[int, list[str]]:
    done = cv("search", query, "--repo", str(repo.root), "--branch", branch, "--json", "--no-record", index=index)
    if done.returncode:
        return done.returncode, []
    return done.returncode, [h["path"] for h in json.loads(done.stdout)]


@pytest.fixture
def two_branches(tmp_path: Path) -> tuple[Repo, Path]:
    """main, and `feature` with one file more; both built."""
    repo = Repo(tmp_path / "shop")
    repo.commit_files(SHARED)
    repo.checkout("-q", "-b", "feature")
    repo.commit(**{"shop/ship.py": "def ship_order(order):\n    return order.ship()\n"})
    repo.checkout("-q", "main")
    index = tmp_path / "index"
    assert cv("index", "build", "--repo", str(repo.root), "--all-branches", *FAKE, index=index).returncode == EXIT_OK
    return repo, index


def test_forget_a_branch_leaves_the_others_searchable(two_branches: tuple[Repo, Path]) -> None:
    repo, index = two_branches
    assert search(repo, index, "ship_order", "feature")[1][0] == "shop/ship.py"
    texts = len(rows(index, "SELECT * FROM space_texts"))

    done = cv("index", "forget", "--repo", str(repo.root), "--branch", "feature", "--json", index=index)
    assert done.returncode == EXIT_OK, done.stderr
    report = json.loads(done.stdout)
    assert report["branches"] == ["feature"] and report["remaining_branches"] == ["main"]
    assert not report["repository_forgotten"]
    # Only what no other branch shares went: ship.py's chunk, its vector and its cached embedding.
    assert report["removed"]["chunks"] == 1 and report["removed"]["vectors"] == 1
    assert report["removed"]["embedding_cache"] == 1
    assert len(rows(index, "SELECT * FROM space_texts")) == texts - 1
    assert storehelp.vector_count(index, space(repo)) == texts - 1

    assert search(repo, index, "ship_order", "feature")[0] == EXIT_NOT_INDEXED
    code, paths = search(repo, index, "cancel_order", "main")
    assert code == EXIT_OK and paths[0] == "shop/orders.py"
    status = json.loads(cv("index", "status", "--repo", str(repo.root), "--json", index=index).stdout)
    assert [b["branch"] for b in status["branches"]] == ["main"]


def test_forget_the_last_branch_forgets_the_repository(two_branches: tuple[Repo, Path]) -> None:
    repo, index = two_branches
    for branch in ("main", "feature"):
        done = cv("index", "forget", "--repo", str(repo.root), "-b", branch, "--json", index=index)
        assert done.returncode == EXIT_OK, done.stderr
    assert json.loads(done.stdout)["repository_forgotten"]
    # Nothing of it is left: rows, cache, collection (and its HNSW files), tantivy copies.
    for table in ("branches", "files", "space_blobs", "space_chunks", "space_texts", "lexmap", "embeddings",
                  "pending"):
        assert rows(index, f"SELECT * FROM {table}") == [], table
    assert space(repo) not in collections(index)
    assert [p.name for p in IndexDir(index).chroma.iterdir()] == ["chroma.sqlite3"]
    assert not IndexDir(index).lexical_space(space(repo)).exists()
    assert search(repo, index, "cancel_order", "main")[0] == EXIT_NOT_INDEXED


def test_forget_one_repository_keeps_another_and_the_vectors_it_shares(tmp_path: Path) -> None:
    """Two repositories with one identical file: the cache row of its text serves both (content
    decides identity), so forgetting one repository keeps it."""
    index = tmp_path / "index"
    one, two = Repo(tmp_path / "one"), Repo(tmp_path / "two")
    one.commit_files(SHARED)
    two.commit_files({"shop/orders.py": SHARED["shop/orders.py"],
                      "shop/stock.py": "def restock(item):\n    return item.restock()\n"})
    for repo in (one, two):
        assert cv("index", "build", "--repo", str(repo.root), *FAKE, index=index).returncode == EXIT_OK
    done = cv("index", "forget", "--repo", str(one.root), index=index)
    assert done.returncode == EXIT_OK, done.stderr
    assert f"forgot the repository {one.root}, its 1 branch (main)," in done.stdout and "kept 1 cached embedding" in done.stdout
    assert len(rows(index, "SELECT * FROM embeddings")) == 2      # two's texts: orders.py (shared) and stock.py
    assert space(one) not in collections(index) and space(two) in collections(index)
    code, paths = search(two, index, "cancel_order", "main")
    assert code == EXIT_OK and paths[0] == "shop/orders.py"


def test_a_repository_gone_from_disk_is_forgotten_by_its_path_or_its_root_commit(tmp_path: Path) -> None:
    index = tmp_path / "index"
    for name in ("gone", "gone-too"):
        repo = Repo(tmp_path / name)
        repo.commit_files({**SHARED, "name.txt": name})
        root_commit = identify(repo.root).id
        assert cv("index", "build", "--repo", str(repo.root), *FAKE, index=index).returncode == EXIT_OK
        shutil.rmtree(repo.root)
    gone = cv("index", "forget", "--repo", str(tmp_path / "gone"), index=index)
    assert gone.returncode == EXIT_OK, gone.stderr
    # By the id status shows (relative to a working directory elsewhere: the path is not there).
    by_id = cv("index", "forget", "--repo", root_commit[:12], "--json", index=index, cwd=tmp_path)
    assert by_id.returncode == EXIT_OK, by_id.stderr
    assert json.loads(by_id.stdout)["repo"] == str(tmp_path / "gone-too")
    assert rows(index, "SELECT * FROM branches") == []


def test_forget_of_an_unknown_repository_or_branch_is_not_indexed_and_changes_nothing(
        two_branches: tuple[Repo, Path], tmp_path: Path) -> None:
    repo, index = two_branches
    before = rows(index, "SELECT * FROM files ORDER BY coll, path")
    nowhere = cv("index", "forget", "--repo", str(tmp_path / "nowhere"), index=index)
    assert nowhere.returncode == EXIT_NOT_INDEXED
    assert "is not in the index" in nowhere.stderr and "index status" in nowhere.stderr
    other = Repo(tmp_path / "other")
    other.commit_files({"x.py": "X = 1\n"})
    assert cv("index", "forget", "--repo", str(other.root), index=index).returncode == EXIT_NOT_INDEXED
    branch = cv("index", "forget", "--repo", str(repo.root), "--branch", "nosuch", index=index)
    assert branch.returncode == EXIT_NOT_INDEXED
    assert "branch 'nosuch'" in branch.stderr and "feature, main" in branch.stderr
    empty = cv("index", "forget", "--repo", str(repo.root), index=tmp_path / "empty")
    assert empty.returncode == EXIT_NOT_INDEXED and not (tmp_path / "empty").exists()
    assert rows(index, "SELECT * FROM files ORDER BY coll, path") == before


@pytest.mark.parametrize("phase", ["staged", "committed"])
def test_a_killed_forget_leaves_the_old_or_the_new_state_readable(two_branches: tuple[Repo, Path],
                                                                   phase: str) -> None:
    """Killed inside its transaction: nothing changed. Killed after the commit: the new state,
    whole; the next writer (here a build of another branch) removes the collection it left."""
    repo, index = two_branches

    def die(at: str) -> None:
        if at == phase:
            raise KeyboardInterrupt(at)

    with pytest.raises(KeyboardInterrupt):
        forget(index, repo.root, str(repo.root), on_phase=die)
    assert space(repo) in collections(index)
    code, paths = search(repo, index, "ship_order", "feature")
    if phase == "staged":
        assert code == EXIT_OK and paths[0] == "shop/ship.py"
        assert search(repo, index, "cancel_order", "main")[1][0] == "shop/orders.py"
        assert rows(index, "SELECT * FROM pending") == []
        return
    assert code == EXIT_NOT_INDEXED and search(repo, index, "cancel_order", "main")[0] == EXIT_NOT_INDEXED
    assert rows(index, "SELECT * FROM pending") == [(space(repo), DROP_ALL)]
    other = Repo(index.parent / "other")
    other.commit_files({"x.py": "def x():\n    return 1\n"})
    build_index(other.root, index, FakeEmbedder())
    assert space(repo) not in collections(index) and space(other) in collections(index)
    assert rows(index, "SELECT * FROM pending") == []
    assert search(other, index, "x", "main")[0] == EXIT_OK


def test_a_forget_waits_for_the_writer_lock(two_branches: tuple[Repo, Path]) -> None:
    from filelock import FileLock

    repo, index = two_branches
    with FileLock(str(IndexDir(index).write_lock)):
        held = cv("index", "forget", "--repo", str(repo.root), index=index)
    assert held.returncode == 4 and "another codevouch build" in held.stderr
    with pytest.raises(NotIndexed):
        forget(index, repo.root, str(repo.root), branches=["nosuch"])


def test_forget_on_a_chroma_server_republishes_or_withdraws_the_team_snapshot(
        two_branches: tuple[Repo, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo, _local = two_branches
    with storehelp.chroma_server(tmp_path / "server") as (url, _proc):
        env = {"CODEVOUCH_CHROMA_URL": url}
        builder, reader = tmp_path / "builder", tmp_path / "reader"
        assert cv("index", "build", "--repo", str(repo.root), "--all-branches", *FAKE, index=builder,
                  env=env).returncode == EXIT_OK
        monkeypatch.setenv("CODEVOUCH_CHROMA_URL", url)

        def reads(branch: str, query: str) -> int:
            return cv("search", query, "--repo", str(repo.root), "--branch", branch, "--no-record", "--json",
                      index=reader, env=env).returncode

        assert reads("feature", "ship_order") == EXIT_OK
        done = cv("index", "forget", "--repo", str(repo.root), "-b", "feature", "--json", index=builder, env=env)
        assert done.returncode == EXIT_OK, done.stderr
        assert json.loads(done.stdout)["server"] == url
        # The reader fetches the new snapshot: feature is gone there too, main answers.
        assert reads("feature", "ship_order") == EXIT_NOT_INDEXED
        assert reads("main", "cancel_order") == EXIT_OK
        assert cv("index", "forget", "--repo", str(repo.root), index=builder, env=env).returncode == EXIT_OK
        assert reads("main", "cancel_order") == EXIT_NOT_INDEXED
        import chromadb

        host, port = url.rsplit(":", 1)
        names = {c if isinstance(c, str) else c.name
                 for c in chromadb.HttpClient(host=host.split("//")[1], port=int(port)).list_collections()}
        assert space(repo) not in names and not any(n.endswith("-ledger") for n in names)
        assert os.listdir(tmp_path / "builder")
