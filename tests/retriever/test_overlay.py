"""The working-tree overlay: what changed since the build is searched live, on real repositories
and a real store (the fake embedder: ranks here come from words and the bag-of-words vectors)."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from codevouch import Index
from codevouch.indexer import overlay as derived
from codevouch.store import overlaycache, writer_lock
from tests.clihelp import cv
from tests.gitrepo import Repo

SHOP = {
    "shop/__init__.py": "",
    "shop/cancel.py": "def cancel_order(order):\n    \"\"\"Cancel an order.\"\"\"\n    order.cancel()\n"
                      "    return order\n",
    "shop/refund.py": "def refund_order(order):\n    \"\"\"Refund an order.\"\"\"\n    return order.refund()\n",
    "shop/legacy.py": "def legacy_invoice(order):\n    \"\"\"Print a legacy invoice.\"\"\"\n    return str(order)\n",
}
COUPON = ("def apply_discount_coupon(order, coupon):\n    \"\"\"Apply a discount coupon to an order.\"\"\"\n"
          "    order.total -= coupon.amount\n    return order\n")


@pytest.fixture(autouse=True)
def cold() -> None:
    """Each test starts as a fresh process would: no chunks or vectors kept in memory."""
    derived.clear()
    overlaycache.forget_memory()


def built(repo: Repo, index_dir: Path) -> Index:
    repo.commit_files(SHOP)
    idx = Index(repo.root, index_dir, embedder="fake-bow-64")
    idx.build()
    return idx


def test_uncommitted_new_function_is_found_first_by_name(repo: Repo, index_dir: Path) -> None:
    idx = built(repo, index_dir)
    repo.write("shop/coupon.py", COUPON)
    hits = idx.search("apply_discount_coupon", k=5)
    top = hits[0]
    assert (top.path, top.symbol, top.record.origin) == ("shop/coupon.py", "apply_discount_coupon", "uncommitted")
    assert (top.verdict, top.reason) == ("usable", "same-worktree") and top.code == COUPON.rstrip("\n")
    assert top.record.commit == "" and top.record.blob_sha == repo.git("hash-object", "shop/coupon.py").strip()
    head = repo.head()
    assert top.citation is not None
    assert f"version: working tree (uncommitted) on main@{head[:7]}" in top.citation
    assert hits.overlay is not None
    assert hits.overlay.note() == (f"index main@{head[:7]} is 1 file behind the working tree; 1 file searched live "
                                   "(1 chunks, 1 embedded)")
    # Today's results without it: the new function cannot be found.
    assert "shop/coupon.py" not in {h.path for h in idx.search("apply_discount_coupon", k=5, overlay=False)}


def test_changed_function_returns_its_current_text_and_lines(repo: Repo, index_dir: Path) -> None:
    idx = built(repo, index_dir)
    now = "import logging\n\n\n" + SHOP["shop/cancel.py"].replace("order.cancel()", "order.cancel(reason)")
    repo.write("shop/cancel.py", now)
    hits = [h for h in idx.search("cancel order", k=10) if h.path == "shop/cancel.py"]
    assert len(hits) == 1     # the index's old chunk gave way to the file's current one
    [hit] = hits
    assert hit.record.end_line == 7 and hit.record.start_line <= 4
    assert hit.text == "\n".join(now.split("\n")[hit.record.start_line - 1:hit.record.end_line])
    assert "order.cancel(reason)" in hit.text and hit.verdict == "usable" and hit.code == hit.text


def test_deleted_file_is_gone_unless_history_is_asked(repo: Repo, index_dir: Path) -> None:
    idx = built(repo, index_dir)
    repo.remove("shop/legacy.py")
    assert "shop/legacy.py" not in {h.path for h in idx.search("legacy invoice", k=10)}
    history = [h for h in idx.search("legacy invoice", k=10, include_history=True) if h.path == "shop/legacy.py"]
    assert history and history[0].record.status == "deleted" and history[0].verdict == "historical-only"
    assert history[0].reason == "file-deleted"


def test_renamed_file_is_found_at_its_new_path(repo: Repo, index_dir: Path) -> None:
    idx = built(repo, index_dir)
    repo.git("mv", "shop/refund.py", "shop/refunds.py")
    paths = [h.path for h in idx.search("refund order", k=10)]
    assert "shop/refunds.py" in paths and "shop/refund.py" not in paths
    # A rename git does not know of yet (plain mv): a deletion and an untracked file.
    (repo.root / "shop/refunds.py").rename(repo.root / "shop/money.py")
    repo.git("add", "-A")
    repo.git("reset", "-q")
    paths = [h.path for h in idx.search("refund order", k=10)]
    assert "shop/money.py" in paths and "shop/refund.py" not in paths and "shop/refunds.py" not in paths


def test_commit_made_after_the_build_is_found_and_cited_so(repo: Repo, index_dir: Path) -> None:
    idx = built(repo, index_dir)
    indexed = repo.head()
    head = repo.commit("coupon", **{"shop/coupon.py": COUPON})
    hits = idx.search("apply_discount_coupon", k=3)
    top = hits[0]
    assert (top.path, top.record.origin, top.record.commit) == ("shop/coupon.py", "committed", head)
    assert top.verdict == "usable" and top.citation is not None
    assert f"version: main@{head[:7]}" in top.citation and "(committed after the index)" in top.citation
    assert hits.overlay is not None and hits.overlay.summary()["commits_behind"] == 1
    assert hits.overlay.note() is not None and hits.overlay.note().startswith(  # type: ignore[union-attr]
        f"index main@{indexed[:7]} is 1 commit and 1 file behind the working tree")


def test_ignored_excluded_binary_and_huge_files_are_not_searched(repo: Repo, index_dir: Path) -> None:
    repo.commit_files({**SHOP, ".gitignore": "build/\n", ".codevouch.toml": 'generated = ["gen/**"]\n'
                                                                             "max_file_bytes = 2000\n"})
    idx = Index(repo.root, index_dir, embedder="fake-bow-64")
    idx.build()
    repo.write("build/coupon.py", COUPON)
    repo.write("gen/coupon.py", COUPON)
    repo.write("shop/coupon.bin", b"\0\1\2" + COUPON.encode())
    repo.write("shop/huge.py", COUPON + "# pad\n" * 1000)
    hits = idx.search("apply_discount_coupon", k=10)
    assert not {h.path for h in hits} & {"build/coupon.py", "gen/coupon.py", "shop/coupon.bin", "shop/huge.py"}
    assert hits.overlay is not None
    skipped = {s["path"]: s["reason"] for s in hits.overlay.summary()["skipped"]}
    assert "build/coupon.py" not in skipped           # ignored: never even listed
    assert skipped["gen/coupon.py"].startswith("excluded: ")
    assert skipped["shop/coupon.bin"] == "skipped: binary"
    assert skipped["shop/huge.py"].startswith("skipped: huge")


def test_second_identical_query_embeds_nothing(repo: Repo, index_dir: Path) -> None:
    idx = built(repo, index_dir)
    repo.write("shop/coupon.py", COUPON)
    first = idx.search("discount coupon", k=3).overlay
    second = idx.search("discount coupon", k=3).overlay
    assert first is not None and second is not None
    assert (first.embedded, first.cached) == (1, 0) and (second.embedded, second.cached) == (0, 1)
    # Another process: the overlay cache in the index directory has the vector.
    out = cv("search", "discount coupon", "--json", cwd=repo.root, index=index_dir)
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stderr.strip().splitlines()[-1])["overlay"]
    assert (summary["embedded"], summary["cached"], summary["files_searched"]) == (0, 1, 1)
    # The next build takes that vector from the overlay's cache instead of embedding it again.
    repo.commit("coupon")
    [built_again] = idx.build()
    assert built_again.embedded == 0 and built_again.reused >= 1


def test_embedding_bound_is_respected_and_reported(repo: Repo, index_dir: Path) -> None:
    built(repo, index_dir)
    for n in range(5):
        repo.write(f"shop/extra{n}.py", f"def extra_function_{n}(x):\n    return x + {n}\n")
    idx = Index(repo.root, index_dir, embedder="fake-bow-64", overlay_limit=2, background=False)
    hits = idx.search("extra_function_4", k=10)
    ov = hits.overlay
    assert ov is not None and (ov.embedded, ov.unembedded) == (2, 3)
    note = ov.note()
    assert note is not None and "3 chunks not embedded" in note and "run `codevouch index build`" in note
    # A chunk past the bound is still searched, by words (it ranks in the lexical list only).
    assert "shop/extra4.py" in [h.path for h in hits]
    text = cv("search", "extra_function_4", "--overlay-limit", "0", cwd=repo.root, index=index_dir)
    assert text.returncode == 0, text.stderr
    first = text.stdout.splitlines()[0]
    assert first.startswith("note: index main@") and "not embedded" in first


def test_file_bound_keeps_a_far_tree_answering(repo: Repo, index_dir: Path) -> None:
    idx = built(repo, index_dir)
    for n in range(30):
        repo.write(f"many/f{n:02}.py", f"def many_{n}():\n    return {n}\n")
    state = idx._branch_state(repo.root, "main")
    assert state is not None
    ov = derived.derive(repo.root, state, file_limit=10)
    assert ov.not_searched == 20 and len([f for f in ov.files if f.chunks]) == 10
    assert "20 changed files not searched" in (ov.note() or "")
    # Files over the bound keep their index chunks (none here): nothing is silently dropped.
    assert not any(p.startswith("many/f2") for p in ov.replaced)


def test_no_overlay_and_a_clean_tree_give_todays_results(repo: Repo, index_dir: Path) -> None:
    idx = built(repo, index_dir)
    clean = idx.search("order", k=10)
    assert clean.overlay is not None and clean.overlay.empty and clean.overlay.note() is None
    plain = idx.search("order", k=10, overlay=False)
    assert plain.overlay is None
    assert [(h.record, h.score) for h in clean] == [(h.record, h.score) for h in plain]
    repo.write("shop/coupon.py", COUPON)
    off = cv("search", "order", "--json", "--no-overlay", "-k", "10", cwd=repo.root, index=index_dir)
    assert off.returncode == 0 and off.stderr == ""
    assert [h["path"] for h in json.loads(off.stdout)] == [h.path for h in plain]


def test_the_overlay_writes_nothing_and_waits_for_no_build(repo: Repo, index_dir: Path) -> None:
    idx = built(repo, index_dir)
    repo.write("shop/coupon.py", COUPON)
    ledger = index_dir / "state.sqlite"
    before = hashlib.sha256(ledger.read_bytes()).hexdigest()
    status = repo.git("status", "--porcelain")
    with writer_lock(index_dir, 0):       # a build holds the index
        hits = idx.search("apply_discount_coupon", k=3)
    assert hits[0].path == "shop/coupon.py"
    assert hashlib.sha256(ledger.read_bytes()).hexdigest() == before
    assert repo.git("status", "--porcelain") == status
    assert (index_dir / overlaycache.FILE).is_file()


def test_context_and_index_status_say_how_far_the_overlay_reaches(repo: Repo, index_dir: Path) -> None:
    idx = built(repo, index_dir)
    repo.write("shop/coupon.py", COUPON)
    pack = idx.context("apply a discount coupon", k=3)
    assert "def apply_discount_coupon" in pack.markdown
    assert "live: index main@" in pack.markdown and pack.manifest()["overlay"]["files_searched"] == 1
    [row] = idx.status()
    assert row["overlay"] == {"changed_files": 1, "searched_live": 1, "file_limit": derived.FILE_LIMIT,
                              "embed_limit": idx.overlay_limit}
    text = cv("index", "status", "--repo", str(repo.root), cwd=repo.root, index=index_dir)
    assert text.returncode == 0 and "overlay: searches 1 changed file live" in text.stdout


def test_lexical_and_dense_modes_search_the_overlay(repo: Repo, index_dir: Path) -> None:
    idx = built(repo, index_dir)
    repo.write("shop/coupon.py", COUPON)
    for mode in ("lexical", "dense"):
        hits = idx.search("apply_discount_coupon", k=3, mode=mode)
        assert hits[0].path == "shop/coupon.py", mode
    assert idx.search("apply_discount_coupon", k=3, mode="lexical").overlay.embedded == 0  # type: ignore[union-attr]


def test_a_file_rewritten_as_it_was_is_not_a_change(repo: Repo, index_dir: Path) -> None:
    idx = built(repo, index_dir)
    (repo.root / "shop/cancel.py").write_text(SHOP["shop/cancel.py"])   # same bytes, new stat data
    repo.write("shop/coupon.py", COUPON)                                 # and one real change
    hits = idx.search("cancel order", k=5)
    assert hits.overlay is not None and [f.path for f in hits.overlay.files] == ["shop/coupon.py"]
    assert "shop/cancel.py" not in hits.overlay.replaced
    assert next(h for h in hits if h.path == "shop/cancel.py").record.origin == "index"


def test_warm_calls_over_commits_and_edits_follow_every_change(
        repo: Repo, index_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What a warm call keeps (blob ids by stat data, the diff and the commit count by what decides
    them) never hides a change: HEAD moving on, an edit of the committed file, its removal."""
    import time

    from codevouch.worktree.git import hashing
    monkeypatch.setattr(hashing, "RACY_NS", 0)     # every file old enough to be remembered at once
    idx = built(repo, index_dir)
    repo.write("shop/coupon.py", COUPON)
    repo.commit("coupons")
    time.sleep(0.02)
    for _ in range(2):                            # the second call is the warm one
        hits = idx.search("apply_discount_coupon", k=3)
        assert hits[0].path == "shop/coupon.py" and hits[0].record.origin == "committed"
        assert hits.overlay is not None and hits.overlay.commits_behind == 1
    renamed = COUPON.replace("apply_discount_coupon", "apply_store_voucher")
    repo.write("shop/coupon.py", renamed)
    time.sleep(0.02)
    for _ in range(2):
        hits = idx.search("apply_store_voucher", k=3)
        assert hits[0].path == "shop/coupon.py" and hits[0].record.origin == "uncommitted"
        assert "apply_store_voucher" in (hits[0].code or "")
        assert not any("apply_discount_coupon" in (h.code or "") for h in idx.search("apply_discount_coupon", k=5))
    (repo.root / "shop" / "coupon.py").unlink()
    for _ in range(2):
        hits = idx.search("apply_store_voucher", k=5)
        assert all(h.path != "shop/coupon.py" for h in hits)
        assert hits.overlay is not None and "shop/coupon.py" not in {c.record.path for c in hits.overlay.chunks}
    repo.write("shop/coupon.py", renamed)         # back, as it was a moment ago: found again
    time.sleep(0.02)
    assert idx.search("apply_store_voucher", k=3)[0].path == "shop/coupon.py"
