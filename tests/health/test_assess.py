"""`index health` over usage records written by real search, validate and context calls (real git
repository, real Chroma store), and the assessment itself over made-up records."""
from __future__ import annotations

import json
from pathlib import Path

from codevouch.health.assess import Standing, Thresholds, assess
from codevouch.store.usage import UsageRecord
from tests.clihelp import cv
from tests.gitrepo import Repo
from tests.store.test_usage import built


def test_index_health_from_records_of_real_calls(repo: Repo, index_dir: Path) -> None:
    built(repo, index_dir)
    repo.write(".codevouch.toml", "[health]\nstale_ratio = 0.3\ncommits_behind = 2\n")
    for _ in range(3):   # the index's hits (.codevouch.toml, uncommitted, is not among them)
        assert cv("search", "cancel order", "--json", "--no-overlay", cwd=repo.root, index=index_dir).returncode == 0
    calm = json.loads(cv("index", "health", "--json", cwd=repo.root, index=index_dir).stdout)
    assert (calm["calls"], calm["stale_ratio"], calm["rebuild"]) == (3, 0.0, False)
    # Every recommendation says why on its line (it said a bare "no rebuild needed").
    assert calm["recommendation"] == "no rebuild needed: the index is at HEAD" and calm["commits_behind"] == 0
    # The code moves on: two commits change shop/; searches now hand out stale hits: cancel.py's
    # changed (historical-only, counted), refund.py's moved down a line and views.py's unchanged
    # (stale-but-ok: their text is current, so they cost nothing and are not counted).
    repo.commit(**{"shop/cancel.py": "def cancel_order(order, reason):\n    order.cancel(reason)\n    return order\n"})
    repo.commit(**{"shop/refund.py": "# refunds\ndef refund_order(order):\n    return order.refund()\n"})
    for _ in range(3):   # the index's hits (the overlay would hand out the new commits' files as current)
        assert cv("search", "cancel order", "--json", "--no-overlay", cwd=repo.root, index=index_dir).returncode == 0
    out = cv("index", "health", "--json", cwd=repo.root, index=index_dir)
    assert out.returncode == 0, out.stderr
    h = json.loads(out.stdout)
    assert h["calls"] == 6 and h["calls_by_op"] == {"search": 6} and h["commits_behind"] == 2
    assert h["trend"]["direction"] == "rising" and h["trend"]["older_half"] == 0.0
    assert h["trend"]["newer_half"] == 1 / 3 and h["stale_ratio"] == 1 / 6
    assert h["not_counted_hits"]["stale_but_ok"] == 6
    assert [d["dir"] for d in h["stale_dirs"]] == ["shop/"]
    assert {p["path"] for p in h["stale_paths"]} == {"shop/cancel.py"}
    assert h["rebuild"] and len(h["because"]) == 2
    text = cv("index", "health", cwd=repo.root, index=index_dir).stdout
    assert "rising" in text and f"codevouch index build --repo {repo.root} --branch main" in text
    # Only the newest calls count when asked.
    assert json.loads(cv("index", "health", "--recent", "2", "--json", cwd=repo.root,
                         index=index_dir).stdout)["calls"] == 2


def test_one_unrelated_commit_does_not_make_the_index_look_stale(repo: Repo, index_dir: Path) -> None:
    """After any commit, hits on unchanged files are stale-but-ok (right), and health counted them:
    67-80% "rising", "rebuild the index". Their text is current: they cost nothing."""
    idx = built(repo, index_dir)
    repo.write(".codevouch.toml", "[health]\nstale_ratio = 0.2\n")
    repo.commit("config")
    idx.build()
    for _ in range(3):
        assert cv("search", "cancel order", "--no-overlay", cwd=repo.root, index=index_dir).returncode == 0
    repo.commit(**{"NOTES.txt": "unrelated\n"})
    for _ in range(3):
        assert cv("search", "cancel order", "--no-overlay", cwd=repo.root, index=index_dir).returncode == 0
    h = json.loads(cv("index", "health", "--json", cwd=repo.root, index=index_dir).stdout)
    assert h["stale_ratio"] == 0.0 and h["trend"]["direction"] == "steady" and not h["rebuild"]
    assert h["commits_behind"] == 1 and h["not_counted_hits"]["stale_but_ok"] > 0
    assert h["stale_paths"] == [] and h["recommendation"].startswith("no rebuild needed: 0% of hits")
    text = cv("index", "health", cwd=repo.root, index=index_dir).stdout
    assert "not counted: stale-but-ok 50%" in text and "rebuild the index" not in text


