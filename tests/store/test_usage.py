"""Usage records written by real search, validate and context calls (real git repository, real
Chroma store), their bounds and switches, and `index health` over them."""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from codevouch import Index
from codevouch.errors import ConfigError
from codevouch.store.health import Thresholds, assess
from codevouch.store.indexdir import IndexDir
from codevouch.store.usage import UsageLog, UsageRecord
from tests.clihelp import cv
from tests.gitrepo import Repo

SHOP = {
    "shop/cancel.py": "def cancel_order(order):\n    order.cancel()\n    return order\n",
    "shop/refund.py": "def refund_order(order):\n    return order.refund()\n",
    "web/views.py": "def cancel_view(request):\n    return cancel_order(request.order)\n",
}


def built(repo: Repo, index_dir: Path, **kw: object) -> Index:
    repo.commit_files(SHOP)
    idx = Index(repo.root, index_dir, embedder="fake-bow-64", **kw)  # type: ignore[arg-type]
    idx.build()
    return idx


def rows(index_dir: Path) -> list[dict]:
    path = IndexDir(index_dir).usage
    if not path.exists():
        return []
    db = sqlite3.connect(path)
    db.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in db.execute("SELECT * FROM usage ORDER BY id")]
    finally:
        db.close()


def test_search_validate_and_context_each_append_a_record(repo: Repo, index_dir: Path) -> None:
    idx = built(repo, index_dir)
    repo.write("shop/cancel.py", "def cancel_order(order, reason):\n    order.cancel(reason)\n    return order\n")
    # The index's hits (one is stale): the overlay would hand out the edited file as it is now.
    hits = idx.search("cancel order", k=10, overlay=False)
    idx.validate([{"path": "shop/refund.py", "text": "def refund_order(order):"}, {"path": "../outside.py"}])
    idx.context("cancel order", k=10, overlay=False)
    recs = UsageLog(index_dir).recent(str(repo.root), 10)
    assert [r.op for r in recs] == ["search", "validate", "context"]
    search = recs[0]
    assert (search.branch, search.index_commit, search.head) == ("main", repo.head(), repo.head())
    assert search.hits == len(hits) and search.verdicts == {"usable": 2, "historical-only": 1}
    assert search.reasons == {"same-commit": 2, "content-changed": 1}
    assert search.non_usable == (("shop/cancel.py", "historical-only", "content-changed"),)
    assert recs[1].verdicts == {"stale-but-ok": 1, "excluded": 1}
    assert ("../outside.py", "excluded", "outside-repo") in recs[1].non_usable
    assert recs[2].verdicts == search.verdicts       # context records its hits once, not twice
    assert len(rows(index_dir)) == 3 and rows(index_dir)[0]["time"].endswith("Z")


