"""The tantivy copy of the lexical index: kept in step by builds, never trusted when stale."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from codevouch import Index, clear_caches
from codevouch.retriever.lexlists import pairs_of
from codevouch.store import Ledger, collection_base, ledgerlook, lexical, lexindex, space_name
from codevouch.store.lexical import parts
from codevouch.worktree.identity import identify
from tests.gitrepo import Repo

FILES = {
    "shop/orders.py": "def cancel_order(order):\n    return order.cancel()\n",
    "shop/refund.py": "def refund_payment(payment):\n    return payment.refund()\n",
    "docs/orders.md": "# Orders\n\nRefunds go back to the card.\n",
}


def _paths(idx: Index, query: str) -> list[str]:
    return [h.path for h in idx.search(query, k=5, mode="lexical", validate=False)]


def _tantivy(index_dir: Path, repo: Repo, query: str, extra: list[str] | None = None) -> list[str] | None:
    repo_id = identify(repo.root).id
    ledger = Ledger(index_dir)
    try:
        state = ledger.branch(collection_base(repo_id, "main"))
        assert state is not None
        copy = ledger.copy_of(state)
        assert copy is not None
        found = lexindex.search(index_dir, copy, list(dict.fromkeys(lexical.terms(query) + (extra or []))), 5)
        if found is None:
            return None
        records = ledger.branch_members(state, [key for key, _ in found], by="lex_key")
        return [rec.path for key, _ in found for rec in records[key]]
    finally:
        ledger.close()


def test_builds_keep_the_copy_in_step_and_a_stale_copy_is_never_used(repo: Repo, index_dir: Path) -> None:
    repo.commit_files(FILES)
    idx = Index(repo.root, index_dir, embedder="fake-bow-64")
    idx.build()
    assert _tantivy(index_dir, repo, "refunds payment") == ["shop/refund.py", "docs/orders.md"]
    assert _paths(idx, "cancelled orders")[0] == "shop/orders.py"  # stemmed, split identifiers

    # An incremental build: the changed file's old chunk goes, its new one comes.
    repo.commit(**{"shop/orders.py": "def void_order(order):\n    return order.void()\n"})
    idx.build()
    assert _tantivy(index_dir, repo, "void") == ["shop/orders.py"]
    assert _tantivy(index_dir, repo, "cancel") == []

    # A copy that does not match the ledger's state is never read (a search writes it again) ...
    stamp = lexindex.index_path(index_dir, _copy(index_dir)) / lexindex.STAMP
    stamp.write_text("some other state")
    assert _tantivy(index_dir, repo, "void") is None
    assert _paths(idx, "void") == ["shop/orders.py"]
    # ... and the next build, even a no-op one, rebuilds it from the ledger.
    idx.build()
    assert _tantivy(index_dir, repo, "void") == ["shop/orders.py"]
    assert _tantivy(index_dir, repo, "refund") == ["shop/refund.py", "docs/orders.md"]


@pytest.mark.process
def test_a_search_process_sees_a_build_made_by_another_process(repo: Repo, index_dir: Path) -> None:
    # Searches keep their Chroma reader open between calls; a build committed by another
    # process since must still be seen by the next search (the reader is reopened).
    import subprocess
    import sys

    repo.commit_files(FILES)
    idx = Index(repo.root, index_dir, embedder="fake-bow-64")
    idx.build()
    assert "shop/ship.py" not in [h.path for h in idx.search("ship parcel", k=5, mode="dense", validate=False)]
    repo.commit(**{"shop/ship.py": "def ship_parcel(parcel):\n    return parcel.ship()\n"})
    out = subprocess.run([sys.executable, "-m", "codevouch", "index", "build", "--repo", str(repo.root),
                          "--index", str(index_dir), "--embedder", "fake-bow-64"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert [h.path for h in idx.search("ship parcel", k=5, mode="dense", validate=False)][0] == "shop/ship.py"


def test_a_build_killed_around_its_commit_leaves_a_copy_for_whatever_state_readers_see(
        repo: Repo, index_dir: Path) -> None:
    """The copy is written inside the ledger's transaction: a kill just before COMMIT leaves the
    old state with its copy, a kill just after leaves the new state with its copy. Readers never
    fall back to FTS5 (which ranks differently) because of where a build died."""
    import pytest

    from codevouch.embedding import FakeEmbedder
    from codevouch.indexer.build import build_index

    repo.commit_files(FILES)
    idx = Index(repo.root, index_dir, embedder="fake-bow-64")
    idx.build()
    repo.commit(**{"shop/orders.py": "def void_order(order):\n    return order.void()\n"})
    space_root = lexindex.space_dir(index_dir, space_name(identify(repo.root).id, "fake-bow-64"))

    def die_at(at: str):
        def hook(phase: str) -> None:
            if phase == at:
                raise KeyboardInterrupt(phase)
        return hook

    with pytest.raises(KeyboardInterrupt):
        build_index(repo.root, index_dir, FakeEmbedder(), on_phase=die_at("lexical-staged"))
    # Old state (the staged generation is named by no state), answered by its own copy.
    assert _tantivy(index_dir, repo, "cancel") == ["shop/orders.py"]
    assert _tantivy(index_dir, repo, "void") == []
    assert len(list(space_root.iterdir())) == 2      # the current copy and the orphan

    with pytest.raises(KeyboardInterrupt):
        build_index(repo.root, index_dir, FakeEmbedder(), on_phase=die_at("committed"))
    assert _tantivy(index_dir, repo, "void") == ["shop/orders.py"]
    assert _tantivy(index_dir, repo, "cancel") == []

    # The rerun is a no-op for the ledger; it prunes generations no state names any more.
    [summary] = build_index(repo.root, index_dir, FakeEmbedder())
    assert summary.noop
    assert [p.name for p in space_root.iterdir()] == [lexindex.index_path(index_dir, _copy(index_dir)).name]


def _copy(index_dir: Path, branch: str = "main") -> lexindex.Copy:
    """The branch's tantivy copy as the ledger names it now."""
    ledger = Ledger(index_dir, readonly=True)
    try:
        copy = ledger.copy_of(next(s for s in ledger.branches() if s.branch == branch))
    finally:
        ledger.close()
    assert copy is not None
    return copy


