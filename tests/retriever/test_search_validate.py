"""`codevouch search` checks its hits: verdicts shown, excluded hidden, history never shown as current."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.clihelp import FAKE, cv
from tests.gitrepo import Repo

SHOP = {
    "shop/cancel.py": "def cancel_order(order):\n    order.cancel()\n    return order\n",
    "shop/refund.py": "def refund_order(order):\n    return order.refund()\n",
    "shop/legacy.py": "def legacy_cancel(order):\n    return None\n",
}


def test_search_json_carries_verdicts(repo: Repo, index_dir: Path) -> None:
    repo.commit_files(SHOP)
    assert cv("index", "build", *FAKE, cwd=repo.root, index=index_dir).returncode == 0
    repo.write("shop/cancel.py", "def cancel_order(order, reason):\n    order.cancel(reason)\n    return order\n")
    repo.remove("shop/legacy.py")
    # The index's stale hits as the validator sees them (the overlay would replace them).
    out = cv("search", "order", "--json", "-k", "10", "--no-overlay", cwd=repo.root, index=index_dir)
    assert out.returncode == 0, out.stderr
    by_path = {h["path"]: h for h in json.loads(out.stdout)}
    assert (by_path["shop/refund.py"]["verdict"], by_path["shop/refund.py"]["reason"]) == ("usable", "same-commit")
    changed = by_path["shop/cancel.py"]
    assert (changed["verdict"], changed["reason"]) == ("historical-only", "content-changed")
    assert "reason" in changed["code"] and changed["current"]["start_line"] == 1
    assert by_path["shop/legacy.py"]["reason"] == "file-deleted"
    for hit in by_path.values():
        assert hit["citation"].startswith("source: " + hit["path"])


def test_text_output_hides_excluded_and_shows_current_code(repo: Repo, index_dir: Path) -> None:
    repo.commit_files(SHOP)
    assert cv("index", "build", *FAKE, cwd=repo.root, index=index_dir).returncode == 0
    # Rules in the working tree now mark refund.py as generated; cancel.py changes.
    repo.write(".codevouch.toml", 'generated = ["shop/refund.py"]\n')
    repo.write("shop/cancel.py", "def cancel_order(order):\n    order.cancel(now=True)\n    return order\n")
    text = cv("search", "order", "-k", "10", "--no-overlay", cwd=repo.root, index=index_dir)
    assert text.returncode == 0, text.stderr
    assert "shop/refund.py" not in text.stdout and re.search(r"\(1 excluded hit hidden|\([2-9] excluded hits hidden", text.stdout)
    pack = cv("search", "order", "-k", "10", "--no-overlay", "--format", "context", "--include-history", cwd=repo.root,
              index=index_dir).stdout
    current, _, rest = pack.partition("## Historical")
    # The changed function appears as current code only in its new form.
    assert "order.cancel(now=True)" in current and "order.cancel()\n" not in current
    assert "order.cancel()\n" in rest and "do not implement" in rest
    assert "- excluded: shop/refund.py" in rest and "[excluded: generated]" in rest
    assert pack.rstrip().splitlines()[-1].startswith("verdicts: included: usable")
    assert cv("context", "order", "-k", "10", "--no-overlay", "--include-history", cwd=repo.root, index=index_dir).stdout == pack
    # Historical text only when asked for: otherwise the report lists it as left out.
    plain = cv("context", "order", "-k", "10", "--no-overlay", cwd=repo.root, index=index_dir).stdout
    assert "## Historical" not in plain and "order.cancel()\n" not in plain
    assert "- historical: shop/cancel.py#L1-L3 (cancel_order) [historical-only: content-changed]" in plain


def test_validate_command_exit_codes(repo: Repo, index_dir: Path) -> None:
    repo.commit_files(SHOP)
    assert cv("index", "build", *FAKE, cwd=repo.root, index=index_dir).returncode == 0
    hits = cv("search", "order", "--json", "--no-validate", cwd=repo.root, index=index_dir).stdout
    ok = cv("validate", "-", "--json", cwd=repo.root, stdin=hits)
    assert ok.returncode == 0, ok.stderr
    assert {h["verdict"] for h in json.loads(ok.stdout)} == {"usable"}
    repo.remove("shop/legacy.py")
    gone = cv("validate", "-", cwd=repo.root, stdin=hits)
    assert gone.returncode == 3 and "historical-only" in gone.stdout
    bad = cv("validate", "-", cwd=repo.root, stdin='[{"commit": "abc"}]')
    assert bad.returncode == 2 and "path" in bad.stderr
    assert cv("validate", "-", cwd=repo.root, stdin="").returncode == 0
    outside = cv("validate", "-", "--json", cwd=repo.root, stdin='{"path": "../../etc/passwd"}')
    assert json.loads(outside.stdout)[0]["reason"] == "outside-repo"


def test_search_names_the_branch_it_searches(repo: Repo, index_dir: Path) -> None:
    """Root, repository id and branch come from one git call while all is well; a detached HEAD
    needs --branch, and a path outside any repository is a clear error."""
    from codevouch.api import Index
    from codevouch.errors import DetachedHead, NotARepository

    first = repo.commit_files(SHOP)
    idx = Index(repo.root / "shop", index_dir, embedder="fake-bow-64")
    idx.build()
    [hit] = idx.search("refund_order", k=1, validate=False, mode="lexical")
    assert (hit.record.path, hit.record.branch, hit.record.repo) == ("shop/refund.py", "main", str(repo.root))
    repo.checkout("--detach", first)
    with pytest.raises(DetachedHead, match="--branch"):
        idx.search("refund_order", validate=False)
    [hit] = idx.search("refund_order", k=1, branch="main", validate=False, mode="lexical")
    assert hit.record.path == "shop/refund.py"
    with pytest.raises(NotARepository):
        Index(index_dir, index_dir, embedder="fake-bow-64").search("refund_order", validate=False)
