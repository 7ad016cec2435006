"""Usage records written by real search, validate and context calls (real git repository, real
Chroma store), their bounds and switches (`index health` over them: tests/health/test_assess.py)."""
from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from codevouch import Index
from codevouch.errors import ConfigError
from codevouch.store.indexdir import IndexDir
from codevouch.store.usage import UsageLog
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


@pytest.mark.parametrize("damage", ["empty", "garbage"])
def test_an_empty_or_damaged_usage_file_is_no_records_and_starts_again(repo: Repo, index_dir: Path,
                                                                       damage: str) -> None:
    # A disk-full failure left a 0-byte usage.sqlite (or a damaged one): `index health` failed
    # on every call after space came back. Usage is advisory: it reads as no records, and the
    # next recorded call starts the file again (a damaged one is kept aside).
    idx = built(repo, index_dir)
    path = IndexDir(index_dir).usage
    path.write_bytes(b"" if damage == "empty" else b"\x07not sqlite\x00" * 100)
    health = cv("index", "health", "--repo", str(repo.root), "--index", str(index_dir), "--json")
    assert health.returncode == 0, health.stderr
    assert "Traceback" not in health.stderr
    idx.search("cancel order", k=3, overlay=False)
    assert [r.op for r in UsageLog(index_dir).recent(str(repo.root), 10)] == ["search"]
    assert path.with_name("usage.sqlite.damaged").exists() == (damage == "garbage")
    health = cv("index", "health", "--repo", str(repo.root), "--index", str(index_dir))
    assert health.returncode == 0 and "usage: 1 recent search/context call " in health.stdout, health.stdout


def test_a_version_1_file_reads_as_nothing_live_and_gains_the_column_on_write(repo: Repo, index_dir: Path) -> None:
    """Version 2 records what a call found only live; a file an older codevouch wrote has no
    such column: read, its records have none; the next write adds it, and the old rows stay."""
    from codevouch.health.usage import record_of

    built(repo, index_dir)
    path = IndexDir(index_dir).usage
    db = sqlite3.connect(path)
    db.executescript("CREATE TABLE usage (id INTEGER PRIMARY KEY AUTOINCREMENT, time TEXT NOT NULL, op TEXT NOT NULL, "
                     "repo TEXT NOT NULL, branch TEXT, index_commit TEXT, head TEXT, hits INTEGER NOT NULL, "
                     "verdicts TEXT NOT NULL, reasons TEXT NOT NULL, non_usable TEXT NOT NULL);"
                     "INSERT INTO usage VALUES (NULL, '2026-01-01T00:00:00Z', 'search', '/r', 'main', 'c', 'h', 1, "
                     "'{\"usable\": 1}', '{\"same-commit\": 1}', '[]'); PRAGMA user_version = 1;")
    db.close()
    log = UsageLog(index_dir)
    [old] = log.recent("/r", 10)
    assert old.live == {} and old.live_count("committed") == 0
    log.append(record_of("search", "/r", "main", "c", "h", [("a.py", "usable", "same-commit")],
                         live={"committed": 2, "uncommitted": 0, "files": 1}))
    assert [r.live for r in log.recent("/r", 10)] == [{}, {"committed": 2, "files": 1}]
