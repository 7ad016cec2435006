"""A branch's bound for a query (codevouch/retriever/bound.py): never below a hit its search gives,
and none where the search must run to know."""
from __future__ import annotations

from pathlib import Path

import pytest

from codevouch import Index
from codevouch.request import SearchRequest
from codevouch.retriever.bound import Bounds
from codevouch.retriever.queryencoder import QueryVectors
from codevouch.retriever.search import vector_reader
from codevouch.retriever.searchrun import Caller
from codevouch.retriever.settings import DEFAULT
from tests.gitrepo import Repo

FAKE = "fake-bow-64"
FILES = {
    "client.py": "class Response:\n    def raise_for_status(self):\n        if self.status >= 400:\n"
                 "            raise ValueError(self.status)\n\n    def json(self):\n        return decode(self.body)\n",
    "fees.py": "def overdue_fee(loan, days):\n    return days * loan.rate\n",
}


@pytest.fixture
def built(tmp_path: Path) -> tuple[Repo, Path]:
    repo = Repo.create(tmp_path / "repo")
    repo.commit_files(FILES)
    Index(repo.root, tmp_path / "index", embedder=FAKE, record=False).build()
    return repo, tmp_path / "index"


def _bound(repo: Repo, index_dir: Path, query: str, **options: object):  # type: ignore[no-untyped-def]
    bounds = Bounds(index_dir, SearchRequest(query, **options), DEFAULT, Caller(queries=QueryVectors()),  # type: ignore[arg-type]
                    vector_reader, FAKE)
    try:
        return bounds.of(repo.root)
    finally:
        bounds.close()