def test_adjacent_query_words_meet_a_camel_case_identifier_as_a_unit(repo: Repo, index_dir: Path) -> None:
    assert lexical.parts("Return the HTTPClient's cookie_jar") == ["return", "http", "client", "s", "cookie", "jar"]
    # Both files hold "cookie" and "jar" equally often; only one names the thing.
    repo.commit_files({
        "web/jar.js": "class CookieJar {\n  clear() { return 0; }\n}\n",
        "web/misc.js": "function bake(cookie) {\n  const jar = open(cookie);\n  return jar;\n}\n"
                       "// cookie jar\n",
    })
    Index(repo.root, index_dir, embedder="fake-bow-64").build()
    assert _tantivy(index_dir, repo, "the cookie jar") == ["web/misc.js", "web/jar.js"]
    assert pairs_of(parts("the cookie jar")) == ["cookiejar"]  # what a hybrid search adds
    assert _tantivy(index_dir, repo, "the cookie jar", pairs_of(parts("the cookie jar"))) == ["web/jar.js", "web/misc.js"]


def test_a_lexical_half_searches_the_copy_once_and_writes_it_again_when_it_cannot(
        repo: Repo, index_dir: Path, monkeypatch) -> None:
    """One tantivy search per lexical half (no probe before the real one); a copy that is
    missing or cannot be opened is written again from the ledger's rows and answers, with the
    same hits: the ledger's FTS5 table never ranks."""
    repo.commit_files(FILES)
    idx = Index(repo.root, index_dir, embedder="fake-bow-64")
    idx.build()
    tantivy_calls: list[bool] = []   # whether each search of the copy answered
    fts5_calls: list[str] = []
    real_search, real_fts5 = lexindex.search, Ledger.lexical_search

    def counted_search(*args, **kwargs):
        found = real_search(*args, **kwargs)
        tantivy_calls.append(found is not None)
        return found

    def counted_fts5(self, state, match, n):
        fts5_calls.append(match)
        return real_fts5(self, state, match, n)

    monkeypatch.setattr(lexindex, "search", counted_search)
    monkeypatch.setattr(Ledger, "lexical_search", counted_fts5)

    def searched(query: str, mode: str) -> tuple[list[str], list[bool], list[str]]:
        tantivy_calls.clear()
        fts5_calls.clear()
        paths = [h.path for h in idx.search(query, k=5, mode=mode, validate=False)]
        return paths, list(tantivy_calls), list(fts5_calls)

    fresh = {mode: searched("refunds payment", mode) for mode in ("lexical", "hybrid")}
    assert fresh["lexical"] == (["shop/refund.py", "docs/orders.md"], [True], [])
    assert fresh["hybrid"][1:] == ([True], [])

    space = space_name(identify(repo.root).id, "fake-bow-64")
    copy = lexindex.index_path(index_dir, _copy(index_dir))
    shutil.rmtree(lexindex.space_dir(index_dir, space))          # missing: written by the search
    assert searched("refunds payment", "lexical") == (fresh["lexical"][0], [False, True], [])
    assert lexindex.read_stamp(copy) == _copy(index_dir).stamp
    assert searched("refunds payment", "hybrid")[1:] == ([True], [])

    (copy / "meta.json").write_text("not json")                  # stamped right, cannot be opened
    assert searched("refunds payment", "lexical") == (fresh["lexical"][0], [False, True], [])
    assert searched("refunds payment", "lexical")[1:] == ([True], [])


