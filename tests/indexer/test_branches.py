"""Many branches in one index: shared storage, per-branch answers, branch patterns, clones."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from codevouch.api import Index
from codevouch.embedding import FakeEmbedder
from codevouch.errors import ConfigError, InputError, NotIndexed
from codevouch.indexer.branches import BranchFilter, select_branches
from codevouch.indexer.build import build_index
from codevouch.request import SearchRequest
from codevouch.retriever.search import search
from codevouch.store import Ledger, space_name
from codevouch.worktree.identity import identify
from tests.clihelp import FAKE, cv
from tests.gitrepo import GIT_ENV, Repo
from tests.storehelp import vector_count

FILES = {f"pkg/mod{i}.py": f"def function_{i}(x):\n    return x + {i}\n\n\ndef helper_{i}():\n    return {i}\n"
         for i in range(12)}


def test_patterns_keep_and_drop() -> None:
    names = ["main", "gh-pages", "release/1.0", "release/2.0", "feature/x"]
    assert select_branches(names, BranchFilter(exclude=("gh-pages",))) == [
        "main", "release/1.0", "release/2.0", "feature/x"]
    assert select_branches(names, BranchFilter(include=("main", "release/*"), exclude=("*/1.0",))) == [
        "main", "release/2.0"]


def many_branches(repo: Repo, n: int) -> list[str]:
    repo.commit_files(FILES)
    names = []
    for i in range(n):
        name = f"topic-{i}"
        repo.git("checkout", "-q", "-b", name, "main")
        repo.commit(**{f"pkg/mod{i}.py": f"def function_{i}(x):\n    return x * {i} - 1  # topic {i}\n"})
        names.append(name)
    repo.git("checkout", "-q", "main")
    return names


def test_branches_share_storage_and_answer_for_themselves(repo: Repo, index_dir: Path) -> None:
    names = many_branches(repo, 6)
    fake = FakeEmbedder()
    [main] = build_index(repo.root, index_dir, fake)
    summaries = build_index(repo.root, index_dir, FakeEmbedder(), branches=names)
    # Each extra branch chunks and embeds only its one changed file; the rest is shared.
    assert all(s.indexed_files == len(FILES) and s.embedded == 1 for s in summaries)
    space = space_name(identify(repo.root).id, fake.name)
    # 24 chunks on main, plus one new chunk per branch: stored once, not once per branch.
    assert vector_count(index_dir, space) == main.chunks + len(names)
    ledger = Ledger(index_dir)
    assert ledger.space_size(space) == main.chunks + len(names)
    ledger.close()
    for i, name in enumerate(names):
        hits = search(repo.root, SearchRequest(f"function_{i} topic {i}", branch=name, k=30), index_dir, embedder=FakeEmbedder())
        mine = [h for h in hits if h.record.path == f"pkg/mod{i}.py"]
        assert mine and all(f"topic {i}" in h.text for h in mine), name
        # No other branch's version of any file leaks into this branch's answer.
        assert not any("topic" in h.text for h in hits if h.record.path != f"pkg/mod{i}.py")
        assert {h.record.branch for h in hits} == {name}
    hits = search(repo.root, SearchRequest("function_3", k=30), index_dir, embedder=FakeEmbedder())
    assert hits and not any("topic" in h.text for h in hits)
    lexical_hits = search(repo.root, SearchRequest("topic", branch="topic-2", k=10, mode="lexical"), index_dir)
    assert [h.record.path for h in lexical_hits] == ["pkg/mod2.py"]


def test_deleting_a_branch_file_keeps_shared_vectors_and_collects_garbage(repo: Repo, index_dir: Path) -> None:
    many_branches(repo, 2)
    build_index(repo.root, index_dir, FakeEmbedder(), all_branches=True)
    space = space_name(identify(repo.root).id, FakeEmbedder().name)
    before = vector_count(index_dir, space)
    # topic-0 moves to main's version of mod0.py: its own chunk is referenced by no branch.
    repo.git("checkout", "-q", "topic-0")
    repo.git("checkout", "-q", "main", "--", "pkg/mod0.py")
    repo.commit("back to main's mod0")
    repo.remove("pkg/mod5.py")
    repo.commit("remove mod5 on topic-0")
    build_index(repo.root, index_dir, FakeEmbedder(), branches=["topic-0"])
    assert vector_count(index_dir, space) == before - 1
    # mod5.py left topic-0 only: history there, live on main.
    hist = search(repo.root, SearchRequest("helper_5", branch="topic-0", k=30, include_history=True), index_dir,
                  embedder=FakeEmbedder())
    assert any(h.record.path == "pkg/mod5.py" and h.record.status == "deleted" for h in hist)
    live = search(repo.root, SearchRequest("helper_5", branch="topic-0", k=30), index_dir, embedder=FakeEmbedder())
    assert not any(h.record.path == "pkg/mod5.py" for h in live)
    main = search(repo.root, SearchRequest("helper_5", branch="main", k=30), index_dir, embedder=FakeEmbedder())
    assert any(h.record.path == "pkg/mod5.py" and h.record.status == "live" for h in main)


def test_include_and_exclude_branch_flags_and_config(repo: Repo, index_dir: Path) -> None:
    repo.commit(**{"a.py": "def a():\n    return 1\n"})
    for name in ("gh-pages", "release/1.0", "release/2.0"):
        repo.git("branch", name)
    idx = Index(repo.root, index_dir, embedder="fake-bow-64")
    built = idx.build(all_branches=True, exclude_branches=["gh-pages"])
    assert sorted(s.branch for s in built) == ["main", "release/1.0", "release/2.0"]
    built = idx.build(all_branches=True, include_branches=["release/*"], exclude_branches=["*/1.0"])
    assert [s.branch for s in built] == ["release/2.0"]
    with pytest.raises(InputError, match="--all-branches"):
        idx.build(include_branches=["main"])
    with pytest.raises(InputError, match="no branch"):
        idx.build(all_branches=True, include_branches=["nothing-*"])
    # The repository's config, read from the working tree; flags replace its lists.
    # Committed too: the exclusion rules read from the indexed commit accept the section.
    repo.commit(**{".codevouch.toml": '[branches]\nexclude = ["gh-pages", "release/*"]\n'})
    assert [s.branch for s in idx.build(all_branches=True)] == ["main"]
    assert sorted(s.branch for s in idx.build(all_branches=True, exclude_branches=["gh-pages"])) == [
        "main", "release/1.0", "release/2.0"]
    # And through the CLI.
    proc = cv("index", "build", "--repo", str(repo.root), "--index", str(index_dir), "--embedder", "fake-bow-64",
              "--all-branches", "--include-branch", "release/*", "--exclude-branch", "release/2*", "--json")
    assert proc.returncode == 0, proc.stderr
    assert [b["branch"] for b in json.loads(proc.stdout)["branches"]] == ["release/1.0"]
    repo.write(".codevouch.toml", '[branches]\nexclude = "gh-pages"\ninclude = [1]\n')
    with pytest.raises(ConfigError, match="branches.include"):
        idx.build(all_branches=True)


def test_a_clone_elsewhere_finds_the_index(repo: Repo, index_dir: Path, tmp_path: Path) -> None:
    repo.commit(**{"shop/cancel.py": "def cancel_order(order):\n    return order.cancel()\n"})
    repo.git("remote", "add", "origin", "https://user:secret-token@example.com/shop.git")
    idx = Index(repo.root, index_dir, embedder="fake-bow-64")
    idx.build()
    clone = tmp_path / "elsewhere" / "clone"
    subprocess.run(["git", "clone", "-q", str(repo.root), str(clone)], check=True)
    other = Index(clone, index_dir)
    hits = other.search("cancel order", k=1, mode="dense")
    assert hits[0].path == "shop/cancel.py" and hits[0].verdict == "usable"
    assert hits[0].record.repo == str(clone.resolve())  # cited in the clone that searched
    [row] = other.status()
    assert row["repo_id"] == identify(repo.root).id and row["repo"] == str(repo.root.resolve())
    assert row["remote"] == "https://example.com/shop.git"  # a label: the token is not kept
    # Moving the repository orphans nothing either.
    moved = tmp_path / "moved"
    repo.root.rename(moved)
    assert Index(moved, index_dir).search("cancel order", k=1, mode="dense")[0].path == "shop/cancel.py"
    # An unrelated repository with the same branch name is not confused with it.
    stranger = Repo(tmp_path / "stranger")
    stranger.commit(**{"x.py": "X = 1\n"})
    with pytest.raises(NotIndexed):
        Index(stranger.root, index_dir).search("cancel order", mode="dense")


def _steps(names: list[str]) -> str:
    return "".join(f"def {n}(order):\n" + "".join(f"    order.apply_{n}_{j}(amount={j})\n" for j in range(12))
                   + "    return order\n\n\n" for n in names)


def test_a_branch_that_edits_a_big_file_stores_only_its_new_texts(repo: Repo, index_dir: Path) -> None:
    """Vectors and lexical rows are keyed by text: a branch that adds one function at the top of
    a file shares the file's other chunks (whose lines moved) and answers with its own lines."""
    repo.commit_files({"shop/flow.py": _steps(["step_a", "step_b", "step_c", "step_d"])})
    repo.git("checkout", "-q", "-b", "topic")
    repo.commit(**{"shop/flow.py": _steps(["step_new", "step_a", "step_b", "step_c", "step_d"])})
    repo.git("checkout", "-q", "main")
    fake = FakeEmbedder()
    [main] = build_index(repo.root, index_dir, fake)
    [topic] = build_index(repo.root, index_dir, FakeEmbedder(), branches=["topic"])
    assert main.chunks == 4 and topic.chunks == 5 and topic.embedded == 1
    space = space_name(identify(repo.root).id, fake.name)
    assert vector_count(index_dir, space) == 5  # not 4 + 5
    ledger = Ledger(index_dir)
    try:
        assert ledger.space_size(space) == 5
        assert ledger.db.execute("SELECT count(*) FROM lexmap WHERE coll=?", (space,)).fetchone()[0] == 5
    finally:
        ledger.close()
    for mode in ("dense", "lexical", "hybrid"):
        for branch, start in (("main", 33), ("topic", 49)):
            [hit] = [h for h in search(repo.root, SearchRequest("step_c apply_step_c_3", branch=branch, k=10, mode=mode),
                                       index_dir, embedder=FakeEmbedder()) if h.record.symbol == "step_c"]
            rec = hit.record
            assert (rec.branch, rec.start_line, rec.end_line) == (branch, start, start + 13), mode
            assert rec.commit == repo.git("rev-parse", branch).strip()
            assert hit.text.startswith("def step_c(order):")
    # topic leaves: its one text goes, main's four stay.
    repo.git("branch", "-D", "topic")
    repo.git("checkout", "-q", "-b", "topic")
    [again] = build_index(repo.root, index_dir, FakeEmbedder(), branches=["topic"])
    assert again.embedded == 0 and vector_count(index_dir, space) == 4


