"""The writer (store/writer.py): a build's storage protocol in its order, on a real ledger and a
real embedded Chroma. A failure at any phase leaves the previous state readable, and the next
writer removes what the failed one left behind."""
from __future__ import annotations

from pathlib import Path

import pytest

from codevouch.store import Ledger, VectorStore
from codevouch.store.writer import Writer, open_writer
from tests.storehelp import MODEL, SPACE, branch_state, file_change, new_chunks, text_hash, vector_count

ORDERS = ["def cancel_order(order):\n    return order.cancel()\n", "def ship_order(order):\n    return order.ship()\n"]
MORE = ["def refund_payment(payment):\n    return payment.refund()\n", ORDERS[0]]


def cache(writer: Writer, texts: list[str]) -> None:
    """The build's step 1: every text's vector in the embedding cache."""
    writer.ledger.put_vectors(MODEL, {text_hash(t): [float(len(t)), float(n + 1)] for n, t in enumerate(texts)})


def commit(writer: Writer, branch: str, files: dict[tuple[str, str], list[str]], on_phase=None) -> None:
    change = file_change(branch_state(branch), files, held=writer.ledger)
    texts = {c.record.id: t for (path, blob), ts in files.items()
             for c, t in zip(new_chunks(path, blob, ts), ts)}
    writer.commit_build(change, MODEL, texts, **({"on_phase": on_phase} if on_phase else {}))


def test_phases_in_order_and_one_vector_per_distinct_text(index_dir: Path) -> None:
    seen: list[str] = []
    with open_writer(index_dir, wait=0) as writer:
        cache(writer, ORDERS + MORE)
        commit(writer, "main", {("shop/orders.py", "b1"): ORDERS}, on_phase=seen.append)
        assert seen == ["vectors-written", "lexical-staged", "committed"]
        assert vector_count(index_dir, SPACE) == 2 and writer.ledger.pending() == []
        # Another branch: a new file version whose second text the space already holds.
        commit(writer, "topic", {("shop/orders.py", "b1"): ORDERS, ("shop/more.py", "b2"): MORE})
        assert vector_count(index_dir, SPACE) == 3 and writer.ledger.space_size(SPACE) == 3
        state = writer.ledger.branch(branch_state("topic").coll)
        assert state is not None and len(writer.ledger.branch_chunks(state)) == 4


@pytest.mark.parametrize("phase", ["vectors-written", "lexical-staged"])
def test_a_failure_before_the_commit_leaves_the_previous_state_and_the_next_writer_cleans_up(
        index_dir: Path, phase: str) -> None:
    with open_writer(index_dir, wait=0) as writer:
        cache(writer, ORDERS + MORE)
        commit(writer, "main", {("shop/orders.py", "b1"): ORDERS})

    def die(now: str) -> None:
        if now == phase:
            raise KeyboardInterrupt(now)

    with open_writer(index_dir, wait=0) as writer, pytest.raises(KeyboardInterrupt):
        commit(writer, "main", {("shop/more.py", "b2"): MORE}, on_phase=die)
    # The vector of the new text was written, under an id the ledger does not know, and listed.
    assert vector_count(index_dir, SPACE) == 3
    reader = Ledger(index_dir, readonly=True)
    try:
        [state] = reader.branches()
        assert [c.path for c in reader.branch_chunks(state)] == ["shop/orders.py", "shop/orders.py"]
        assert reader.pending() == [(SPACE, text_hash(MORE[0]))]
    finally:
        reader.close()
    with open_writer(index_dir, wait=0) as writer:
        writer.collect_garbage()
        assert writer.ledger.pending() == []
    assert vector_count(index_dir, SPACE) == 2


def test_vectors_a_commit_made_unreferenced_are_removed_after_it(index_dir: Path) -> None:
    with open_writer(index_dir, wait=0) as writer:
        cache(writer, ORDERS + MORE)
        commit(writer, "main", {("shop/orders.py", "b1"): ORDERS, ("shop/more.py", "b2"): MORE})
        assert vector_count(index_dir, SPACE) == 3
        commit(writer, "main", {("shop/orders.py", "b3"): ORDERS[:1]})  # a new version of orders.py
        writer.commit_build(file_change(branch_state("main"), {}, dropped_paths=["shop/more.py"]), MODEL, {})
        assert vector_count(index_dir, SPACE) == 1 and writer.ledger.pending() == []
        with VectorStore(index_dir, readonly=True) as reader:
            assert [cid for cid, _ in reader.query(SPACE, [48.0, 1.0], 5)] == [text_hash(ORDERS[0])]