def test_a_copy_that_cannot_be_written_is_made_in_memory(repo: Repo, index_dir: Path, monkeypatch) -> None:
    """An index directory a reader cannot write (a read-only mount): the lost copy is made in
    this process's memory from the ledger's rows, and answers as the written one did."""
    repo.commit_files(FILES)
    idx = Index(repo.root, index_dir, embedder="fake-bow-64")
    idx.build()
    before = [h.path for h in idx.search("refunds payment", k=5, mode="lexical", validate=False)]
    space = space_name(identify(repo.root).id, "fake-bow-64")
    shutil.rmtree(lexindex.space_dir(index_dir, space))

    def unwritable(*args, **kwargs):
        raise PermissionError("read-only file system")
    monkeypatch.setattr(lexindex, "stage", unwritable)
    assert [h.path for h in idx.search("refunds payment", k=5, mode="lexical", validate=False)] == before
    assert not lexindex.space_dir(index_dir, space).exists()
    assert lexindex.index_path(index_dir, _copy(index_dir)) in lexindex._memory


def test_ensure_leaves_a_copy_that_opens_as_it_is(repo: Repo, index_dir: Path) -> None:
    """An upgrade calls ensure for every stamped space: a copy that is already the state's and
    opens is kept (the same files), and one that does not open is written again."""
    repo.commit_files(FILES)
    idx = Index(repo.root, index_dir, embedder="fake-bow-64")
    idx.build()
    copy = _copy(index_dir)
    path = lexindex.index_path(index_dir, copy)
    before = {p.name: p.stat().st_ino for p in path.iterdir()}
    ledger = Ledger(index_dir)
    try:
        assert lexindex.ensure(index_dir, copy, lambda: ledger.lexical_docs(copy.space, copy.coll))
        assert {p.name: p.stat().st_ino for p in path.iterdir()} == before
        clear_caches()     # the damaged copy is opened anew, as a new process would
        for meta in path.glob("meta.json"):
            meta.write_text("not json")
        assert lexindex.ensure(index_dir, copy, lambda: ledger.lexical_docs(copy.space, copy.coll))
        assert (path / "meta.json").read_text() != "not json"
    finally:
        ledger.close()
    assert _paths(idx, "refunds payment")[0] == "shop/refund.py"


def _ranked(index_dir: Path, query: str) -> list[tuple[str, float]] | None:
    return lexindex.search(index_dir, _copy(index_dir), lexical.terms(query), 10, name_boost=0.5, exact_boost=0.3)


def _named(index_dir: Path, name: str, query: str) -> list[tuple[str, float]] | None:
    return lexindex.search_names(index_dir, _copy(index_dir), lexical.query_name_keys(name), 10, lexical.terms(query))


