"""Index.show, Index.references, Index.outline: the library's navigation, as the CLI's."""
from __future__ import annotations

from pathlib import Path

import pytest

from codevouch import Index
from codevouch.errors import InputError
from tests.navigate.scenario import edited


@pytest.fixture(scope="module")
def idx(tmp_path_factory: pytest.TempPathFactory) -> Index:
    base = tmp_path_factory.mktemp("methods")
    repo = edited(base / "repo", base / "index")
    return Index(repo.root, base / "index", embedder="fake-bow-64", record=False)


def test_show_gives_hits_whose_code_is_current(idx: Index) -> None:
    shown = idx.show("OrderService.cancel_order")
    [hit] = shown.hits
    assert hit.code is not None and hit.code.startswith("    def cancel_order(self, order):")
    assert hit.current is not None and (hit.current.start_line, hit.current.end_line) == (2, 4)
    assert not shown.gone and shown.note() is None


def test_show_says_gone_for_a_deleted_method(idx: Index) -> None:
    shown = idx.show("refund")
    assert shown.gone and not shown.hits
    assert [(w.path, w.start_line, w.end_line) for w in shown.was] == [("shop/orders.py", 6, 7)]


def test_references_and_outline(idx: Index) -> None:
    found = idx.references("brand_new")
    assert found.references == () and found.note is None     # defined, used nowhere
    assert [r.path for r in idx.references("helper").references] == []
    assert [e.name for e in idx.outline("shop/helpers.py").entries] == ["helper"]
    with pytest.raises(InputError, match="outside the repository"):
        idx.outline(str(Path("/etc/passwd")))
