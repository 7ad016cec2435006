"""What each repository and branch takes on disk (`index status`), on real indexes."""
from __future__ import annotations

import json
from pathlib import Path

from codevouch.commands.exits import EXIT_OK
from codevouch.store import IndexDir, space_name
from codevouch.store.sizes import dir_bytes, disk_usage
from codevouch.store.vectors import _segment_dirs
from codevouch.worktree.identity import identify
from tests.clihelp import FAKE, cv
from tests.gitrepo import Repo


def built(tmp_path: Path) -> tuple[Repo, Repo, Path]:
    """`shop` with main and `feature` (one file more), and `blog`, in one index."""
    index = tmp_path / "index"
    shop, blog = Repo(tmp_path / "shop"), Repo(tmp_path / "blog")
    shop.commit_files({f"shop/m{i}.py": f"def order_{i}(order):\n    return order.total() + {i}\n" for i in range(20)})
    shop.checkout("-q", "-b", "feature")
    shop.commit(**{"shop/ship.py": "def ship_order(order):\n    return order.ship()\n"})
    shop.checkout("-q", "main")
    blog.commit_files({"post.py": "def publish(post):\n    return post.publish()\n"})
    assert cv("index", "build", "--repo", str(shop.root), "--all-branches", *FAKE, index=index).returncode == EXIT_OK
    assert cv("index", "build", "--repo", str(blog.root), *FAKE, index=index).returncode == EXIT_OK
    return shop, blog, index


def test_each_branch_counts_what_it_holds_alone(tmp_path: Path) -> None:
    shop, _blog, index = built(tmp_path)
    usage = disk_usage(index)
    branches = {(b["repo"], b["branch"]): b for b in usage["branches"]}
    feature, main = branches[(str(shop.root), "feature")], branches[(str(shop.root), "main")]
    # feature is main plus ship.py: that file's chunk and vector are its own, main has none.
    assert (feature["own_chunks"], feature["own_vectors"]) == (1, 1)
    assert (main["own_chunks"], main["own_vectors"]) == (0, 0)
    assert main["bytes"]["vectors"] == 0 and main["bytes"]["embedding_cache"] == 0
    shop_vectors = next(r for r in usage["repositories"] if r["repo"] == str(shop.root))["bytes"]["vectors"]
    assert feature["bytes"]["vectors"] == round(shop_vectors / 21)    # one of the space's 21 vectors
    for b in (feature, main):
        assert b["bytes"]["lexical"] > 0 and b["bytes"]["ledger"] > 0
        assert b["bytes"]["total"] == sum(v for k, v in b["bytes"].items() if k != "total")


def test_a_repository_counts_its_space_and_forgetting_it_frees_what_was_measured(tmp_path: Path) -> None:
    shop, _blog, index = built(tmp_path)
    usage = disk_usage(index)
    repos = {r["repo"]: r for r in usage["repositories"]}
    shop_size = repos[str(shop.root)]
    assert shop_size["branches"] == ["feature", "main"]
    assert (shop_size["chunks"], shop_size["vectors"]) == (21, 21)
    space = space_name(identify(shop.root).id, "fake-bow-64")
    assert shop_size["bytes"]["lexical"] == dir_bytes(IndexDir(index).lexical_space(space))
    assert shop_size["bytes"]["vectors"] > 0 and shop_size["bytes"]["embedding_cache"] > 0
    assert usage["total"] == dir_bytes(index)
    hnsw = sum(dir_bytes(d) for d in _segment_dirs(IndexDir(index).chroma, space))
    assert 0 < hnsw < shop_size["bytes"]["vectors"]

    where = IndexDir(index)
    before = dir_bytes(where.lexical), dir_bytes(where.chroma)
    assert cv("index", "forget", "--repo", str(shop.root), index=index).returncode == EXIT_OK
    after = disk_usage(index)
    # The lexical copies and the HNSW files go; SQLite files keep their freed pages for later writes.
    assert before[0] - dir_bytes(where.lexical) == shop_size["bytes"]["lexical"]
    assert before[1] - dir_bytes(where.chroma) >= hnsw
    assert [r["repo"] for r in after["repositories"]] == [str(_blog.root)]


def test_index_status_shows_sizes_per_repository_and_branch(tmp_path: Path) -> None:
    shop, blog, index = built(tmp_path)
    done = cv("index", "status", "--json", index=index)
    assert done.returncode == EXIT_OK, done.stderr
    status = json.loads(done.stdout)
    assert {r["repo"] for r in status["repositories"]} == {str(shop.root), str(blog.root)}
    assert all(b["size"]["chunks"] > 0 and "own_chunks" in b["size"] for b in status["branches"])
    assert status["disk"]["total"] == dir_bytes(index)
    only = json.loads(cv("index", "status", "--repo", str(blog.root), "--json", index=index).stdout)
    assert [r["repo"] for r in only["repositories"]] == [str(blog.root)]
    text = cv("index", "status", index=index).stdout
    assert f"== {shop.root}: 2 branches, 21 chunks, 21 vectors, " in text
    assert "  size: 21 chunks; its own (no other branch shares them): 1 chunk, 1 vector, " in text
    assert "in no repository (usage records, team snapshots, free pages)" in text
