"""A branch searched from its index alone, its working tree gone (codevouch/retriever/recorded.py):
the same order as a search of the checkout, the text read only from a clone that holds the commit."""
from __future__ import annotations

import shutil
from pathlib import Path

from codevouch import Index
from codevouch.request import SearchRequest
from codevouch.retriever.recorded import blobs_at, holding_clone, search_recorded
from codevouch.store import Ledger
from tests.gitrepo import Repo

FILES = {
    "lib/fees.py": "def overdue_fee(loan, days):\n    # the overdue fee for days past due\n    return days * loan.rate\n",
    "lib/members.py": "def add_member(name):\n    return {'name': name}\n",
    "lib/books.py": "def find_book(title):\n    return title.lower()\n",
}


def test_a_moved_repository_is_searched_from_its_index_in_the_checkouts_order(repo: Repo, index_dir: Path,
                                                                              tmp_path: Path) -> None:
    repo.commit_files(FILES)
    idx = Index(repo.root, index_dir, embedder="fake-bow-64", record=False)
    idx.build()
    request = SearchRequest("overdue fee for days past due", k=3, overlay=False)
    here = [(h.path, h.symbol) for h in idx.search(request)]
    ledger = Ledger(index_dir, readonly=True)
    [state] = ledger.branches()
    ledger.close()
    moved = tmp_path / "moved"
    shutil.move(str(repo.root), str(moved))
    gone = search_recorded(state, request, index_dir, None, "fake-bow-64")
    assert [(c.record.path, c.record.symbol) for c in gone] == here
    assert all(c.text == "" and c.record.commit == state.commit for c in gone)
    assert holding_clone(state, [repo.root, tmp_path / "nowhere", moved]) == moved
    read = search_recorded(state, request, index_dir, moved, "fake-bow-64")
    assert read[0].text == FILES["lib/fees.py"].rstrip("\n")
    assert blobs_at(moved, state.commit, [c.record for c in read]) == {c.record.path for c in read}
