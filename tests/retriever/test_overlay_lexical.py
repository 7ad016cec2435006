"""The overlay's lexical scores are the index's: a working-tree chunk scores as the same chunk does
once committed and built into the tantivy copy (a real git repository, a real index)."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from codevouch import Index
from codevouch.indexer import overlay as derived
from codevouch.retriever import overlay as live
from codevouch.retriever.lexlists import pairs_of
from codevouch.store import Ledger, lex_key, lexical, lexindex, overlaycache
from codevouch.store.records import BranchState
from tests.gitrepo import Repo

SHOP = {
    "shop/__init__.py": "",
    "shop/cancel.py": "def cancel_order(order):\n    \"\"\"Cancel an order.\"\"\"\n    order.cancel()\n"
                      "    return order\n",
    "shop/refund.py": "def refund_order(order):\n    \"\"\"Refund an order and its discount.\"\"\"\n"
                      "    return order.refund()\n",
    "shop/legacy.py": "def legacy_invoice(order):\n    \"\"\"Print a legacy invoice.\"\"\"\n    return str(order)\n",
}
COUPON = ("def apply_discount_coupon(order, coupon):\n    \"\"\"Apply a discount coupon to an order.\"\"\"\n"
          "    order.total -= coupon.amount\n    return order\n")
BOOK = ("class CouponBook:\n    \"\"\"Coupons by code; a discounted order keeps its coupons.\"\"\"\n\n"
        "    def redeem(self, code, order):\n        coupon = self.coupons.pop(code)\n"
        "        return apply_discount_coupon(order, coupon)\n")
QUERIES = ["apply discount coupon", "apply_discount_coupon", "discounts discounted order", "redeem a coupon code",
           "CouponBook redeem", "order total amount"]


@pytest.fixture(autouse=True)
def cold() -> None:
    derived.clear()
    overlaycache.forget_memory()


def _main(index_dir: Path) -> tuple[BranchState, lexindex.Copy]:
    ledger = Ledger(index_dir, readonly=True)
    try:
        state = next(s for s in ledger.branches() if s.branch == "main")
        copy = ledger.copy_of(state)
    finally:
        ledger.close()
    assert copy is not None
    return state, copy


def _terms(query: str) -> list[str]:
    """The lexical terms a hybrid search sends (lexlists.lexical_ranking)."""
    return list(dict.fromkeys(lexical.terms(query) + pairs_of(lexical.parts(query))))


def _scores_hold_once_built(repo: Repo, index_dir: Path, queries: list[str],
                            overlay_scores: Callable[[live.Overlay, str, lexindex.Copy], list[tuple[str, float]]],
                            index_scores: Callable[[lexindex.Copy, str], list[tuple[str, float]] | None]) -> None:
    """The overlay's chunks score (`overlay_scores`) as the same chunks do once committed and
    built into the tantivy copy (`index_scores`), for every query."""
    repo.commit_files(SHOP)
    idx = Index(repo.root, index_dir, embedder="fake-bow-64", record=False)
    idx.build()
    repo.write("shop/coupon.py", COUPON)              # uncommitted: searched through the overlay
    repo.write("shop/book.py", BOOK)
    state, copy = _main(index_dir)
    ov = derived.derive(repo.root, state)
    assert {c.record.path for c in ov.chunks} == {"shop/coupon.py", "shop/book.py"}
    key = {c.record.id: lex_key(c.record.path, c.record.symbol, c.record.text_hash) for c in ov.chunks}
    before = {q: {key[cid]: s for cid, s in overlay_scores(ov, q, copy)} for q in queries}
    repo.commit("coupons")
    idx.build()
    state, copy = _main(index_dir)
    for q in queries:
        found = index_scores(copy, q)
        assert found is not None
        after = {k: s for k, s in found if k in key.values()}
        assert before[q], q
        assert set(before[q]) == set(after), q
        for k, score in before[q].items():
            assert score == pytest.approx(after[k], rel=1e-5), (q, k)


def test_an_overlay_chunk_scores_as_it_will_once_built(repo: Repo, index_dir: Path) -> None:
    _scores_hold_once_built(repo, index_dir, QUERIES,
                            lambda ov, q, copy: live.lexical_scores(ov, _terms(q), index_dir, copy),
                            lambda copy, q: lexindex.search(index_dir, copy, _terms(q), 100))


@pytest.mark.parametrize("field", ["ownwords", "namewords"])
def test_an_overlay_definition_scores_on_its_name_words_as_it_will_once_built(repo: Repo, index_dir: Path,
                                                                              field: str) -> None:
    """A sentence's name-words list (the words of what a chunk defines, with or without its
    container's) ranks the overlay's new definitions too, with the score the index gives them once
    committed and built."""
    from codevouch.retriever import query as reading
    from codevouch.retriever.settings import DEFAULT

    def words(q: str) -> list[str]:
        return list(reading.read(q, "hybrid", DEFAULT).words)
    _scores_hold_once_built(repo, index_dir, ["how do I apply a discount coupon to an order",
                                              "redeem the coupons of a book by their code", "where are coupon books kept"],
                            lambda ov, q, copy: live.name_words_scores(ov, words(q), index_dir, copy, field),
                            lambda copy, q: lexindex.search(index_dir, copy, words(q), 100, only=field))


def test_a_sentence_ranks_a_new_definition_first_as_a_rebuild_does(repo: Repo, index_dir: Path) -> None:
    """End to end: a prose query that describes an uncommitted definition ranks it first, with the
    fused score it gets once committed and built (it ranked third, at 0.64, when the name-words
    list left the overlay's chunks out). The other hits may trade places: the index's own
    chunks keep the scores of the copy they were built into until the next build."""
    repo.commit_files(SHOP)
    idx = Index(repo.root, index_dir, embedder="fake-bow-64", record=False)
    idx.build()
    repo.write("shop/coupon.py", COUPON)
    repo.write("shop/book.py", BOOK)
    sentences = {"how do I apply a discount coupon to an order": "apply_discount_coupon",
                 "redeem the coupons of a coupon book by their code": "CouponBook"}

    def ranked(q: str) -> list[tuple[str, float]]:
        return [(h.symbol, round(h.score, 6)) for h in idx.search(q, k=6, validate=False)]
    before = {q: ranked(q) for q in sentences}
    repo.commit("coupons")
    idx.build()
    for q, symbol in sentences.items():
        after = ranked(q)
        assert after[0][0].startswith(symbol), (q, after)
        assert before[q][0] == after[0], (q, before[q], after)
        assert {s for s, _ in before[q]} == {s for s, _ in after}, q
