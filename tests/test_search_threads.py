"""Search embeds the query on a second thread only for an embedder that says it may."""
from __future__ import annotations

import threading
from pathlib import Path

from codevouch.embedding import FakeEmbedder
from codevouch.indexer.build import build_index
from codevouch.retriever.search import search
from tests.gitrepo import Repo


class Recording(FakeEmbedder):
    """The fake model, noting on which thread each query was embedded."""

    def __init__(self, threadsafe: bool) -> None:
        super().__init__()
        self.threadsafe_query = threadsafe
        self.threads: list[int] = []

    def embed_query(self, text: str) -> list[float]:
        self.threads.append(threading.get_ident())
        return super().embed_query(text)


class Plain:
    """A user's model that says nothing about threads (no `threadsafe_query`)."""

    def __init__(self) -> None:
        self.inner = FakeEmbedder()
        self.name, self.dim = self.inner.name, self.inner.dim
        self.threads: list[int] = []

    def embed(self, texts: list[str]) -> list[list[float]]:
        return self.inner.embed(texts)

    def embed_query(self, text: str) -> list[float]:
        self.threads.append(threading.get_ident())
        return self.inner.embed_query(text)


def test_the_query_thread_follows_the_embedder_and_the_ranking_does_not(repo: Repo, index_dir: Path) -> None:
    repo.commit_files({
        "shop/orders.py": "def cancel_order(order):\n    return order.cancel()\n",
        "shop/refund.py": "def refund_payment(payment):\n    return payment.refund()\n",
        "shop/cart.py": "def add_to_cart(cart, item):\n    cart.items.append(item)\n",
    })
    build_index(repo.root, index_dir, FakeEmbedder())
    here = threading.get_ident()
    answers = []
    for embedder in (Recording(threadsafe=True), Recording(threadsafe=False), Plain()):
        hits = search(repo.root, "cancel an order", index_dir, k=3, embedder=embedder)  # type: ignore[arg-type]
        answers.append([(h.record.path, h.record.start_line, round(h.score, 9)) for h in hits])
        assert len(embedder.threads) == 1
        assert (embedder.threads[0] != here) == (getattr(embedder, "threadsafe_query", False) is True)
    assert answers[0] == answers[1] == answers[2]
    assert answers[0][0][0] == "shop/orders.py"
