"""`--kind KIND`: a filter keeps the default's order of the chunks it keeps, and fills k from
deeper lists only after them. A real index of a real git repository, its lists deeper than the
fusion's 30."""
from __future__ import annotations

from pathlib import Path

import pytest

from codevouch import Index
from codevouch.retriever.settings import FUSIONS, Settings
from tests.gitrepo import Repo

WORDS = ("retry", "connection", "timeout", "pool", "socket", "header", "cookie", "proxy", "redirect", "stream")


def corpus() -> dict[str, str]:
    """Sixty source functions and sixty tests that call them, each speaking of a few of the same
    words, so that every list ranks far more chunks than the fusion's depth and each ranks them
    its own way."""
    files = {}
    for i in range(60):
        said = [WORDS[(i * 7 + j * 3) % len(WORDS)] for j in range(1 + i % 4)]
        body = "\n".join(f"    {w}_{i % 5} = session.{w}({i})" for w in said)
        files[f"pkg/mod_{i}.py"] = f"def {'_'.join(said)}_{i}(session):\n{body}\n    return session\n"
        files[f"tests/test_mod_{i}.py"] = (f"from pkg.mod_{i} import {'_'.join(said)}_{i}\n\n\n"
                                           f"def test_{i}(session):\n    assert {'_'.join(said)}_{i}(session)\n"
                                           f"    assert session.{said[-1]} is not None\n")
    return files


QUERIES = ("retry the connection after a timeout", "close the pool and its socket",
           "send a header with the cookie", "follow a redirect through the proxy", "read the stream again")


@pytest.mark.parametrize("fusion", FUSIONS)
def test_a_kind_filter_keeps_the_defaults_order_and_fills_k_after_it(repo: Repo, index_dir: Path, fusion: str) -> None:
    """By score, many chunks tie (same words, no dense rank) and the dense similarity orders
    them: the same for the filter as for the default, though its deeper dense list holds some of
    them (the vector store's cosine, which differs from the one computed here in the eighth digit)."""
    repo.commit_files(corpus())
    Index(repo.root, index_dir, embedder="fake-bow-64", record=False).build()
    idx = Index(repo.root, index_dir, embedder="fake-bow-64", record=False, settings=Settings(fusion=fusion))
    for query in QUERIES:
        default = idx.search(query, k=10, validate=False, overlay=False)
        for kind in ("source", "test"):
            mine = [(h.path, h.record.start_line) for h in default if h.record.kind == kind]
            kept = idx.search(query, k=10, kinds=[kind], validate=False, overlay=False)
            # k is filled (the default's top 10 hold fewer of either kind), every hit of the kind ...
            assert len(kept) == 10 and {h.record.kind for h in kept} == {kind}, (query, kind)
            # ... and those the default ranked come first, in its order.
            assert [(h.path, h.record.start_line) for h in kept][:len(mine)] == mine, (query, kind)