def _commit_at(repo: Repo, year: int, text: str) -> str:
    """A commit (not on any branch) whose committer date is 1 January `year`."""
    tree = repo.git("write-tree").strip()
    date = f"{year}-01-01T00:00:00Z"
    env = {**os.environ, **GIT_ENV, "GIT_COMMITTER_DATE": date, "GIT_AUTHOR_DATE": date}
    return subprocess.run(["git", "-C", str(repo.root), "commit-tree", tree, "-m", text], env=env, check=True,
                          capture_output=True, text=True).stdout.strip()


def test_all_branches_takes_the_most_recently_committed_up_to_the_cap(repo: Repo, index_dir: Path) -> None:
    """A 500,000-entry packed-refs hung `index build --all-branches`; now it takes at most
    CODEVOUCH_MAX_BRANCHES, the newest first, and says how many it left out."""
    repo.commit(**{"a.py": "def a():\n    return 1\n"})
    old, newer, newest = (_commit_at(repo, year, str(year)) for year in (2001, 2002, 2003))
    refs = {f"refs/heads/bulk-{i:04d}": old for i in range(300)}
    refs |= {"refs/heads/main": repo.head(), "refs/heads/new-a": newest, "refs/heads/new-b": newer}
    (repo.root / ".git" / "refs" / "heads" / "main").unlink()
    (repo.root / ".git" / "packed-refs").write_text(
        "# pack-refs with: peeled fully-peeled sorted \n" + "".join(f"{sha} {name}\n" for name, sha in sorted(refs.items())))
    env = {"CODEVOUCH_MAX_BRANCHES": "3"}
    out = cv("index", "build", "--all-branches", "--repo", str(repo.root), *FAKE, index=index_dir, env=env)
    assert out.returncode == 0, out.stderr
    assert [line.split("@")[0] for line in out.stdout.splitlines() if "@" in line] == ["main", "new-a", "new-b"]
    assert "left out 300 branches: --all-branches takes at most 3 (CODEVOUCH_MAX_BRANCHES)" in out.stdout
    built = json.loads(cv("index", "build", "--all-branches", "--repo", str(repo.root), "--json", *FAKE,
                          index=index_dir, env=env).stdout)["branches"]
    assert [(b["branch"], b["branches_left_out"]) for b in built] == [("main", 300), ("new-a", 300), ("new-b", 300)]
    # Patterns choose first, the cap counts what they keep.
    kept = cv("index", "build", "--all-branches", "--exclude-branch", "bulk-*", "--repo", str(repo.root), *FAKE,
              index=index_dir, env=env)
    assert "left out" not in kept.stdout and kept.returncode == 0
