"""The LangChain compressor on a real repository, with langchain-core's own classes: a real
splitter's windows in a real in-memory vector store, retrieved, the repository edited."""
from __future__ import annotations

import logging

import pytest

from tests.gitrepo import Repo

pytest.importorskip("langchain_core")
splitters = pytest.importorskip("langchain_text_splitters")

from langchain_core.documents import BaseDocumentCompressor, Document  # noqa: E402
from langchain_core.embeddings import DeterministicFakeEmbedding  # noqa: E402
from langchain_core.vectorstores import InMemoryVectorStore  # noqa: E402

from codevouch.integrations.langchain import CodevouchCompressor  # noqa: E402


def _module(name: str, methods: int) -> str:
    body = [f'"""{name}."""\n\n\nclass {name.title()}:\n']
    for m in range(methods):
        body.append(f"    def step_{m}(self, value):\n        result = value + {m}\n"
                    f"        if result > {m * 3}:\n            return str(result) + '{name}'\n        return None\n\n")
    return "".join(body) + f"\n\ndef helper_{name}(x):\n    return x * 2\n"


@pytest.fixture
def shop(repo: Repo) -> tuple[Repo, list[Document], str]:
    files = {"shop/orders.py": _module("orders", 14), "shop/cart.py": _module("cart", 14)}
    commit = repo.commit(**files)
    splitter = splitters.RecursiveCharacterTextSplitter.from_language(
        splitters.Language.PYTHON, chunk_size=1000, chunk_overlap=100, add_start_index=True)
    docs = splitter.create_documents(list(files.values()),
                                     metadatas=[{"source": str(repo.root / p)} for p in files])
    return repo, docs, commit


def test_the_compressor_drops_stale_windows_and_cites_fresh_ones(shop: tuple[Repo, list[Document], str]) -> None:
    repo, docs, commit = shop
    store = InMemoryVectorStore(DeterministicFakeEmbedding(size=16))
    store.add_documents(docs)
    retrieved = store.as_retriever(search_kwargs={"k": len(docs)}).invoke("step value result")
    assert len(retrieved) == len(docs)
    repo.write("shop/orders.py", "import os\n" + repo.read("shop/orders.py").replace("value + 5", "value - 5"))
    compressor = CodevouchCompressor(repo=str(repo.root), commit=commit)
    assert isinstance(compressor, BaseDocumentCompressor)
    kept = compressor.compress_documents(retrieved, "step value result")
    now = {p: repo.read(p) for p in ("shop/orders.py", "shop/cart.py")}
    fresh = [d for d in retrieved if d.page_content in now[d.metadata["source"][len(str(repo.root)) + 1:]]]
    stale = [d for d in retrieved if d not in fresh]
    assert stale and len(fresh) > len(stale)
    assert sorted(d.page_content for d in kept) == sorted(d.page_content for d in fresh)
    for d in kept:
        assert d.metadata["codevouch_verdict"] in ("usable", "stale-but-ok")
        assert d.metadata["codevouch_citation"].startswith("source: shop/")
        assert d.metadata["start_index"] is not None       # the document's own metadata kept
    moved = [d for d in kept if d.metadata["source"].endswith("orders.py")]
    assert moved and all(d.metadata["codevouch_reason"] == "chunk-moved" for d in moved)


def test_keep_history_gives_the_current_code_of_a_symbol(repo: Repo) -> None:
    commit = repo.commit(**{"m.py": "def f(x):\n    return x + 1\n"})
    repo.write("m.py", "def f(x):\n    return x + 2\n")
    doc = Document(page_content="def f(x):\n    return x + 1",
                   metadata={"source": "m.py", "start_index": 0, "symbol": "f"})
    assert CodevouchCompressor(repo=str(repo.root), commit=commit).compress_documents([doc], "f") == []
    kept = CodevouchCompressor(repo=str(repo.root), commit=commit, keep_history=True).compress_documents([doc], "f")
    assert [d.page_content for d in kept] == ["def f(x):\n    return x + 2"]
    assert kept[0].metadata["codevouch_verdict"] == "historical-only" and kept[0].metadata["codevouch_replaced"]


def test_outside_paths_are_dropped_and_nothing_is_read(repo: Repo, tmp_path: pytest.TempPathFactory) -> None:
    repo.commit(**{"m.py": "X = 1\n"})
    doc = Document(page_content="X = 1", metadata={"source": "/etc/hostname", "start_index": 0})
    assert CodevouchCompressor(repo=str(repo.root)).compress_documents([doc], "x") == []


def test_a_document_without_a_source_is_dropped_and_the_others_judged(
        repo: Repo, caplog: pytest.LogCaptureFixture) -> None:
    commit = repo.commit(**{"m.py": "X = 1\nY = 2\n"})
    docs = [Document(page_content="X = 1", metadata={"start_index": 0}, id="no-source"),
            Document(page_content="Y = 2", metadata={"source": "m.py", "start_index": 6}, id="good")]
    with caplog.at_level(logging.WARNING, logger="codevouch.integrations"):
        kept = CodevouchCompressor(repo=str(repo.root), commit=commit).compress_documents(docs, "x")
    assert [(d.id, d.metadata["codevouch_verdict"]) for d in kept] == [("good", "usable")]
    # The dropped one is said, with the field it lacks, not lost in silence.
    [record] = caplog.records
    assert "dropped item 1," in record.getMessage() and "metadata.source" in record.getMessage()
