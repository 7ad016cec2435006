"""Every process-wide cache can be cleared from one place: codevouch.clear_caches()."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

import codevouch
import codevouch.embedding.numpy_minilm  # noqa: F401  (registers the query encoder: a search with MiniLM would)
from codevouch import Index, caches
from codevouch.embedding import FakeEmbedder
from tests.gitrepo import Repo

ORDERS = '''"""Orders."""


def cancel_order(order):
    """Cancel an order."""
    order.cancel()
    return order


def refund_order(order):
    return order.refund()
'''

# Every cache a search, a validation and a context pack fill (the query encoder, a real model's,
# has a test of its own below).
FILLED_BY_USE = {
    "codevouch.embedding.token_counter",
    "codevouch.syntax.languages.get_language",
    "codevouch.syntax.languages.get_parser",
    "codevouch.syntax.definitions._query",
    "codevouch.validator.parsecache.CACHE",
    "codevouch.worktree.rules._spec",
    "codevouch.worktree.rules._classify_path",
    "codevouch.worktree.identity._root_commit",
    "codevouch.context.windows._packaged",
    "codevouch.context.windows._encoding",
    "codevouch.retriever.search.space_sizes",
    "codevouch.retriever.search.readers",
    "codevouch.retriever.blobcache",
    "codevouch.store.lexindex.open",
    "codevouch.store.lexindex.analyzer",
    "codevouch.indexer.overlay.cuts",
    "codevouch.retriever.overlay.tokens",
    "codevouch.store.overlaycache.memory",
    "codevouch.worktree.gitio.private_index",
    "codevouch.worktree.gitio.objects",
}
MODEL = "codevouch.embedding.numpy_minilm.numpy_minilm"


def sizes() -> dict[str, int]:
    return {name: cache.size() for name, cache in caches.registered().items()}


def use_everything(repo: Repo, index_dir: Path) -> list[tuple[str, int, str | None]]:
    index = Index(repo.root, index_dir, embedder=FakeEmbedder(), record=False)
    index.build()
    # The function moved down two lines in the working tree: validating it parses the file.
    repo.write("shop/orders.py", "# moved\n\n" + ORDERS)
    hits = index.search("cancel an order", k=3, overlay=False)   # the index's hit: validating it parses the file
    index.search("cancel an order", k=3)                         # the overlay chunks the moved file
    index.context("cancel an order", budget=2000)
    return [(h.path, h.record.start_line, h.verdict) for h in hits]


def test_one_call_clears_every_cache_that_use_filled(repo: Repo, index_dir: Path) -> None:
    repo.commit(**{"shop/orders.py": ORDERS, "README.md": "# Shop\n\nCancel an order with cancel_order.\n"})
    codevouch.clear_caches()
    first = use_everything(repo, index_dir)
    assert FILLED_BY_USE | {MODEL} <= set(caches.registered())
    filled = sizes()
    assert {name for name in FILLED_BY_USE if filled[name] == 0} == set()
    codevouch.clear_caches()
    assert {name: n for name, n in sizes().items() if n} == {}
    # Cleared is as fresh: the same answers, every cache filled again (the token counter too: the
    # build has nothing new to chunk, but the overlay chunks the moved file again).
    repo.write("shop/orders.py", ORDERS)
    assert use_everything(repo, index_dir) == first
    assert {name for name in FILLED_BY_USE if sizes()[name] == 0} == set()
    assert {v for _, _, v in first} == {"stale-but-ok", "usable"}


@pytest.mark.model
def test_the_query_encoder_is_cleared_too() -> None:
    from codevouch.embedding.numpy_minilm import numpy_minilm

    numpy_minilm()
    assert sizes()[MODEL] == 1
    codevouch.clear_caches()
    assert sizes()[MODEL] == 0


def test_every_lru_cache_in_codevouch_is_registered() -> None:
    """A new functools cache must join the registry (put `@clearable` above it), or
    clear_caches() would miss it."""
    root = Path(codevouch.__file__).parent
    unregistered = []
    for path in sorted(root.rglob("*.py")):
        lines = path.read_text(encoding="utf-8").splitlines()
        for n, line in enumerate(lines):
            if re.match(r"\s*@(functools\.)?(lru_cache|cache)\b", line) and not re.match(
                    r"\s*@(caches\.)?clearable\b", lines[n - 1]):
                unregistered.append(f"{path.relative_to(root)}:{n + 1}")
    assert unregistered == []
