"""The LlamaIndex postprocessor on a real repository, with llama-index-core's own classes:
files read by its reader, cut by its code splitter, indexed, retrieved, the repository edited."""
from __future__ import annotations

import pytest

from tests.gitrepo import Repo

pytest.importorskip("llama_index.core")
tree_sitter = pytest.importorskip("tree_sitter")
tree_sitter_python = pytest.importorskip("tree_sitter_python")

from llama_index.core import SimpleDirectoryReader, VectorStoreIndex  # noqa: E402
from llama_index.core.embeddings import MockEmbedding  # noqa: E402
from llama_index.core.node_parser import CodeSplitter  # noqa: E402
from llama_index.core.postprocessor.types import BaseNodePostprocessor  # noqa: E402

from codevouch.integrations.llamaindex import CodevouchPostprocessor  # noqa: E402
from tests.integrations.test_langchain import _module  # noqa: E402


def test_the_postprocessor_drops_stale_nodes_and_cites_fresh_ones(repo: Repo) -> None:
    commit = repo.commit(**{"shop/orders.py": _module("orders", 8), "shop/cart.py": _module("cart", 8)})
    docs = SimpleDirectoryReader(input_dir=str(repo.root / "shop"), required_exts=[".py"]).load_data()
    parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_python.language()))
    nodes = CodeSplitter(language="python", parser=parser, chunk_lines=12, max_chars=400).get_nodes_from_documents(docs)
    index = VectorStoreIndex(nodes, embed_model=MockEmbedding(embed_dim=8))
    retrieved = index.as_retriever(similarity_top_k=len(nodes)).retrieve("step value")
    assert len(retrieved) == len(nodes) > 6
    repo.write("shop/orders.py", "import os\n" + repo.read("shop/orders.py").replace("value + 5", "value - 5"))
    post = CodevouchPostprocessor(repo=str(repo.root), commit=commit)
    assert isinstance(post, BaseNodePostprocessor)
    kept = post.postprocess_nodes(retrieved)
    now = {name: repo.read(f"shop/{name}") for name in ("orders.py", "cart.py")}
    fresh = [n for n in retrieved if n.node.get_content() in now[n.node.metadata["file_name"]]]
    assert 0 < len(fresh) < len(retrieved)
    assert sorted(n.node.get_content() for n in kept) == sorted(n.node.get_content() for n in fresh)
    for n in kept:
        assert n.node.metadata["codevouch_verdict"] in ("usable", "stale-but-ok")
        assert n.node.metadata["codevouch_citation"].startswith("source: shop/")
    assert all("codevouch_verdict" not in n.node.metadata for n in retrieved)   # inputs untouched