@pytest.mark.parametrize("held", [True, False], ids=["vectors held", "the store asked"])
def test_no_hit_of_the_search_is_above_the_bound(built: tuple[Repo, Path], held: bool,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from codevouch.retriever import held as module

    if not held:
        monkeypatch.setattr(module, "SPACE_MAX", 0)       # every space too big to hold: the store's nearest
    module._HELD.clear()
    repo, index_dir = built
    index = Index(repo.root, index_dir, embedder=FAKE, record=False, background=False)
    for query in ("overdue fee for days past due", "raise an error when the status is bad", "decode the json body",
                  "raise for status", "Response.raise_for_status"):
        got = _bound(repo, index_dir, query)
        assert got is not None and got.model == FAKE and got.root == repo.root
        hits = index.search(query, k=10)
        threshold = 0.0     # every hit above it a good match: the key's every part at its highest
        assert all((h.name_match, h.good_match is True, h.similarity or 0.0) <= got.key(threshold) for h in hits), query


def test_a_name_the_query_spells_is_told_from_prose(built: tuple[Repo, Path]) -> None:
    repo, index_dir = built
    # "fee overdue": no name spelled whole, but a defined name holds each of its words
    for named in ("raise for status", "raise_for_status", "status", "Response.raise_for_status", "overdue fee",
                  "fee overdue"):
        got = _bound(repo, index_dir, named)
        assert got is not None and got.named, named
    for prose in ("decode the body of a reply", "compute what a late loan costs per day"):
        got = _bound(repo, index_dir, prose)
        assert got is not None and not got.named, prose
        assert got.key(None) == (False, False, pytest.approx(got.similarity, abs=1e-4))


def test_no_bound_where_the_search_must_run(built: tuple[Repo, Path], tmp_path: Path) -> None:
    repo, index_dir = built
    assert _bound(repo, index_dir, "overdue fee", mode="lexical") is None       # no similarity to bound
    assert _bound(repo, index_dir, "overdue fee", branch="other") is None       # not indexed: the search says so
    repo.write("late.py", "def late(days):\n    return days\n")                 # its overlay is searched live
    assert _bound(repo, index_dir, "overdue fee") is None
    repo.git("add", "-A")
    repo.git("commit", "-q", "-m", "late")                                     # committed after the build
    assert _bound(repo, index_dir, "overdue fee") is None
    assert _bound(repo, index_dir, "overdue fee", overlay=False) is not None    # the overlay off: the index alone


def test_a_build_is_seen_by_the_next_bound(built: tuple[Repo, Path]) -> None:
    repo, index_dir = built
    query = "late charge for the days a loan is overdue"
    first = _bound(repo, index_dir, query)
    assert first is not None
    repo.commit_files({"late.py": "def late_charge_for_overdue_loan_days(loan, days):\n    return days * loan.rate\n"})
    Index(repo.root, index_dir, embedder=FAKE, record=False).build()
    again = _bound(repo, index_dir, query)
    assert again is not None and again.similarity > first.similarity     # the held vectors were read again


@pytest.fixture
def settled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files written a moment ago count as settled (RACY_NS 0: a test cannot wait out the clock
    tick), so that what a bound read is kept from one query to the next, as in a warm engine."""
    from codevouch.store import ledgerlook
    from codevouch.worktree.git import unchanged

    monkeypatch.setattr(unchanged, "RACY_NS", 0)
    monkeypatch.setattr(ledgerlook, "RACY_NS", 0)


def _fresh(repo: Repo, index_dir: Path, query: str):  # type: ignore[no-untyped-def]
    """The bound with nothing kept from an earlier query: what a kept one must equal."""
    from codevouch import clear_caches

    clear_caches()
    return _bound(repo, index_dir, query)


@pytest.mark.usefixtures("settled")
def test_a_bound_kept_for_the_next_query_follows_the_work_tree(built: tuple[Repo, Path]) -> None:
    repo, index_dir = built
    query = "overdue fee for days past due"
    first = _bound(repo, index_dir, query)
    assert first is not None and _bound(repo, index_dir, query) == first
    assert _bound(repo, index_dir, "decode the json body") == _fresh(repo, index_dir, "decode the json body")
    _bound(repo, index_dir, query)
    repo.write("fees.py", FILES["fees.py"] + "\n\ndef waive(loan):\n    return 0\n")     # the overlay: search it
    assert _bound(repo, index_dir, query) is None
    repo.write("fees.py", FILES["fees.py"])       # back as committed: its stat data are new, the answer too
    assert _bound(repo, index_dir, query) == _fresh(repo, index_dir, query) == first
    repo.commit_files({"late.py": "def late(days):\n    return days\n"})   # HEAD moved past the indexed commit
    assert _bound(repo, index_dir, query) is None


@pytest.mark.usefixtures("settled")
def test_a_bound_kept_for_the_next_query_follows_the_ledger(built: tuple[Repo, Path]) -> None:
    """Only the ledger changes here (the work tree is as it was): a kept read of the forgotten
    entry would still bound it."""
    from codevouch.indexer.forget import forget

    repo, index_dir = built
    query = "overdue fee for days past due"
    assert _bound(repo, index_dir, query) is not None
    forget(index_dir, repo.root, str(repo.root))
    assert _bound(repo, index_dir, query) is None


def test_a_status_started_ahead_is_the_one_the_bound_reads(built: tuple[Repo, Path],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Where no look stands for the work tree (here: over MAX_ENTRIES), a bound asks git whether the
    tree is the indexed commit. `start` asks ahead, inside a call's look scope only, and the bound
    then reads that answer: one status process, not two; outside a scope, `start` runs nothing."""
    from codevouch.worktree import gitio
    from codevouch.worktree.git import unchanged

    repo, index_dir = built
    monkeypatch.setattr(unchanged, "MAX_ENTRIES", 3)
    bounds = Bounds(index_dir, SearchRequest("overdue fee for days past due"), DEFAULT,
                    Caller(queries=QueryVectors()), vector_reader, FAKE)
    try:
        before = gitio.PROCESSES["status"]
        bounds.start(repo.root)
        assert gitio.PROCESSES["status"] == before
        with gitio.one_look():
            bounds.start(repo.root)
            assert gitio.PROCESSES["status"] == before + 1
            got = bounds.of(repo.root)
            assert gitio.PROCESSES["status"] == before + 1
        assert got is not None and got == _bound(repo, index_dir, "overdue fee for days past due")
    finally:
        bounds.close()