def test_changed_code_found_only_live_counts_and_its_files_are_named(repo: Repo, index_dir: Path) -> None:
    """A definition committed since the build is found only by the overlay, which reads and embeds
    its file on every call: that costs, and a rebuild removes it. Uncommitted edits found live do
    not count: no rebuild changes them."""
    idx = built(repo, index_dir)
    repo.write(".codevouch.toml", "[health]\nstale_ratio = 0.2\ncommits_behind = 50\n")
    repo.commit("config")
    idx.build()
    repo.commit(**{"shop/ship.py": "def ship_order(order):\n    order.ship()\n    return order\n"})
    for _ in range(2):
        hits = idx.search("ship order", k=3)
        assert any(h.record.origin == "committed" for h in hits)
    h = idx.health()
    assert h.live_committed >= 2 and h.live_files == 1.0 and h.causes["index-behind"] == h.live_committed
    assert h.stale_ratio is not None and h.stale_ratio >= h.live_committed / h.hits
    assert h.rebuild and any("searches 1 committed file live" in b for b in h.because)
    assert "searched live: 1.0 files committed since the build per call" in \
        cv("index", "health", cwd=repo.root, index=index_dir).stdout
    as_json = h.to_json()
    assert as_json["live"] == {"committed_hits": h.live_committed, "files_per_call": 1.0}
    idx.build()
    repo.write("shop/draft.py", "def draft_order(order):\n    return order\n")
    before = idx.health().stale_ratio
    assert any(x.record.origin == "uncommitted" for x in idx.search("draft order", k=3))
    after = idx.health()
    assert after.live_uncommitted >= 1 and after.causes["index-behind"] == 0
    assert after.stale_ratio is not None and before is not None and after.stale_ratio <= before


def record(stale: int, usable: int, excluded: int = 0) -> UsageRecord:
    return UsageRecord("2026-11-30T00:00:00Z", "search", "/r", "main", "c", "h",
                       {"usable": usable, "historical-only": stale, "excluded": excluded}, {},
                       tuple(("src/a.py", "historical-only", "file-deleted") for _ in range(stale)))


def test_assess_ratio_trend_and_thresholds() -> None:
    limits = Thresholds(recent=10, stale_ratio=0.5, commits_behind=10)
    falling = assess("/r", "main", [record(4, 0), record(4, 0), record(0, 4), record(0, 4, excluded=9)],
                     Standing("c", "h", 3), limits)
    assert falling.stale_ratio == 0.5 and falling.trend == "falling" and falling.rebuild
    assert falling.because == ["stale ratio 50% from the index behind HEAD, over the last 4 calls >= 50%"]
    few = assess("/r", "main", [record(1, 3)], Standing("c", "h", 10), limits)
    assert few.trend == "not enough calls" and few.because == ["10 commits behind HEAD >= 10"]
    empty = assess("/r", "main", [], Standing(None, None, None), limits)
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
    assert not after.rebuild and after.recommendation == "no rebuild needed: the index is at HEAD"
    assert after.to_json()["stale_causes"]["since-fixed"] == {"hits": 2, "ratio": 0.25}


def test_a_rising_behind_share_with_the_index_behind_recommends_a_rebuild_with_its_cost(
        repo: Repo, index_dir: Path) -> None:
    """Stale hits under the threshold overall but rising in the newer half, with the index one
    commit behind: health said a bare "no rebuild needed"; a rebuild would make them current."""
    built(repo, index_dir)
    repo.write(".codevouch.toml", "[health]\nstale_ratio = 0.9\n")
    for _ in range(6):
        assert cv("search", "cancel order", "--json", "--no-overlay", cwd=repo.root, index=index_dir).returncode == 0
    repo.commit(**{"shop/cancel.py": "def cancel_order(order, reason):\n    order.cancel(reason)\n    return order\n"})
    for _ in range(2):
        assert cv("search", "cancel order", "--json", "--no-overlay", cwd=repo.root, index=index_dir).returncode == 0
    h = json.loads(cv("index", "health", "--json", cwd=repo.root, index=index_dir).stdout)
    assert h["commits_behind"] == 1 and 0 < h["stale_ratio"] < 0.9 and h["trend"]["direction"] == "rising"
    assert h["rebuild"] and h["changed_files"] == 2 and h["rebuild_seconds"] >= 1.0
    assert "rising from 0% to" in h["recommendation"] and "1 commit behind" in h["recommendation"]
    assert "about 1 s: 2 files changed" in h["recommendation"]
    text = cv("index", "health", cwd=repo.root, index=index_dir).stdout
    assert "1 commit behind\n" in text and "1 commits" not in text
    assert f"codevouch index build --repo {repo.root} --branch main" in text


def test_no_rebuild_needed_always_says_why() -> None:
    limits = Thresholds(recent=10, stale_ratio=0.5, commits_behind=10)
    calm = assess("/r", "main", [record(0, 4)] * 4, Standing("c", "h", 3), limits)
    assert not calm.rebuild
    assert calm.recommendation == ("no rebuild needed: 0% of hits were stale from the index behind HEAD "
                                   "(under 50%, not rising), and the index is 3 commits behind HEAD (under 10)")
    empty = assess("/r", "main", [], Standing("c", "h", 1), limits)
    assert empty.recommendation == ("no rebuild needed: no search or context hits recorded yet, and the index "
                                    "is 1 commit behind HEAD (under 10)")
    assert assess("/r", "main", [], Standing(None, None, None), limits).recommendation == \
        "no rebuild needed: the branch is not indexed"