def test_an_incremental_build_ranks_as_a_clean_build_of_the_same_commit(repo: Repo, tmp_path: Path) -> None:
    """Built at A and then at B, or built at B at once: the same commit, the same rankings and
    scores, though B deleted, replaced and renamed files. The files gone from the branch stay in
    the index as history (validation and --include-history need them), but the lexical copy
    holds the branch's live chunks only: their terms counted in BM25's statistics before."""
    first = {f"shop/mod{n}.py": f"def handle_order_{n}(order):\n    return order.total * {n} + refund({n})\n"
             for n in range(8)}
    repo.commit_files({**FILES, **first})
    incremental, clean = tmp_path / "incremental", tmp_path / "clean"
    Index(repo.root, incremental, embedder="fake-bow-64").build()
    changed = {f"shop/mod{n}.py": f"def cancel_order_{n}(order):\n    refund(order)\n    return order.cancel()\n"
               for n in range(3)}
    repo.remove("shop/mod5.py")                                   # deleted
    repo.remove("shop/mod6.py")                                   # renamed, unchanged
    repo.write("shop/orders_six.py", first["shop/mod6.py"])
    repo.commit_files({**changed, "shop/extra.py": "def refund_order(order):\n    return order.refund()\n",
                       # replaced: another body and another definition
                       "shop/refund.py": "def refund_card(card, total):\n    return card.credit(total)\n"})
    Index(repo.root, incremental, embedder="fake-bow-64").build()
    clear_caches()
    Index(repo.root, clean, embedder="fake-bow-64").build()
    ledger = Ledger(incremental, readonly=True)
    try:
        [state] = ledger.branches()
        assert ledger.chunk_counts(state.coll, "deleted")      # the old files are history there
    finally:
        ledger.close()
    queries = ["cancel order", "refund payment", "order total", "handle order", "refund", "refund card credit"]
    for query in queries:
        got, want = _ranked(incremental, query), _ranked(clean, query)
        assert want, query
        assert got == want, query
    for name, query in [("handle_order_6", "order total"), ("refund_order", ""), ("cancel_order_1", "refund")]:
        got, want = _named(incremental, name, query), _named(clean, name, query)
        assert want, name
        assert got == want, name
    inc, cln = Index(repo.root, incremental, embedder="fake-bow-64"), Index(repo.root, clean, embedder="fake-bow-64")
    for query in queries:
        assert ([(h.path, h.score) for h in inc.search(query, k=10, mode="lexical", validate=False)]
                == [(h.path, h.score) for h in cln.search(query, k=10, mode="lexical", validate=False)]), query
    # History is still found, by the dense half, when asked for.
    assert "shop/mod5.py" in [h.path for h in inc.search("handle order 5", k=20, mode="hybrid", include_history=True,
                                                          validate=False)]


def test_a_branch_ranks_with_its_own_live_documents_only(repo: Repo, tmp_path: Path) -> None:
    """Another branch in the same space changes nothing of a branch's rankings, and a build of
    one branch keeps the other's copy (it is not written again by the next search)."""
    repo.commit_files(FILES)
    shared, alone = tmp_path / "shared", tmp_path / "alone"
    Index(repo.root, alone, embedder="fake-bow-64").build()
    repo.git("branch", "feature")
    repo.commit_files({"shop/refund.py": "def refund_payment(payment):\n    return payment.refund(payment)\n"})
    repo.git("checkout", "-q", "feature")
    repo.commit_files({f"shop/refund{n}.py": f"def refund_{n}(payment):\n    return refund(payment, {n})\n"
                       for n in range(6)})
    idx = Index(repo.root, shared, embedder="fake-bow-64")
    idx.build(branches=["main", "feature"])
    Index(repo.root, alone, embedder="fake-bow-64").build(branches=["main"])
    for query in ["refund payment", "cancel order", "orders refunds card"]:
        want = _ranked(alone, query)
        assert want, query
        assert _ranked(shared, query) == want, query
    feature, main = _copy(shared, "feature"), _copy(shared)
    repo.git("checkout", "-q", "main")
    repo.commit_files({"shop/ship.py": "def ship(order):\n    return order\n"})
    idx.build(branches=["main"])
    assert lexindex.read_stamp(lexindex.index_path(shared, feature)) == feature.stamp
    assert _copy(shared, "feature") == feature
    # main's copy, its previous one (a reader may still be opening it) and feature's
    assert {p.name for p in lexindex.space_dir(shared, feature.space).iterdir()} == {
        lexindex.index_path(shared, c).name for c in (_copy(shared), main, feature)}


def test_documents_that_tie_at_the_last_place_are_cut_by_key(tmp_path: Path) -> None:
    """tantivy keeps, of the documents tied at the n-th place, those it meets first: in the order
    builds added them (here in one segment, against key order). The copy answers the smallest
    keys, as a clean build's would."""
    docs = [(f"k{n}", "refund order", "") for n in reversed(range(10))]
    copy = lexindex.Copy("space", "branch", "one")
    lexindex.stage(tmp_path, copy, None, (), (), lambda keys: docs)
    found = lexindex.search(tmp_path, copy, ["refund"], 3)
    assert found is not None
    assert [key for key, _ in found] == ["k0", "k1", "k2"]
    assert len({score for _, score in found}) == 1


