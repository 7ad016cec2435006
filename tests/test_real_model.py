"""End to end with the real packaged embedding model (MiniLM, on the CPU, offline)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.gitrepo import Repo

# Real CLI processes with the real model.
pytestmark = [pytest.mark.process, pytest.mark.model]

FILES = {
    "shop/orders.py": '''"""Order handling."""


class OrderService:
    def cancel_order(self, order_id: str) -> bool:
        """Cancel an order so that it is not shipped, and refund the customer."""
        order = self.repo.get(order_id)
        order.status = "cancelled"
        self.payments.refund(order.payment_id)
        return True
''',
    "shop/geometry.py": '''import math


def circle_area(radius: float) -> float:
    """Area of a circle from its radius."""
    return math.pi * radius ** 2
''',
    "shop/text.py": '''def slugify(title: str) -> str:
    """Turn a title into a URL slug: lowercase words joined by dashes."""
    return "-".join(title.lower().split())
''',
    "web/client.ts": '''export async function fetchUserProfile(userId: string): Promise<Profile> {
  // Load a user's profile from the HTTP API.
  const response = await fetch(`/api/users/${userId}`);
  return response.json();
}
''',
}


def test_natural_language_query_finds_the_function(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    commit = repo.commit_files(FILES)
    env = {**os.environ, "CODEVOUCH_INDEX": str(tmp_path / "index"), "HF_HUB_OFFLINE": "1"}

    def cv(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "codevouch", *args, "--repo", str(repo.root)],
                              env=env, capture_output=True, text=True, timeout=600)

    built = cv("index", "build", "--json")
    assert built.returncode == 0, built.stderr
    assert json.loads(built.stdout)["branches"][0]["embedded"] == 4
    queries = {
        "where do we cancel orders": ("shop/orders.py", "OrderService"),
        "compute the area of a circle": ("shop/geometry.py", "circle_area"),
        "make a url slug from a title": ("shop/text.py", "slugify"),
        "load the profile of a user from the api": ("web/client.ts", "fetchUserProfile"),
    }
    for query, (path, symbol) in queries.items():
        out = cv("search", query, "--json", "-k", "1")
        assert out.returncode == 0, out.stderr
        [hit] = json.loads(out.stdout)
        assert (hit["path"], hit["commit"], hit["branch"]) == (path, commit, "main"), query
        assert symbol in hit["symbol"].split(", "), (query, hit["symbol"])
        assert hit["verdict"] == "usable" and hit["citation"].startswith(f"source: {path}#L")
        assert hit["start_line"] >= 1 and hit["end_line"] >= hit["start_line"]
        assert hit["indexed_at"] and len(hit["blob_sha"]) == 40 and len(hit["text_hash"]) == 64
        # The embedding alone must find it too, not only the lexical half of hybrid search.
        dense = cv("search", query, "--json", "-k", "1", "--mode", "dense", "--no-validate")
        assert json.loads(dense.stdout)[0]["path"] == path, query


def test_uncommitted_function_is_found_by_its_docstring_sentence(tmp_path: Path) -> None:
    """The working-tree overlay with the real model: a function written after the build, not
    committed, is in the top 3 for its docstring's sentence and first for its name."""
    from codevouch import Index

    repo = Repo(tmp_path / "repo")
    repo.commit_files(FILES)
    idx = Index(repo.root, tmp_path / "index")
    idx.build()
    repo.write("shop/coupons.py", '''def apply_discount_coupon(order, coupon):
    """Reduce an order's total by the amount of a discount coupon."""
    if coupon.expired:
        raise ValueError("expired coupon")
    order.total = max(0, order.total - coupon.amount)
    return order
''')
    by_name = idx.search("apply_discount_coupon", k=3)
    assert by_name[0].path == "shop/coupons.py" and by_name[0].verdict == "usable"
    by_sentence = idx.search("reduce an order's total by the amount of a discount coupon", k=3)
    assert "shop/coupons.py" in [h.path for h in by_sentence]
    assert by_sentence.overlay is not None and by_sentence.overlay.embedded == 0   # embedded by the first query


def test_a_name_finds_its_definition_first_with_the_real_model(tmp_path: Path) -> None:
    """Issue 20: a definition's name, or its words, finds that definition first, above the chunks
    that call it (the dense half alone ranks a caller that says the name as often)."""
    from codevouch import Index

    callers = "\n\n".join(f'''def check_{i}(response):
    """Check response {i}."""
    response.raise_for_status()
    return response.raise_for_status()
''' for i in range(3))
    repo = Repo(tmp_path / "repo")
    repo.commit_files({**FILES, "web/models.py": '''class Response:
    def raise_for_status(self):
        if self.status_code >= 400:
            raise HTTPError(self.status_code)
        return self
''', "web/checks.py": callers, "tests/test_models.py": callers.replace("def check_", "def test_check_")})
    idx = Index(repo.root, tmp_path / "index")
    idx.build()
    for query in ("raise_for_status", "raise for status", "Response.raise_for_status"):
        hits = idx.search(query, k=3, validate=False)
        assert hits[0].path == "web/models.py", (query, [(h.path, h.matched) for h in hits])
        assert hits[0].matched[0] == "definition-name"
