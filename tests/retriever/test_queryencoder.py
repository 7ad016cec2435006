"""Which model embeds a query: the caller's when a branch was built with it, else the branch's own;
a model named only as a guess is never loaded. A real index built in a real git repository."""
from __future__ import annotations

from pathlib import Path

from codevouch import Index
from codevouch.embedding import MODEL_NAME, FakeEmbedder
from codevouch.retriever.mode import SearchMode
from codevouch.retriever.queryencoder import for_query, held
from tests.gitrepo import Repo


def test_a_named_model_is_held_only_when_a_branch_was_built_with_it(repo: Repo, index_dir: Path) -> None:
    repo.commit_files({"a.py": "def settle():\n    return 1\n"})
    assert held(FakeEmbedder.name, index_dir) is None          # no index yet: nothing is loaded
    Index(repo.root, index_dir, embedder=FakeEmbedder(), record=False).build()
    loaded = held(FakeEmbedder.name, index_dir)
    assert isinstance(loaded, FakeEmbedder)
    # The CLI names the packaged model whatever was built: a guess no branch uses loads nothing.
    assert held(MODEL_NAME, index_dir) is None
    given = FakeEmbedder()
    assert held(given, index_dir) is given                     # a model object is the caller's own


def test_the_query_model_is_the_branchs_own_reusing_the_one_given() -> None:
    given = FakeEmbedder()
    assert for_query(given, FakeEmbedder.name, SearchMode.HYBRID) is given
    assert for_query(given, FakeEmbedder.name, SearchMode.LEXICAL) is None   # words need no model
    other = for_query(None, FakeEmbedder.name, SearchMode.HYBRID)
    assert isinstance(other, FakeEmbedder) and other is not given


def test_query_vectors_are_shared_by_model_name_not_by_object() -> None:
    from concurrent.futures import Future

    from codevouch.retriever.queryencoder import QueryVectors

    shared = QueryVectors()
    made: list[str] = []

    def start(model: FakeEmbedder, text: str) -> Future[list[float]]:
        made.append(text)
        done: Future[list[float]] = Future()
        done.set_result(model.embed_query(text))
        return done
    one, two = FakeEmbedder(), FakeEmbedder()
    first = shared.vector(one, "overdue fee", lambda: start(one, "overdue fee"))
    again = shared.vector(two, "overdue fee", lambda: start(two, "overdue fee"))
    assert again is first and made == ["overdue fee"] and (one.queries, two.queries) == (1, 0)
    shared.vector(two, "late fee", lambda: start(two, "late fee"))
    assert made == ["overdue fee", "late fee"]


def test_a_call_across_repositories_asks_the_ledger_for_its_models_once(repo: Repo, index_dir: Path,
                                                                         monkeypatch) -> None:
    # Each repository's search asked which models the index directory's branches use, opening
    # the ledger each time; a search across repositories shares one QueryVectors, which asks once.
    from codevouch.retriever import queryencoder
    from codevouch.retriever.queryencoder import QueryVectors

    repo.commit_files({"a.py": "def settle():\n    return 1\n"})
    Index(repo.root, index_dir, embedder=FakeEmbedder(), record=False).build()
    asked: list[Path] = []
    real = queryencoder.models_in_use
    monkeypatch.setattr(queryencoder, "models_in_use", lambda where: asked.append(where) or real(where))
    shared = QueryVectors()
    first = shared.held(FakeEmbedder.name, index_dir)
    assert isinstance(first, FakeEmbedder) and shared.held(FakeEmbedder.name, index_dir) is first
    assert shared.held(MODEL_NAME, index_dir) is None and shared.held(MODEL_NAME, index_dir) is None
    assert asked == [index_dir, index_dir]                     # once per model name
    given = FakeEmbedder()
    assert shared.held(given, index_dir) is given
    # held_in: through the call's QueryVectors when it has them (asked nothing more), else afresh.
    assert queryencoder.held_in(shared, FakeEmbedder.name, index_dir) is first and len(asked) == 2
    assert isinstance(queryencoder.held_in(None, FakeEmbedder.name, index_dir), FakeEmbedder) and len(asked) == 3