def test_recording_can_be_turned_off(repo: Repo, index_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    idx = built(repo, index_dir, record=False)
    idx.search("cancel order")
    assert rows(index_dir) == []
    on = Index(repo.root, index_dir, embedder="fake-bow-64")
    monkeypatch.setenv("CODEVOUCH_NO_RECORD", "1")
    on.search("cancel order")
    assert rows(index_dir) == []
    monkeypatch.delenv("CODEVOUCH_NO_RECORD")
    assert cv("search", "cancel order", "--no-record", cwd=repo.root, index=index_dir).returncode == 0
    assert cv("context", "cancel order", "--no-record", cwd=repo.root, index=index_dir).returncode == 0
    assert rows(index_dir) == []
    repo.write(".codevouch.toml", "[usage]\nrecord = false\n")
    on.search("cancel order")
    assert rows(index_dir) == []
    repo.write(".codevouch.toml", "[usage]\nrecord = true\n")
    assert cv("search", "cancel order", cwd=repo.root, index=index_dir).returncode == 0
    assert [r["op"] for r in rows(index_dir)] == ["search"]
    repo.write(".codevouch.toml", "[usage]\nrecords = 3\n")
    with pytest.raises(ConfigError, match="unknown key"):
        on.search("cancel order")


def test_reads_never_create_an_index_directory(repo: Repo, tmp_path: Path) -> None:
    repo.commit_files(SHOP)
    missing = tmp_path / "no-index"
    Index(repo.root, missing).validate([{"path": "shop/cancel.py", "text": "    order.cancel()"}])
    assert not missing.exists()
    out = cv("validate", "-", "--json", cwd=repo.root, index=missing,
             stdin='[{"path": "shop/cancel.py", "text": "    order.cancel()"}]')
    assert out.returncode == 0, out.stderr
    assert not missing.exists()


def test_old_records_roll_off(repo: Repo, index_dir: Path) -> None:
    idx = built(repo, index_dir)
    repo.write(".codevouch.toml", "[usage]\nmax_records = 3\n")
    for n in range(5):
        idx.validate([{"path": "shop/cancel.py", "symbol": f"call{n}"}] * (n + 1))
    kept = UsageLog(index_dir).recent(str(repo.root), 100)
    assert [r.hits for r in kept] == [3, 4, 5]


def test_index_health_from_records_of_real_calls(repo: Repo, index_dir: Path) -> None:
    built(repo, index_dir)
    repo.write(".codevouch.toml", "[health]\nstale_ratio = 0.3\ncommits_behind = 2\n")
    for _ in range(3):   # the index's hits (.codevouch.toml, uncommitted, is not among them)
        assert cv("search", "cancel order", "--json", "--no-overlay", cwd=repo.root, index=index_dir).returncode == 0
    calm = json.loads(cv("index", "health", "--json", cwd=repo.root, index=index_dir).stdout)
    assert (calm["calls"], calm["stale_ratio"], calm["rebuild"]) == (3, 0.0, False)
    assert calm["recommendation"] == "no rebuild needed" and calm["commits_behind"] == 0
    # The code moves on: two commits change shop/; searches now hand out stale hits (every hit:
    # the index is behind HEAD, so even unchanged files are stale-but-ok).
    repo.commit(**{"shop/cancel.py": "def cancel_order(order, reason):\n    order.cancel(reason)\n    return order\n"})
    repo.commit(**{"shop/refund.py": "# refunds\ndef refund_order(order):\n    return order.refund()\n"})
    for _ in range(3):   # the index's hits (the overlay would hand out the new commits' files as current)
        assert cv("search", "cancel order", "--json", "--no-overlay", cwd=repo.root, index=index_dir).returncode == 0
    out = cv("index", "health", "--json", cwd=repo.root, index=index_dir)
    assert out.returncode == 0, out.stderr
    h = json.loads(out.stdout)
    assert h["calls"] == 6 and h["calls_by_op"] == {"search": 6} and h["commits_behind"] == 2
    assert h["trend"]["direction"] == "rising" and h["trend"]["older_half"] == 0.0
    assert h["trend"]["newer_half"] == 1.0 and h["stale_ratio"] == 0.5
    assert [d["dir"] for d in h["stale_dirs"]] == ["shop/", "web/"]
    assert {p["path"] for p in h["stale_paths"]} == {"shop/cancel.py", "shop/refund.py", "web/views.py"}
    assert h["rebuild"] and len(h["because"]) == 2
    text = cv("index", "health", cwd=repo.root, index=index_dir).stdout
    assert "rising" in text and f"codevouch index build --repo {repo.root} --branch main" in text
    # Only the newest calls count when asked.
    assert json.loads(cv("index", "health", "--recent", "2", "--json", cwd=repo.root,
                         index=index_dir).stdout)["calls"] == 2


def record(stale: int, usable: int, excluded: int = 0) -> UsageRecord:
    return UsageRecord("2026-11-30T00:00:00Z", "search", "/r", "main", "c", "h",
                       {"usable": usable, "historical-only": stale, "excluded": excluded}, {},
                       tuple(("src/a.py", "historical-only", "file-deleted") for _ in range(stale)))


def test_assess_ratio_trend_and_thresholds() -> None:
    limits = Thresholds(recent=10, stale_ratio=0.5, commits_behind=10)
    falling = assess("/r", "main", [record(4, 0), record(4, 0), record(0, 4), record(0, 4, excluded=9)],
                     "c", "h", 3, limits)
    assert falling.stale_ratio == 0.5 and falling.trend == "falling" and falling.rebuild
    assert falling.because == ["stale ratio 50% from the index behind HEAD, over the last 4 calls >= 50%"]
    few = assess("/r", "main", [record(1, 3)], "c", "h", 10, limits)
    assert few.trend == "not enough calls" and few.because == ["10 commits behind HEAD >= 10"]
    empty = assess("/r", "main", [], None, None, None, limits)
    assert empty.stale_ratio is None and not empty.rebuild and empty.calls == 0


def test_health_recommends_only_what_would_change_the_figure(repo: Repo, index_dir: Path) -> None:
    """Issue 21.2: with the index at HEAD and stale hits only from uncommitted edits, health said
    "rebuild the index", and still did after a no-op rebuild; validate's snippets (a review's
    previous versions, a made-up path) counted towards the ratio."""
    idx = built(repo, index_dir)
    repo.write(".codevouch.toml", "[health]\nstale_ratio = 0.2\n")
    repo.commit("config")
    idx.build()
    edited = "def cancel_order(order, reason):\n    order.cancel(reason)\n    return order\n"
    repo.write("shop/cancel.py", edited)
    for _ in range(2):
        idx.search("cancel order", k=10, overlay=False)   # the index's hits: one stale from the edit
        idx.validate([{"path": "shop/made_up.py", "text": "x = 1"}] * 5)   # the caller's, never counted
    h = idx.health()
    assert h.calls == 2 and h.not_counted == {"validate": 2} and h.by_op == {"search": 2}
    assert h.stale_ratio == 0.25 and h.causes == {"index-behind": 0, "worktree": 2, "since-fixed": 0}
    assert not h.rebuild and h.because == []
    assert "a rebuild cannot change that" in h.recommendation and "25%" in h.recommendation
    assert idx.build()[0].embedded == 0                  # "up to date": and the advice says so
    text = cv("index", "health", cwd=repo.root, index=index_dir).stdout
    assert "rebuild the index" not in text and "working tree differs from HEAD: 25%" in text
    assert "not counted: validate 2" in text
    # Committed, the same edit is a lag a rebuild removes; after the rebuild the old records'
    # stale hits are since fixed and nothing is recommended.
    repo.commit("edit committed")
    h = idx.health()
    assert h.causes["index-behind"] == 2 and h.rebuild
    assert h.because == ["stale ratio 25% from the index behind HEAD, over the last 2 calls >= 20%"]
    idx.build()
    after = idx.health()
    assert after.causes == {"index-behind": 0, "worktree": 0, "since-fixed": 2}
    assert not after.rebuild and after.recommendation == "no rebuild needed"
    assert after.to_json()["stale_causes"]["since-fixed"] == {"hits": 2, "ratio": 0.25}
