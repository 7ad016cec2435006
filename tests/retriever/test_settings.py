"""The chunker's and retriever's knobs: one frozen Settings, passed in, read nowhere else."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from codevouch import Index
from codevouch.embedding import FakeEmbedder
from codevouch.errors import InputError
from codevouch.retriever.settings import KIND_WEIGHTS, Settings
from codevouch.store import Ledger, space_name
from codevouch.worktree.identity import identify
from tests.gitrepo import Repo

UNWEIGHTED = {"source": 1.0, "test": 1.0, "config": 1.0, "docs": 1.0}
ORDERS = "def cancel_order(order):\n    order.cancel()\n"
README = "# Orders\n\nTo cancel an order, cancel the order: cancel order, cancel order.\n"


def small_definitions(n: int) -> str:
    return "".join(f"def step_{i}(x):\n    return x + {i}\n\n\n" for i in range(n))


def long_function(lines: int) -> str:
    body = "".join(f"    total = total + compute_the_value_of_item_number_{i}(ledger, account)\n"
                   for i in range(lines))
    return f"def reconcile(ledger, account):\n    total = 0\n{body}    return total\n"


def index(repo: Repo, index_dir: Path, settings: Settings | None = None) -> Index:
    return Index(repo.root, index_dir, embedder=FakeEmbedder(), record=False, settings=settings)


def test_settings_are_frozen_values_with_todays_defaults() -> None:
    s = Settings()
    assert (s.merge_target, s.embed_context, dict(s.kind_weights), s.collapse, s.lexical_weight, s.rrf_k,
            s.lexical_pairs, s.max_widenings) == (None, "path-symbol", dict(KIND_WEIGHTS), True, 0.75, 60,
                                                  "joined", 4)
    weights = dict(KIND_WEIGHTS)
    same = Settings(kind_weights=weights)
    assert same == s and hash(same) == hash(s)
    weights["docs"] = 1.0  # the caller's dict is copied: the setting does not move with it
    assert same.kind_weight("docs") == 0.5 and same.kind_weight("unknown kind") == 1.0
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.collapse = False  # type: ignore[misc]
    with pytest.raises(TypeError):
        s.kind_weights["docs"] = 1.0  # type: ignore[index]
    assert Settings(collapse=False) != s
    assert Settings(collapse=False).build_key() == s.build_key() != Settings(merge_target=190).build_key()


@pytest.mark.parametrize("bad", [{"embed_context": "path-and-more"}, {"lexical_pairs": "glued"},
                                 {"max_widenings": 0}, {"fusion": "borda"}])
def test_an_unknown_setting_is_an_input_error(bad: dict[str, object]) -> None:
    with pytest.raises(InputError):
        Settings(**bad)  # type: ignore[arg-type]


def test_kind_weights_and_the_fusion_constant_are_the_searchs(repo: Repo, index_dir: Path) -> None:
    """One index, searched with three settings: the ranking follows each (rank fusion: the
    figures are its constant's)."""
    repo.commit(**{"shop/orders.py": ORDERS, "README.md": README})
    index(repo, index_dir).build()

    def ranked(settings: Settings | None) -> list[tuple[str, float]]:
        # Not "cancel order": that spells `cancel_order`, whose definition list would be fused too.
        return [(h.path, round(h.score, 4))
                for h in index(repo, index_dir, dataclasses.replace(settings or Settings(), fusion="rrf")).search(
                    "order cancel", mode="lexical", validate=False)]

    assert ranked(Settings(kind_weights=UNWEIGHTED)) == [("shop/orders.py", 1.0), ("README.md", round(61 / 62, 4))]
    # the shipped kind weights: docs count half
    assert ranked(None) == [("shop/orders.py", 1.0), ("README.md", round(61 / 62 * 0.5, 4))]
    assert ranked(Settings(kind_weights={**UNWEIGHTED, "source": 0.3})) == [("README.md", round(61 / 62, 4)),
                                                                          ("shop/orders.py", 0.3)]
    assert ranked(Settings(rrf_k=10)) == [("shop/orders.py", 1.0), ("README.md", round(11 / 12 * 0.5, 4))]


def test_collapse_is_a_setting(repo: Repo, index_dir: Path) -> None:
    """A function longer than the model's window is several chunks of one symbol: one hit as
    shipped, each window its own hit without collapsing."""
    repo.commit(**{"ledger.py": long_function(60)})
    [summary] = index(repo, index_dir).build()
    assert summary.chunks > 1
    query = "reconcile compute the value of item number ledger account total"
    collapsed = index(repo, index_dir).search(query, k=10, validate=False)
    apart = index(repo, index_dir, Settings(collapse=False)).search(query, k=10, validate=False)
    assert [h.symbol for h in collapsed] == ["reconcile"]
    assert len(apart) == summary.chunks and {h.symbol for h in apart} == {"reconcile"}
    assert collapsed[0].record.start_line == 1 and collapsed[0].record.end_line == max(
        h.record.end_line for h in apart)


def test_build_knobs_change_the_chunks_and_the_space(repo: Repo, tmp_path: Path) -> None:
    """merge_target says how far small definitions merge; embed_context what is embedded, so
    the text hashes and the space's name. The defaults are the chunks built without settings."""
    repo.commit(**{"steps.py": small_definitions(12)})
    space_of = {}
    chunks = {}
    for name, settings in (("plain", None), ("default", Settings()), ("apart", Settings(merge_target=0)),
                           ("text-alone", Settings(embed_context=None))):
        [summary] = index(repo, tmp_path / name, settings).build()
        ledger = Ledger(tmp_path / name)
        try:
            [state] = ledger.branches()
            space_of[name] = state.space
            chunks[name] = sorted((r.path, r.start_line, r.end_line, r.text_hash)
                                  for r in ledger.branch_chunks(state) if r.status == "live")
        finally:
            ledger.close()
        assert summary.chunks == len(chunks[name])
    repo_id = identify(repo.root).id
    assert space_of["plain"] == space_of["default"] == space_of["apart"] == space_name(repo_id, FakeEmbedder.name)
    assert space_of["text-alone"] == space_name(repo_id, FakeEmbedder.name, None) != space_of["plain"]
    assert chunks["plain"] == chunks["default"]
    assert len(chunks["apart"]) == 12 > len(chunks["plain"])  # nothing merged: a chunk per definition
    # same lines, another embedded text: every key differs
    lines = [c[:3] for c in chunks["plain"]]
    assert [c[:3] for c in chunks["text-alone"]] == lines
    assert not {c[3] for c in chunks["text-alone"]} & {c[3] for c in chunks["plain"]}
