"""`SearchRequest` and `ContextRequest`: a search's options built and checked once, the same for
the library, the CLI and the MCP server (which build one each)."""
from __future__ import annotations

from pathlib import Path

import pytest

from codevouch import ContextRequest, Index, InputError, SearchRequest
from tests.clihelp import cv
from tests.gitrepo import Repo

BAD: list[tuple[dict, str]] = [
    ({"query": "  "}, "the query is empty; say what you are looking for"),
    ({"query": "?!"}, "the query is empty: it has no letters or digits"),
    ({"query": "x\udcff"}, "the query is not valid UTF-8 text"),
    ({"query": "x", "k": 0}, "k must be at least 1 (got 0)."),
    ({"query": "x", "mode": "psychic"}, "unknown search mode 'psychic'; use one of hybrid, dense, lexical."),
    ({"query": "x", "kinds": ["binary"]}, "unknown kind(s) binary; use source, test, docs, config."),
    ({"query": "x", "paths": [""]}, "a --path pattern is empty"),
    ({"query": "x", "paths": ["!vendor/"]}, "every --path pattern negates"),
]


@pytest.mark.parametrize("options, message", BAD)
def test_a_bad_value_is_refused_when_the_request_is_made(options: dict, message: str) -> None:
    for kind in (SearchRequest, ContextRequest):
        with pytest.raises(InputError) as caught:
            kind.of(**options)
        assert message in str(caught.value)


def test_the_request_holds_its_options_in_one_spelling() -> None:
    request = SearchRequest.of("cancel order", kinds=["source", "source"], paths="src/", mode="dense")
    assert (request.kinds, request.paths, request.mode) == (frozenset({"source"}), ("src/",), "dense")
    assert SearchRequest.of("x", kinds=[], paths=[]).kinds is None and SearchRequest("x", paths=[]).paths is None
    pack = ContextRequest.of("cancel order", k=3, budget=800, paths=["src/"])
    assert pack.search() == SearchRequest("cancel order", k=3, paths=("src/",))
    with pytest.raises(InputError, match="validated hits"):
        ContextRequest("x", validate=False)
    with pytest.raises(InputError, match="more than any model's window; give at most 10000000"):
        ContextRequest("x", budget=10_000_001)


def test_index_takes_a_request_or_the_keywords_that_build_it(repo: Repo, index_dir: Path) -> None:
    repo.commit_files({"shop/cancel.py": "def cancel_order(order):\n    return order.cancel()\n",
                       "docs/orders.md": "# Orders\n\ncancel order\n"})
    idx = Index(repo.root, index_dir, embedder="fake-bow-64", record=False)
    idx.build()
    request = SearchRequest("cancel order", k=5, kinds=frozenset({"source"}))
    assert [h.to_json() for h in idx.search(request)] == [h.to_json() for h in idx.search(
        "cancel order", k=5, kinds=["source"])]
    assert {h.path for h in idx.search(request)} == {"shop/cancel.py"}
    with pytest.raises(TypeError, match="k in the request"):
        idx.search(request, k=3)
    with pytest.raises(TypeError, match="ContextRequest"):
        idx.context(request)
    assert "shop/cancel.py" in idx.context(ContextRequest("cancel order", budget=800)).markdown
    with pytest.raises(InputError, match="unknown kind"):
        idx.search("cancel order", kinds=["binary"])


def test_the_cli_refuses_with_the_request_s_own_words(repo: Repo, tmp_path: Path) -> None:
    """The CLI checks nothing of its own beside the request: its message is the request's,
    which the library and the MCP server give too."""
    repo.commit_files({"a.py": "def a():\n    return 1\n"})
    for argv, options in ((["search", "x", "--mode", "psychic"], {"query": "x", "mode": "psychic"}),
                          (["context", "x", "--path", "!vendor/"], {"query": "x", "paths": ["!vendor/"]}),
                          (["search", "x", "--kind", "binary"], {"query": "x", "kinds": ["binary"]})):
        done = cv(*argv, cwd=repo.root, index=tmp_path / "index", env={"CODEVOUCH_SERVER": "off"})
        with pytest.raises(InputError) as caught:
            SearchRequest.of(**options)
        assert (done.returncode, done.stderr) == (2, f"codevouch: {caught.value}\n"), argv
