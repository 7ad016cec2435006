"""Stand-in vectors: a changed definition not yet embedded ranks with its indexed version's vector
(retriever/standin.py), on real repositories and a real store (the fake embedder: bag-of-words
vectors, so a small edit keeps a function's vector close and ranks are exact to compare)."""
from __future__ import annotations

from pathlib import Path

import pytest

from codevouch import Index
from codevouch.indexer import overlay as derived
from codevouch.retriever import overlay as live
from codevouch.retriever.standin import STAND_IN, stand_ins
from codevouch.store import ChunkRecord, Ledger, overlaycache
from tests.gitrepo import Repo

FUNCS = {
    "shop/cancel.py": "def cancel_order(order):\n    \"\"\"Cancel an order and release its stock.\"\"\"\n"
                      "    order.cancel()\n    order.release_stock()\n    return order\n",
    "shop/refund.py": "def refund_payment(payment):\n    \"\"\"Refund a payment to the card it came from.\"\"\"\n"
                      "    return payment.card.refund(payment.amount)\n",
    "shop/ship.py": "def ship_parcel(parcel, carrier):\n    \"\"\"Hand a parcel to a carrier for delivery.\"\"\"\n"
                    "    return carrier.collect(parcel)\n",
    "shop/tax.py": "def compute_sales_tax(total, rate):\n    \"\"\"Sales tax owed on a total at a rate.\"\"\"\n"
                   "    return round(total * rate, 2)\n",
}
# The same function, its body changed (one line more): the query's words are the docstring's.
REFUND_CHANGED = ("def refund_payment(payment):\n    \"\"\"Refund a payment to the card it came from.\"\"\"\n"
                  "    log_refund(payment)\n    return payment.card.refund(payment.amount)\n")
QUERY = "give the money back to the card it came from"


@pytest.fixture(autouse=True)
def cold() -> None:
    derived.clear()
    overlaycache.forget_memory()


def built(repo: Repo, index_dir: Path, **kw: object) -> Index:
    repo.commit_files(FUNCS)
    idx = Index(repo.root, index_dir, embedder="fake-bow-64", **kw)  # type: ignore[arg-type]
    idx.build()
    return idx


def _rank(hits: object, path: str) -> int | None:
    return next((n for n, h in enumerate(hits, 1) if h.path == path), None)  # type: ignore[attr-defined]


def test_a_changed_function_ranks_as_after_a_rebuild_with_a_stand_in(repo: Repo, index_dir: Path) -> None:
    built(repo, index_dir)
    repo.write("shop/refund.py", REFUND_CHANGED)
    # Nothing may be embedded (a budget spent): the changed function has only its indexed vector.
    idx = Index(repo.root, index_dir, embedder="fake-bow-64", overlay_limit=0, background=False)
    hits = idx.search(QUERY, k=4, mode="dense")
    at = _rank(hits, "shop/refund.py")
    assert at is not None, [h.path for h in hits]
    hit = hits[at - 1]
    assert STAND_IN in hit.matched and "dense" in hit.matched
    # What it hands over is the working tree's text, checked as such: only the score is borrowed.
    assert hit.code == REFUND_CHANGED.rstrip("\n") and hit.record.origin == "uncommitted"
    assert hit.verdict == "usable"
    assert hits.overlay is not None and (hits.overlay.embedded, hits.overlay.stand_ins) == (0, 1)
    assert "1 ranked with their indexed version's vector" in (hits.overlay.note() or "")
    hybrid = idx.search(QUERY, k=4)
    # The rebuilt index ranks the new text where the stand-in put it.
    repo.commit("refund logs")
    Index(repo.root, index_dir, embedder="fake-bow-64").build()
    rebuilt = Index(repo.root, index_dir, embedder="fake-bow-64").search(QUERY, k=4)
    assert _rank(hybrid, "shop/refund.py") == _rank(rebuilt, "shop/refund.py") == 1
    assert STAND_IN not in rebuilt[0].matched


def test_a_chunk_with_its_own_vector_is_no_stand_in(repo: Repo, index_dir: Path) -> None:
    idx = built(repo, index_dir)
    repo.write("shop/refund.py", REFUND_CHANGED)
    hits = idx.search(QUERY, k=4, mode="dense")
    assert hits[0].path == "shop/refund.py" and STAND_IN not in hits[0].matched
    assert hits.overlay is not None and (hits.overlay.embedded, hits.overlay.stand_ins) == (1, 0)