def test_ties_are_cut_by_key_where_keys_share_their_first_bytes(tmp_path: Path) -> None:
    """The cut reads a number made of a key's first 8 bytes (`order`), and the keys themselves
    only where those numbers tie: keys that share a long prefix (`samepref-…`) and keys that do
    not must both come out in key order, across two scores, at every cut."""
    keys = [f"samepref-{n:03d}" for n in range(60)] + [f"k{n:02d}" for n in range(40)] + ["samepref"]
    order = sorted(keys, key=lambda key: hash(key) % 997)     # added in no useful order
    docs = [(key, "refund refund order" if key.endswith(("7", "3")) else "refund order", "") for key in order]
    copy = lexindex.Copy("space", "branch", "one")
    lexindex.stage(tmp_path, copy, None, (), (), lambda _keys: docs)
    everything = lexindex.search(tmp_path, copy, ["refund"], len(keys))
    assert everything is not None and len(everything) == len(keys)
    scores = dict(everything)
    assert len(set(scores.values())) == 2          # two runs of ties
    want = sorted(keys, key=lambda key: (-scores[key], key))
    assert [key for key, _ in everything] == want
    for n in (1, 5, 20, 33, 59, 61, 100):
        found = lexindex.search(tmp_path, copy, ["refund"], n)
        assert found is not None
        assert [key for key, _ in found] == want[:n], n


def test_order_numbers_sort_as_keys_do() -> None:
    keys = ["", "a", "a\0", "ab", "abcdefgh", "abcdefghZ", "abcdefgi", "é", "\U0001f600", "ff" * 20]
    for a in keys:
        for b in keys:
            if a < b:
                assert lexindex.order_of(a) <= lexindex.order_of(b), (a, b)


def test_a_document_names_what_its_chunk_defines_and_ranks_by_its_terms_alone() -> None:
    """A class kept whole names its keyword-less members after the terms (Chunk.defines, from the
    chunker's parse with real grammars): the name keys hold them, the terms a ranking counts do
    not; a name that could not be one token is left out, and no names add nothing."""
    cls = ("export class Store {\n  get value() {\n    return this.items;\n  }\n"
           "  flush() {\n    this.items = [];\n  }\n}\n")
    doc = lexical.document(cls, "src/store.js", "Store", ("Store", "Store.value", "Store.flush", "a, b", "c d"))
    terms, names = lexical.split(doc)
    assert names == ["Store", "Store.value", "Store.flush"]
    assert terms == " ".join(lexical.terms("src store js") + lexical.terms("Store") + lexical.terms(cls))
    keys = lexical.definition_keys(doc, "Store")
    assert {"value", "store.value", "flush", "store.flush"} <= set(keys)
    assert "value" not in lexical.definition_keys(terms, "Store")      # the words alone do not say it
    assert lexical.document(cls, "src/store.js", "Store") == terms


def test_a_names_own_words_leave_its_containers_out() -> None:
    """`ownwords`: each defined name's words without its container's; `namewords`: with them."""
    assert lexical.own_name_words("OrderService.cancel_order") == "cancel order"
    assert lexical.name_words("OrderService.cancel_order") == "order service cancel order"
    assert lexical.own_name_words("OrderService, OrderService.place_order") == "order service place order"
    assert lexical.own_name_words("crate::routing::Router") == "router"
    assert lexical.own_name_words("<module>") == ""


def test_a_warm_reader_sees_a_copy_another_process_wrote_again_in_its_place(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A reader keeps a copy's stamp and its tantivy commit by the stat data they were read under
    (RACY_NS 0: files written a moment ago count as settled, as they are for a warm engine). A
    copy written again whole by another process (`ensure` of a damaged one) is a new directory, so
    new stat data: the reader searches what is there now; a copy whose stamp went missing, None.
    The writer is another interpreter because `stage` in this process drops this process's open
    copy itself: only another process leaves a warm reader holding the old one."""
    import subprocess
    import sys

    monkeypatch.setattr(ledgerlook, "RACY_NS", 0)
    copy = lexindex.Copy("space", "branch", "one")
    lexindex.stage(tmp_path, copy, None, (), (), lambda keys: [("k1", "refund order", "")])
    assert [k for k, _ in lexindex.search(tmp_path, copy, ["refund"], 3) or []] == ["k1"]
    assert [k for k, _ in lexindex.search(tmp_path, copy, ["refund"], 3) or []] == ["k1"]     # kept
    subprocess.run([sys.executable, "-c", "import sys; from pathlib import Path; from codevouch.store import lexindex; "
                    "lexindex.stage(Path(sys.argv[1]), lexindex.Copy('space', 'branch', 'one'), None, (), (), "
                    "lambda keys: [('k2', 'refund order', ''), ('k3', 'refund', '')], rewrite=True)", str(tmp_path)],
                   check=True)
    assert sorted(k for k, _ in lexindex.search(tmp_path, copy, ["refund"], 3) or []) == ["k2", "k3"]
    (lexindex.index_path(tmp_path, copy) / lexindex.STAMP).unlink()
    assert lexindex.search(tmp_path, copy, ["refund"], 3) is None
