"""`--path GLOB`: a search keeps only files that gitignore-style patterns match, before ranking, so
k hits come back when the matched files hold k chunks; the working-tree overlay is filtered alike."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from codevouch import Index
from codevouch.errors import InputError
from codevouch.request import SearchRequest
from codevouch.retriever.search import search
from tests.clihelp import FAKE, cv
from tests.gitrepo import Repo


def corpus() -> dict[str, str]:
    """Forty order functions in shop/ that match the query well, six weaker ones in billing/."""
    files = {f"shop/orders_{i}.py": (f"def cancel_order_{i}(order):\n    order.cancel()\n    order.cancel()\n"
                                     f"    return order\n") for i in range(40)}
    files.update({f"billing/inv_{i}.py": f"def invoice_{i}(order):\n    return order.total\n" for i in range(6)})
    files["billing/legacy/lib.py"] = "def vendored_order(order):\n    return order\n"
    return files


def test_path_filter_comes_before_ranking(repo: Repo, index_dir: Path) -> None:
    repo.commit_files(corpus())
    idx = Index(repo.root, index_dir, embedder="fake-bow-64", record=False)
    idx.build()
    # Unfiltered, the shop functions fill every slot; billing's are far below.
    top = idx.search("cancel order", k=5, overlay=False)
    assert all(h.path.startswith("shop/") for h in top)
    # Filtered, five billing hits come back (not the few billing hits among an unfiltered top 30).
    kept = idx.search("cancel order", k=5, paths=["billing/"], overlay=False)
    assert len(kept) == 5 and all(h.path.startswith("billing/") for h in kept), [h.path for h in kept]
    # Negation, last match wins, as in .gitignore; both halves and each mode honour it.
    for mode in ("hybrid", "dense", "lexical"):
        some = idx.search("order", k=20, paths=["billing/", "!billing/legacy/"], mode=mode, overlay=False)
        paths = {h.path for h in some}
        assert paths == {f"billing/inv_{i}.py" for i in range(6)}, (mode, paths)
    # A glob with no slash matches at any depth; one that matches nothing returns nothing.
    assert {h.path for h in idx.search("order", k=3, paths=["lib.py"], overlay=False)} == {"billing/legacy/lib.py"}
    assert list(idx.search("order", k=3, paths=["nowhere/"], overlay=False)) == []
    # The retriever alone takes the same patterns.
    raw = search(repo.root, SearchRequest("order", k=4, paths=["*/inv_[0-1].py"]), index_dir, embedder="fake-bow-64")
    assert {c.record.path for c in raw} == {"billing/inv_0.py", "billing/inv_1.py"}


def test_bad_patterns_are_input_errors(repo: Repo, index_dir: Path) -> None:
    repo.commit_files(corpus())
    idx = Index(repo.root, index_dir, embedder="fake-bow-64", record=False)
    idx.build()
    with pytest.raises(InputError, match="empty"):
        idx.search("order", paths=[" "])
    with pytest.raises(InputError, match="negates"):
        idx.search("order", paths=["!shop/"])


def test_overlay_chunks_are_filtered_too(repo: Repo, index_dir: Path) -> None:
    repo.commit_files(corpus())
    idx = Index(repo.root, index_dir, embedder="fake-bow-64", record=False)
    idx.build()
    repo.write("billing/ship.py", "def ship_parcel(parcel):\n    return parcel.ship()\n")
    repo.write("shop/ship.py", "def ship_parcel_fast(parcel):\n    return parcel.ship()\n")
    hits = idx.search("ship parcel", k=3, paths=["billing/"])
    assert hits[0].path == "billing/ship.py" and hits[0].record.origin == "uncommitted"
    assert "shop/ship.py" not in {h.path for h in hits}
    # Only the kept file's chunk was embedded; the summary still counts every changed file.
    assert hits.overlay is not None and hits.overlay.embedded == 1
    assert hits.overlay.summary()["files_behind"] == 2


def test_cli_search_and_context_take_path(repo: Repo, index_dir: Path) -> None:
    repo.commit_files(corpus())
    assert cv("index", "build", *FAKE, cwd=repo.root, index=index_dir).returncode == 0
    out = cv("search", "cancel order", "--json", "-k", "4", "--path", "billing/", "--path", "!billing/legacy/",
             cwd=repo.root, index=index_dir)
    assert out.returncode == 0, out.stderr
    hits = json.loads(out.stdout)
    assert len(hits) == 4 and all(h["path"].startswith("billing/inv_") for h in hits)
    pack = cv("context", "cancel order", "-k", "3", "--path", "billing/legacy/", cwd=repo.root, index=index_dir)
    assert pack.returncode == 0, pack.stderr
    assert "billing/legacy/lib.py" in pack.stdout and "shop/" not in pack.stdout
    bad = cv("search", "order", "--path", "!x", cwd=repo.root, index=index_dir)
    assert bad.returncode != 0 and "negates" in bad.stderr


def test_a_directory_pattern_covers_everything_under_it(repo: Repo, index_dir: Path) -> None:
    """`--path '*.py' --path '!billing/'` returned files under billing/: as a .gitignore line, a
    negated directory does not reach the files `*.py` matched. A person means "not under it"."""
    repo.commit_files(corpus())
    idx = Index(repo.root, index_dir, embedder="fake-bow-64", record=False)
    idx.build()
    for negated in ("!billing/", "!billing", "!billing/**"):
        kept = {h.path for h in idx.search("order", k=50, paths=["*.py", negated], overlay=False)}
        assert kept and not any(p.startswith("billing/") for p in kept), (negated, kept)
    legacy = {h.path for h in idx.search("order", k=50, paths=["*.py", "!billing/legacy/"], overlay=False)}
    assert "billing/legacy/lib.py" not in legacy and "billing/inv_0.py" in legacy


def test_a_filter_that_matches_no_file_says_so(repo: Repo, index_dir: Path) -> None:
    repo.commit_files(corpus())
    assert cv("index", "build", *FAKE, cwd=repo.root, index=index_dir).returncode == 0
    text = cv("search", "order", "--path", "nowhere/", "--path", "*.rs", cwd=repo.root, index=index_dir)
    assert text.returncode == 0 and text.stdout == "no indexed file matches --path nowhere/ --path '*.rs'\n"
    as_json = cv("search", "order", "--json", "--path", "nowhere/", cwd=repo.root, index=index_dir)
    assert as_json.returncode == 0 and json.loads(as_json.stdout) == []