def test_a_new_function_is_embedded_before_a_changed_one(repo: Repo, index_dir: Path) -> None:
    built(repo, index_dir)
    # The changed file sorts first: embedding in the overlay's order would take it.
    repo.write("shop/refund.py", REFUND_CHANGED)
    repo.write("shop/zcoupon.py", "def apply_coupon(order, coupon):\n    \"\"\"Take a coupon off the order.\"\"\"\n"
                                  "    return order.total - coupon.amount\n")
    idx = Index(repo.root, index_dir, embedder="fake-bow-64", overlay_limit=1, background=False)
    hits = idx.search("take a coupon off the order total", k=5, mode="dense")
    ov = hits.overlay
    assert ov is not None and (ov.embedded, ov.unembedded, ov.stand_ins) == (1, 1, 1)
    by_path = {h.path: h for h in hits}
    assert "shop/zcoupon.py" in by_path and STAND_IN not in by_path["shop/zcoupon.py"].matched
    assert STAND_IN in by_path["shop/refund.py"].matched
    coupon = next(c for c in ov.chunks if c.record.path == "shop/zcoupon.py")
    refund = next(c for c in ov.chunks if c.record.path == "shop/refund.py")
    assert overlaycache.holds("fake-bow-64", [coupon.record.text_hash])
    assert not overlaycache.holds("fake-bow-64", [refund.record.text_hash])


def test_a_renamed_file_borrows_from_the_path_it_had(repo: Repo, index_dir: Path) -> None:
    built(repo, index_dir)
    repo.git("mv", "shop/refund.py", "shop/payments.py")
    repo.write("shop/payments.py", REFUND_CHANGED)
    repo.commit("move refunds")
    idx = Index(repo.root, index_dir, embedder="fake-bow-64", overlay_limit=0, background=False)
    hits = idx.search(QUERY, k=4, mode="dense")
    assert hits.overlay is not None and hits.overlay.renamed_from == {"shop/payments.py": "shop/refund.py"}
    assert hits[0].path == "shop/payments.py" and STAND_IN in hits[0].matched
    assert "shop/refund.py" not in [h.path for h in hits]


def test_embed_rest_leaves_nothing_to_borrow(repo: Repo, index_dir: Path) -> None:
    built(repo, index_dir)
    repo.write("shop/refund.py", REFUND_CHANGED)
    repo.write("shop/zcoupon.py", "def apply_coupon(order, coupon):\n    return order.total - coupon.amount\n")
    idx = Index(repo.root, index_dir, embedder="fake-bow-64", overlay_limit=0, background=False)
    first = idx.search(QUERY, k=4, mode="dense")
    assert first.overlay is not None and first.overlay.unembedded == 2
    state = idx._branch_state(repo.root, "main")
    assert state is not None
    ledger = Ledger(index_dir, readonly=True)
    try:
        assert live.embed_rest(first.overlay, idx.embedder(), ledger, index_dir, state, stop=lambda: True) == 0
        assert live.embed_rest(first.overlay, idx.embedder(), ledger, index_dir, state) == 2
        assert live.embed_rest(first.overlay, idx.embedder(), ledger, index_dir) == 0
    finally:
        ledger.close()
    overlaycache.forget_memory()            # another process: the overlay cache file holds them
    again = idx.search(QUERY, k=4, mode="dense")
    assert again.overlay is not None and (again.overlay.embedded, again.overlay.cached) == (0, 2)
    assert again[0].path == "shop/refund.py" and STAND_IN not in again[0].matched


def _rec(cid: str, path: str, symbol: str, text_hash: str) -> ChunkRecord:
    return ChunkRecord(id=cid, repo="/r", path=path, branch="main", commit="", commit_date="", symbol=symbol,
                       start_line=1, end_line=2, indexed_at="", blob_sha="b", text_hash=text_hash, kind="source",
                       language="python", status="live", origin="uncommitted")


def test_windows_of_one_symbol_pair_in_order_and_module_code_borrows_nothing() -> None:
    indexed = {"a.py": [("<module>", "m0"), ("f", "f0"), ("f", "f1"), ("g", "g0")], "old.py": [("h", "h0")]}
    records = [_rec("1", "a.py", "<module>", "m9"), _rec("2", "a.py", "f", "x"), _rec("3", "a.py", "f", "y"),
               _rec("4", "a.py", "f", "z"), _rec("5", "a.py", "g", "g0"), _rec("6", "a.py", "new", "n"),
               _rec("7", "b.py", "h", "h9")]
    assert stand_ins(records, {"b.py": "old.py"}, indexed) == {"2": "f0", "3": "f1", "4": "f1", "7": "h0"}
