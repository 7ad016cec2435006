"""`codevouch.Index`, the library front door, on real git repositories and a real Chroma store."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

import codevouch
from codevouch import CodevouchError, Hit, Index, InputError, NotIndexed, Verdict
from codevouch.store import ChunkRecord
from codevouch.validator import Snippet, to_json
from codevouch.validator.parse import check_snippet
from tests.gitrepo import Repo

SHOP = {
    "shop/cancel.py": "def cancel_order(order):\n    order.cancel()\n    return order\n",
    "shop/refund.py": "def refund_order(order):\n    return order.refund()\n",
    "tests/test_cancel.py": "def test_cancel_order():\n    assert cancel_order(order) is order\n",
    "docs/orders.md": "# Orders\n\nTo cancel an order, call cancel order.\n",
}


def built(repo: Repo, index_dir: Path) -> Index:
    repo.commit_files(SHOP)
    idx = Index(repo.root, index_dir, embedder="fake-bow-64")
    [summary] = idx.build()
    assert summary.branch == "main" and summary.chunks == 4
    return idx


def test_public_names_are_exported() -> None:
    for name in codevouch.__all__:
        assert getattr(codevouch, name) is not None
        if name != "__version__":
            assert getattr(codevouch, name).__doc__, f"{name} has no docstring"
    assert issubclass(NotIndexed, CodevouchError) and issubclass(InputError, CodevouchError)
    assert Verdict.USABLE == "usable" and str(Verdict.HISTORICAL_ONLY) == "historical-only"


def test_search_returns_validated_typed_hits(repo: Repo, index_dir: Path) -> None:
    idx = built(repo, index_dir)
    repo.write("shop/cancel.py", "def cancel_order(order, reason):\n    order.cancel(reason)\n    return order\n")
    hits = idx.search("cancel order", k=10, overlay=False)   # the index's stale hit, as validated
    by_path = {h.path: h for h in hits}
    assert (by_path["shop/refund.py"].verdict, by_path["shop/refund.py"].reason) == ("usable", "same-commit")
    changed = by_path["shop/cancel.py"]
    assert (changed.verdict, changed.reason) == ("historical-only", "content-changed")
    # Code an agent may use is the current definition, never the old text.
    assert changed.code is not None and "reason" in changed.code and changed.code != changed.text
    assert changed.citation is not None and changed.citation.startswith("source: shop/cancel.py")
    assert changed.to_json()["verdict"] == "historical-only"


def test_search_without_validation_and_kinds_filter(repo: Repo, index_dir: Path) -> None:
    idx = built(repo, index_dir)
    raw = idx.search("cancel order", k=10, validate=False)
    assert raw and all(h.verdict is None and h.check is None for h in raw)
    assert {h.record.kind for h in raw} == {"source", "test", "docs"}
    only_tests = idx.search("cancel order", k=10, kinds=["test"])
    assert [h.path for h in only_tests] == ["tests/test_cancel.py"]
    code = idx.search("cancel order", k=10, kinds=("source", "test"))
    assert {h.record.kind for h in code} == {"source", "test"}


def test_hide_excluded(repo: Repo, index_dir: Path) -> None:
    idx = built(repo, index_dir)
    repo.write(".codevouch.toml", 'generated = ["shop/refund.py"]\n')
    every = idx.search("order", k=10)
    assert "excluded" in {h.verdict for h in every}
    shown = idx.search("order", k=10, hide_excluded=True)
    assert shown and "excluded" not in {h.verdict for h in shown}
    assert len(shown) == len(every) - 1


def test_validate_takes_dicts_and_hits(repo: Repo, index_dir: Path) -> None:
    idx = built(repo, index_dir)
    [hit] = idx.search("refund", k=1, validate=False)
    repo.remove("shop/refund.py")
    [from_hit, from_dict] = idx.validate([hit, {"path": "shop/cancel.py", "text": "    order.cancel()"}])
    assert (from_hit.verdict, from_hit.reason) == ("historical-only", "file-deleted")
    assert (from_dict.verdict, from_dict.reason) == ("stale-but-ok", "text-found")
    # An item that cannot be read is its own verdict; the others are still judged.
    [bad, good] = idx.validate([{"no_path": 1}, {"path": "shop/cancel.py"}])
    assert (bad.verdict, bad.reason, good.position) == ("excluded", "malformed-input", 1)
    assert 'missing "path"' in bad.detail
    with pytest.raises(InputError, match="input format"):
        idx.validate([{"path": "shop/cancel.py"}], input_format="yaml")


HIT_ONLY = ("code", "outline", "cut")     # Hit.to_json's fields beyond the validator's


def test_a_hit_validates_as_its_json_does(repo: Repo, index_dir: Path) -> None:
    # Hits reach the validator parsed from their records (Snippet.of_record), not as JSON: the
    # verdicts, citations and output must be those of the JSON `search --json --no-validate` prints.
    idx = built(repo, index_dir)
    repo.write("shop/cancel.py", "# moved down\n" + SHOP["shop/cancel.py"])
    repo.remove("shop/refund.py")
    # The index's hits (the overlay would replace the changed files' ones), then the overlay's.
    for overlay, reasons in ((False, {"chunk-moved", "file-deleted", "same-commit"}), (True, {"same-commit", "same-worktree"})):
        raw = idx.search("cancel order", k=10, validate=False, overlay=overlay)
        checked = idx.search("cancel order", k=10, overlay=overlay)
        as_json = idx.validate([h.snippet() for h in raw])
        # The hit's form is the validated snippet's plus what only a search hit has (HIT_ONLY);
        # validate adds where each item was in its input (input_index, input_id): search has no input.
        # Each piece of code once: `current` says where the code is (its text is `code`), and `text`
        # is left out where it is `code` exactly.
        assert [{k: v for k, v in h.to_json().items() if k not in HIT_ONLY} for h in checked] == \
            [_once(to_json(v), h.code) for v, h in zip(idx.validate(raw), checked)] == \
            [_once(to_json(v), h.code) for v, h in zip(as_json, checked)]
        assert [h.to_json()["code"] for h in checked] == [h.code for h in checked]
        assert [(v.position, v.item_id) for v in as_json] == [(n, h.record.id or None) for n, h in enumerate(raw)]
        assert [v.parsed for v in as_json] == [Snippet.of_record(h.record, h.text) for h in raw]
        assert {h.reason for h in checked} >= reasons
        # A checked hit's JSON handed back is checked again: the search's `code` is not passed on.
        back = idx.validate([h.to_json() for h in checked])
        assert [v.parsed for v in back] == [v.parsed for v in as_json]     # the indexed text, from `code`
        again = [to_json(v) for v in back]
        # (A hit whose `text` is its `code` carries it there: validate reads it from `code`.)
        assert [_no_text(j) for j in again] == [_no_text(to_json(v)) for v in as_json]
        assert not any(key in j for j in again for key in HIT_ONLY)
    assert "uncommitted" in {h.record.origin for h in raw}


def test_snippet_of_record_reads_a_record_as_check_snippet_reads_its_json() -> None:
    full = ChunkRecord(id="c" * 40, repo="/r", path="a.py", branch="main", commit="AB" * 20,
                       commit_date="2026-01-01T00:00:00Z", symbol="f", start_line=3, end_line=5,
                       indexed_at="2026-01-02T00:00:00Z", blob_sha="CD" * 20, text_hash="e" * 40,
                       kind="source", language="python", status="live")
    bare = replace(full, commit="", symbol="", branch="", commit_date="", indexed_at="", status="deleted")
    for rec in (full, bare):
        for text in ("def f():\n    pass\n", "", "x"):
            hit = Hit(rec, 0.5, text)
            assert Snippet.of_record(rec, text) == check_snippet(hit.snippet(), "hit")


def test_context_pack_and_status(repo: Repo, index_dir: Path) -> None:
    idx = built(repo, index_dir)
    pack = idx.context("cancel order", k=3)
    assert pack.markdown.startswith("# Code context") and len(pack.results) == 3
    [row] = idx.status()
    assert row["branch"] == "main" and row["commit"] == repo.head() and row["commits_behind"] == 0


def test_errors_are_codevouch_errors(repo: Repo, index_dir: Path, tmp_path: Path) -> None:
    repo.commit_files(SHOP)
    idx = Index(repo.root, index_dir, embedder="fake-bow-64")
    with pytest.raises(NotIndexed):
        idx.search("x")
    idx.build()
    with pytest.raises(InputError, match="mode"):
        idx.search("x", mode="fuzzy")
    with pytest.raises(InputError, match="kind"):
        idx.search("x", kinds=["prose"])
    with pytest.raises(InputError, match="never downloads"):
        Index(repo.root, index_dir, embedder="no-such-model").build()
    with pytest.raises(codevouch.NotARepository):
        Index(tmp_path / "nowhere", index_dir).status()


def test_the_default_embedder_is_the_packaged_model() -> None:
    # api spells the name itself so that `import codevouch` loads no embedding module
    from codevouch.api import DEFAULT_EMBEDDER
    from codevouch.embedding import MODEL_NAME

    assert DEFAULT_EMBEDDER == MODEL_NAME


def _once(out: dict, code: str | None) -> dict:
    """A validated snippet's JSON as a search hit carries it: each piece of code once."""
    out = _no_input(out)
    if out["current"] is not None:
        out["current"] = {k: v for k, v in out["current"].items() if k != "text"}
    if code is not None and out.get("text") == code:
        del out["text"]
    return out


def _no_text(out: dict) -> dict:
    return {k: v for k, v in _no_input(out).items() if k != "text"}


def _no_input(out: dict) -> dict:
    return {k: v for k, v in out.items() if k not in ("input_index", "input_id")}


def test_a_relative_model_directory_is_the_callers_not_this_process_s(repo: Repo, tmp_path: Path) -> None:
    """A door's Call (the engine's, serving a caller elsewhere): `--embedder m` and
    CODEVOUCH_EMBEDDING_MODEL=~/m2 name the caller's directory and home, not this process's."""
    import os

    from codevouch.call import Call

    caller, home = tmp_path / "caller", tmp_path / "home"
    for model in (caller / "m", home / "m2"):
        model.mkdir(parents=True)
        (model / "config.json").write_text("{}")
    env = {**os.environ, "HOME": str(home)}
    given = Index(repo.root, tmp_path / "index", embedder="m", call=Call.of(env, caller))
    assert given.model_name() == str(caller / "m")
    configured = Index(repo.root, tmp_path / "index",
                       call=Call.of({**env, "CODEVOUCH_EMBEDDING_MODEL": "~/m2"}, caller))
    assert configured.model_name() == f"st:{(home / 'm2').resolve()}"
