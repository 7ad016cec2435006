"""Index builds over real temp git repositories, with the fake embedder for speed."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from codevouch import Index
from codevouch.embedding import FakeEmbedder
from codevouch.errors import DetachedHead, NoCommits, NotARepository
from codevouch.indexer.build import build_index
from codevouch.request import SearchRequest
from codevouch.retriever.search import search
from codevouch.store import Ledger, collection_base, space_name
from codevouch.worktree.identity import identify
from tests.gitrepo import Repo
from tests.storehelp import collection_names, vector_count

ORDERS = '''"""Orders."""
import datetime


class OrderService:
    """Places and cancels orders."""

    def place_order(self, item, quantity):
        """Place an order for an item."""
        return {"item": item, "quantity": quantity, "at": datetime.datetime.now()}

    def cancel_order(self, order_id):
        """Cancel an order that has not shipped yet."""
        if order_id is None:
            raise ValueError("order_id required")
        return {"cancelled": order_id}
'''

BILLING = '''def charge_card(card, amount):
    """Charge a credit card."""
    return card.charge(amount)


def refund_payment(payment):
    """Refund a payment to the customer."""
    return payment.refund()
'''


def build(repo: Repo, index_dir: Path, embedder: FakeEmbedder | None = None, **kw):
    return build_index(repo.root, index_dir, embedder or FakeEmbedder(), **kw)


def live_paths(index_dir: Path, repo: Repo, branch: str = "main") -> set[str]:
    ledger = Ledger(index_dir)
    try:
        base = collection_base(identify(repo.root).id, branch)
        return {p for p, f in ledger.files(base).items() if f.status == "live"}
    finally:
        ledger.close()


def test_first_build_records_six_fields(repo: Repo, index_dir: Path) -> None:
    commit = repo.commit(**{"shop/orders.py": ORDERS, "shop/billing.py": BILLING})
    [s] = build(repo, index_dir)
    assert (s.branch, s.commit, s.files, s.indexed_files) == ("main", commit, 2, 2)
    assert s.chunks >= 2 and s.embedded + s.reused == s.chunks
    hits = search(repo.root, SearchRequest("cancel an order", k=50), index_dir, embedder=FakeEmbedder())
    # The whole class fits the token budget, so it is one chunk named after the class.
    rec = next(h.record for h in hits if h.record.path == "shop/orders.py" and "def cancel_order" in h.text)
    assert "OrderService" in rec.symbol
    assert rec.repo == str(repo.root.resolve()) and rec.path == "shop/orders.py"
    assert rec.branch == "main" and rec.commit == commit and rec.commit_date.startswith("20")
    assert rec.blob_sha == repo.blob(commit, "shop/orders.py")
    assert rec.indexed_at.endswith("Z") and len(rec.text_hash) == 64
    lines = ORDERS.split("\n")
    hit = next(h for h in hits if h.record.id == rec.id)
    assert hit.text == "\n".join(lines[rec.start_line - 1:rec.end_line])
    assert "def cancel_order" in hit.text
    assert (rec.kind, rec.language, rec.status) == ("source", "python", "live")


def test_a_build_is_stamped_when_it_became_readable_not_when_it_began(repo: Repo, index_dir: Path) -> None:
    # A 14-minute build said it was built 14 minutes before anyone could read it.
    repo.commit(**{"shop/orders.py": ORDERS, "shop/billing.py": BILLING})
    now = ["2031-01-01T00:00:00Z"]

    def phase(name: str) -> None:
        if name == "planned":               # chunked; the embedding follows
            now[0] = "2031-01-01T00:02:00Z"
        elif name == "vectors-written":     # embedded and written; the ledger's commit follows
            now[0] = "2031-01-01T00:14:00Z"

    build(repo, index_dir, on_phase=phase, clock=lambda: now[0])
    ledger = Ledger(index_dir)
    try:
        state = ledger.branch(collection_base(identify(repo.root).id, "main"))
    finally:
        ledger.close()
    assert state is not None and state.built_at == "2031-01-01T00:14:00Z"
    hits = search(repo.root, SearchRequest("cancel an order", k=5), index_dir, embedder=FakeEmbedder())
    assert {h.record.indexed_at for h in hits} == {"2031-01-01T00:14:00Z"}
    repo.remove("shop/billing.py")
    repo.commit(message="drop billing")
    now[0] = "2031-01-02T00:00:00Z"
    build(repo, index_dir, clock=lambda: now[0])
    history = search(repo.root, SearchRequest("charge a credit card", k=5, include_history=True), index_dir,
                     embedder=FakeEmbedder())
    gone = [h.record for h in history if h.record.path == "shop/billing.py"]
    assert gone and {r.indexed_at for r in gone} == {"2031-01-01T00:14:00Z"}


def test_noop_rebuild_embeds_nothing(repo: Repo, index_dir: Path) -> None:
    repo.commit(**{"shop/orders.py": ORDERS, "shop/billing.py": BILLING})
    first = build(repo, index_dir)[0]
    fake = FakeEmbedder()
    again = build(repo, index_dir, fake)[0]
    assert again.noop and again.embedded == 0 and fake.texts_embedded == 0
    assert again.chunks == first.chunks


def test_second_branch_embeds_only_changed_chunks(repo: Repo, index_dir: Path) -> None:
    repo.commit(**{"shop/orders.py": ORDERS, "shop/billing.py": BILLING})
    fake = FakeEmbedder()
    main = build(repo, index_dir, fake)[0]
    assert fake.texts_embedded == main.embedded
    repo.git("checkout", "-q", "-b", "feature")
    repo.commit(**{"shop/billing.py": BILLING.replace("return payment.refund()",
                                                      "return payment.refund(reason='customer')")})
    fake2 = FakeEmbedder()
    feature = build(repo, index_dir, fake2, branches=["feature"])[0]
    # Only the changed function's chunk is new; everything else comes from the cache.
    assert feature.embedded == 1 == fake2.texts_embedded
    assert feature.reused == feature.chunks - 1
    assert feature.chunks == main.chunks
    # The branches share one collection: the vectors of both branches, each stored once
    # (billing.py's new blob adds its chunks; orders.py's are shared).
    billing = len([h for h in search(repo.root, SearchRequest("charge refund", k=50, branch="feature"), index_dir,
                                     embedder=FakeEmbedder()) if h.record.path == "shop/billing.py"])
    assert vector_count(index_dir, space_name(identify(repo.root).id, fake.name)) == main.chunks + billing
    # Each branch answers with its own version of the changed file.
    for branch, wanted in (("main", "return payment.refund()"), ("feature", "reason='customer'")):
        hits = search(repo.root, SearchRequest("refund payment", k=50, branch=branch), index_dir, embedder=FakeEmbedder())
        texts = [h.text for h in hits if h.record.path == "shop/billing.py"]
        assert any(wanted in t for t in texts) and all(h.record.branch == branch for h in hits)
        assert all(("reason='customer'" in t) == (branch == "feature") for t in texts if "def refund_payment" in t)


def test_all_branches(repo: Repo, index_dir: Path) -> None:
    repo.commit(**{"a.py": "def a():\n    return 1\n"})
    repo.git("branch", "other")
    summaries = build(repo, index_dir, all_branches=True)
    assert sorted(s.branch for s in summaries) == ["main", "other"]
    assert sum(s.embedded for s in summaries) == 1


def test_incremental_edit_add_delete_rename(repo: Repo, index_dir: Path) -> None:
    repo.commit(**{"shop/orders.py": ORDERS, "shop/billing.py": BILLING,
                   "shop/util.py": "def helper():\n    return 42\n",
                   "shop/old_name.py": "def moved_function():\n    return 'moved'\n"})
    build(repo, index_dir)
    repo.write("shop/billing.py", BILLING + "\n\ndef void_payment(payment):\n    return payment.void()\n")
    repo.write("shop/new.py", "def brand_new():\n    return 'new'\n")
    repo.remove("shop/util.py")
    repo.git("mv", "shop/old_name.py", "shop/new_name.py")
    repo.commit("edit, add, delete, rename")
    fake = FakeEmbedder()
    s = build(repo, index_dir, fake)[0]
    # billing.py (edited), new.py (added), new_name.py (renamed) are read; orders.py is not.
    assert s.indexed_files == 3
    assert s.deleted == 2  # util.py and old_name.py left the branch
    assert live_paths(index_dir, repo) == {"shop/orders.py", "shop/billing.py", "shop/new.py",
                                           "shop/new_name.py"}
    # The renamed file's chunk text is unchanged: its vector is reused, not recomputed.
    texts_embedded = fake.texts_embedded
    assert texts_embedded == s.embedded and s.embedded <= 3


def test_deleted_file_is_history_not_returned_by_default(repo: Repo, index_dir: Path) -> None:
    repo.commit(**{"legacy.py": "def legacy_cancel_handler(order):\n    return order.cancel()\n",
                   "keep.py": "def keep():\n    return 1\n"})
    first = repo.head()
    build(repo, index_dir)
    repo.remove("legacy.py")
    repo.commit("remove legacy")
    build(repo, index_dir)
    default = search(repo.root, SearchRequest("legacy cancel handler", k=10), index_dir, embedder=FakeEmbedder())
    assert all(h.record.path != "legacy.py" for h in default)
    with_history = search(repo.root, SearchRequest("legacy cancel handler", k=10, include_history=True), index_dir,
                          embedder=FakeEmbedder())
    old = next(h for h in with_history if h.record.path == "legacy.py")
    assert old.record.status == "deleted" and old.record.commit == first
    assert "def legacy_cancel_handler" in old.text  # read back from git by blob id


def test_exclusion_rules_default_and_configured(repo: Repo, index_dir: Path) -> None:
    repo.commit(**{
        "app.py": "def main():\n    return 0\n",
        "vendor/lib.py": "def vendored():\n    pass\n",
        "api_pb2.py": "X = 1\n",
        "gen/out.py": "# @generated by a tool\nY = 2\n",
        "custom/made.py": "Z = 3\n",
        "app.py.bak": "old\n",
        "tests/fixtures/data.py": "W = 4\n",
        ".codevouch.toml": 'generated = ["custom/**"]\n',
    })
    s = build(repo, index_dir)[0]
    excluded_rules = " ".join(s.excluded)
    for expected in ("vendor (vendor/)", "generated (*_pb2.py)", "generated (marker:@generated)",
                     "generated (custom/**)", "backup (*.bak)", "fixture (fixtures/)"):
        assert expected in excluded_rules
    assert sum(s.excluded.values()) == 6
    assert live_paths(index_dir, repo) == {"app.py", ".codevouch.toml"}


def test_killed_build_leaves_old_index_and_rerun_finishes(repo: Repo, index_dir: Path) -> None:
    repo.commit(**{"a.py": "def alpha_function():\n    return 'alpha'\n"})
    build(repo, index_dir)
    repo.write("a.py", "def alpha_function():\n    return 'ALPHA changed'\n")
    repo.write("b.py", "def beta_function():\n    return 'beta'\n")
    repo.commit("second")
    for phase in ("planned", "vectors-written", "lexical-staged"):
        def kill(p: str, at: str = phase) -> None:
            if p == at:
                raise KeyboardInterrupt(f"killed at {p}")
        with pytest.raises(KeyboardInterrupt):
            build(repo, index_dir, on_phase=kill)
        hits = search(repo.root, SearchRequest("alpha beta function", k=10), index_dir, embedder=FakeEmbedder())
        assert [h.record.path for h in hits] == ["a.py"]
        assert "'alpha'" in hits[0].text
    s = build(repo, index_dir)[0]
    assert not s.noop and s.indexed_files == 2
    hits = search(repo.root, SearchRequest("alpha beta function", k=10), index_dir, embedder=FakeEmbedder())
    assert sorted(h.record.path for h in hits) == ["a.py", "b.py"]
    assert any("ALPHA changed" in h.text for h in hits)
    # Vectors the killed runs left behind were collected: Chroma holds what the ledger holds.
    assert vector_count(index_dir, space_name(identify(repo.root).id, FakeEmbedder().name)) == s.chunks


def test_unusual_files_are_reported(repo: Repo, index_dir: Path) -> None:
    repo.commit_files({
        "latin.py": "def caf\xe9():\n    return 'd\xe9j\xe0'\n".encode("latin-1"),
        "image.png": b"\x89PNG\r\n\x1a\n\x00\x00binary",
        "empty.py": b"",
        "huge.txt": b"x = 1\n" * 300_000,
        "min.js": b"var a=1;" * 3000,
        "notes.txt": "line\n" * 10,
    })
    s = build(repo, index_dir)[0]
    reasons = {f["path"]: f["reason"] for f in s.skipped_files}
    assert reasons["image.png"] == "binary"
    assert reasons["empty.py"] == "empty"
    assert reasons["huge.txt"].startswith("huge")
    assert reasons["min.js"].startswith("minified")
    assert live_paths(index_dir, repo) == {"latin.py", "notes.txt"}
    hits = search(repo.root, SearchRequest("caf", k=5), index_dir, embedder=FakeEmbedder())
    latin = next(h for h in hits if h.record.path == "latin.py")
    assert "d\xe9j\xe0" in latin.text


def test_no_commits_and_detached_head(tmp_path: Path, index_dir: Path) -> None:
    empty = Repo(tmp_path / "empty")
    with pytest.raises(NoCommits, match="no commits"):
        build(empty, index_dir)
    r = Repo(tmp_path / "r")
    first = r.commit(**{"a.py": "A = 1\n"})
    r.commit(**{"a.py": "A = 2\n"})
    r.checkout("--detach", first)
    with pytest.raises(DetachedHead, match="--branch"):
        build(r, index_dir)
    [s] = build(r, index_dir, branches=["main"])
    assert s.branch == "main"
    with pytest.raises(NotARepository):
        build_index(tmp_path, index_dir, FakeEmbedder())


def test_rules_change_reclassifies_without_reembedding(repo: Repo, index_dir: Path) -> None:
    repo.commit(**{"a.py": "def a():\n    return 1\n", "extra/b.py": "def b():\n    return 2\n"})
    build(repo, index_dir)
    repo.commit(**{".codevouch.toml": 'vendored = ["extra/"]\n'})
    fake = FakeEmbedder()
    s = build(repo, index_dir, fake)[0]
    assert "extra/b.py" not in live_paths(index_dir, repo)
    assert s.embedded == 1  # only the new .codevouch.toml chunk; a.py's vector is cached
    assert json.dumps(s.excluded).count("vendor") == 1


def test_several_repositories_share_one_index(tmp_path: Path, index_dir: Path) -> None:
    one, two = Repo(tmp_path / "one"), Repo(tmp_path / "two")
    one.commit(**{"same.py": "def shared_helper():\n    return 'shared'\n"})
    two.commit(**{"same.py": "def shared_helper():\n    return 'shared'\n",
                  "other.py": "def only_in_two():\n    return 2\n"})
    fake = FakeEmbedder()
    build(one, index_dir, fake)
    s2 = build(two, index_dir, fake)[0]
    assert (s2.embedded, s2.reused) == (1, 1)  # the identical chunk is embedded once for both
    [hit] = search(one.root, SearchRequest("only_in_two", k=5), index_dir, embedder=FakeEmbedder())
    assert hit.record.repo == str(one.root.resolve()) and hit.record.path == "same.py"


def test_lexical_search_splits_identifiers_and_survives_rebuilds(repo: Repo, index_dir: Path) -> None:
    repo.commit(**{"web/orders.js": "export function cancelOrder(id) {\n  return api.post(id);\n}\n",
                   "web/users.js": "export function loadUser(id) {\n  return api.get(id);\n}\n"})
    build(repo, index_dir)
    [hit] = search(repo.root, SearchRequest("cancel orders", k=1, mode="lexical"), index_dir)
    assert hit.record.path == "web/orders.js" and hit.record.symbol == "cancelOrder"
    repo.remove("web/orders.js")
    repo.commit("drop orders")
    build(repo, index_dir)
    hits = search(repo.root, SearchRequest("cancel orders", k=5, mode="lexical"), index_dir)
    assert all(h.record.path != "web/orders.js" for h in hits)
    # Query text is data: FTS syntax in it is quoted, never interpreted.
    assert search(repo.root, SearchRequest('user" OR NEAR(', k=5, mode="lexical"), index_dir)[0].record.path == "web/users.js"


def test_the_embedded_text_carries_the_chunks_path_and_symbol(repo: Repo, index_dir: Path) -> None:
    """Two files of one text get a vector each, and a dense query meets the one whose path it
    names: the text alone says nothing of where it lives (indexer/embedtext.py)."""
    same = "def total(lines):\n    return sum(line.amount for line in lines)\n"
    repo.commit(**{"invoice.py": same, "receipt.py": same})
    [summary] = build(repo, index_dir)
    assert summary.chunks == 2 and summary.embedded == 2
    assert vector_count(index_dir, space_name(identify(repo.root).id, FakeEmbedder.name)) == 2
    for word in ("invoice", "receipt"):
        hits = search(repo.root, SearchRequest(f"{word} total", mode="dense"), index_dir, embedder=FakeEmbedder())
        assert [h.record.path for h in hits] == [f"{word}.py", ({"invoice", "receipt"} - {word}).pop() + ".py"]
        assert hits[0].text == same.rstrip("\n")  # the snippet is the file's text, without the context


def test_a_branch_embedded_without_context_is_read_again_once(repo: Repo, index_dir: Path) -> None:
    """An index made before the embedded text carried path and symbol (embed_context None, as
    older releases embedded) moves to a new space on its next build: every chunk embedded once
    more, the old space gone."""
    from codevouch.retriever.settings import Settings

    repo.commit(**{"shop/orders.py": ORDERS, "shop/billing.py": BILLING})
    older = Settings(embed_context=None)
    [old] = build(repo, index_dir, settings=older)
    assert build(repo, index_dir, settings=older)[0].noop
    assert collection_names(index_dir) == {space_name(identify(repo.root).id, FakeEmbedder.name, None)}
    fake = FakeEmbedder()
    [moved] = build(repo, index_dir, fake)
    assert not moved.noop and moved.indexed_files == 2
    assert moved.embedded == fake.texts_embedded == moved.chunks == old.chunks
    [again] = build(repo, index_dir)
    assert again.noop and again.embedded == 0
    assert collection_names(index_dir) == {space_name(identify(repo.root).id, FakeEmbedder.name)}
    hits = search(repo.root, SearchRequest("cancel order"), index_dir, embedder=FakeEmbedder())
    assert hits[0].record.path == "shop/orders.py" and "def cancel_order" in hits[0].text


def test_every_chunk_is_keyed_by_the_hash_of_the_text_its_vector_was_made_from(repo: Repo,
                                                                                index_dir: Path) -> None:
    """The text the model embeds is made once per chunk: what the embedder got is exactly what
    the records' text_hash names, and it is the chunk's path and symbol above its lines in git."""
    import hashlib

    from codevouch.indexer.embedtext import embedded_text
    from codevouch.retriever.search import chunk_text_of

    class Recording(FakeEmbedder):
        def __init__(self) -> None:
            super().__init__()
            self.seen: dict[str, str] = {}

        def embed(self, texts):
            self.seen.update((hashlib.sha256(t.encode()).hexdigest(), t) for t in texts)
            return super().embed(texts)

    repo.commit(**{"shop/orders.py": ORDERS, "shop/billing.py": BILLING, "README.md": "# Shop\n\nOrders.\n"})
    fake = Recording()
    [summary] = build(repo, index_dir, fake)
    ledger = Ledger(index_dir)
    try:
        state = ledger.branch(collection_base(identify(repo.root).id, "main"))
        assert state is not None
        records = ledger.branch_chunks(state)
    finally:
        ledger.close()
    assert len(records) == summary.chunks > 3
    assert set(fake.seen) == {rec.text_hash for rec in records}
    for rec in records:
        text = chunk_text_of(repo.git("cat-file", "blob", rec.blob_sha).encode(), rec)
        assert fake.seen[rec.text_hash] == embedded_text(rec.path, rec.symbol, text)


def test_the_embedded_text_never_holds_a_lone_surrogate() -> None:
    """A name byte that is not UTF-8 (read with surrogateescape) is written as that byte's
    escape: no tokenizer takes a lone surrogate. UTF-8 names are embedded as they are."""
    from codevouch.indexer.embedtext import embedded_text

    name = os.fsdecode(b"shop/bad\xffname.py")
    text = embedded_text(name, "refund", "def refund():\n    pass", "path-symbol")
    assert text == "shop/bad\\xffname.py\nrefund\ndef refund():\n    pass"
    text.encode("utf-8")                                    # raised UnicodeEncodeError
    assert embedded_text("café/ünï.py", "f", "x", "path") == "café/ünï.py\nx"


def test_a_file_name_that_is_not_utf8_is_skipped_with_a_reason_and_the_build_succeeds(
        repo: Repo, index_dir: Path) -> None:
    # Git allows any bytes but NUL and "/" in a name: this one has a lone 0xff. The ledger keeps
    # names as UTF-8 text, so the build skips the file, says so with the name's bytes escaped,
    # and indexes the rest (it ended in UnicodeEncodeError, exit 70, build after build).
    (repo.root / "billing.py").write_text(BILLING)
    with open(bytes(repo.root) + b"/bad\xff.py", "wb") as handle:
        handle.write(b"def hidden():\n    return 1\n")
    repo.git("add", "-A")
    repo.git("commit", "-q", "-m", "odd name")
    embedder = FakeEmbedder()
    [summary] = build_index(repo.root, index_dir, embedder)
    assert summary.files == 2 and summary.indexed_files == 1 and summary.chunks >= 1
    assert summary.skipped_files == [{"path": "bad\\xff.py",
                                      "reason": "file name is not UTF-8 (not indexed; shown with \\x escapes)"}]
    json.dumps(summary.skipped_files)   # reportable as it is
    # Incremental and no-op builds keep going, and say it again.
    repo.commit(**{"billing.py": BILLING + "\n\ndef refund_card(card):\n    return card.refund()\n"})
    [again] = build_index(repo.root, index_dir, embedder)
    assert not again.noop and again.skipped_files == summary.skipped_files
    [noop] = build_index(repo.root, index_dir, embedder)
    assert noop.noop and noop.skipped_files == summary.skipped_files
    ledger = Ledger(index_dir, readonly=True)
    try:
        assert set(ledger.files(collection_base(identify(repo.root).id, "main"))) == {"billing.py"}
    finally:
        ledger.close()


def _clone(source: Repo, path: Path) -> Repo:
    subprocess.run(["git", "clone", "-q", str(source.root), str(path)], check=True, capture_output=True)
    return Repo(path)


def test_two_clones_on_one_machine_keep_their_own_entries(repo: Repo, tmp_path: Path) -> None:
    # Both clones share the repository's identity (root commit + branch): the last build won, and
    # the first clone's search then named a commit it did not have ("no longer in the repository").
    repo.commit_files({"shop/orders.py": ORDERS})
    first = _clone(repo, tmp_path / "first")
    second = _clone(repo, tmp_path / "second")
    second.commit(**{"shop/billing.py": BILLING})      # a commit only the second clone has
    index_dir = tmp_path / "index"
    embedder = FakeEmbedder()
    [built_first] = build_index(first.root, index_dir, embedder)
    [built_second] = build_index(second.root, index_dir, embedder)
    assert (built_first.commit, built_second.commit) == (first.head(), second.head())
    for clone, commit, paths in ((first, first.head(), {"shop/orders.py"}),
                                 (second, second.head(), {"shop/orders.py", "shop/billing.py"})):
        hits = Index(clone.root, index_dir, embedder="fake-bow-64").search("charge card cancel order", k=10)
        assert {h.record.path for h in hits} == paths
        assert {h.record.commit for h in hits} == {commit}
        assert {h.check.verdict for h in hits if h.check is not None} == {"usable"}
    # A rebuild of each is a no-op on its own entry: neither overwrote the other.
    assert [s.noop for s in build_index(first.root, index_dir, embedder)] == [True]
    assert [s.noop for s in build_index(second.root, index_dir, embedder)] == [True]
    ledger = Ledger(index_dir, readonly=True)
    try:
        rows = {(b.repo, b.commit) for b in ledger.branches()}
    finally:
        ledger.close()
    assert rows == {(str(first.root), first.head()), (str(second.root), second.head())}
    # The first clone's entry is the shared one, as an index built before clones had entries of
    # their own: it keeps working, and a clone that never built reads it (a reader's fallback).
    third = _clone(repo, tmp_path / "third")
    hits = Index(third.root, index_dir, embedder="fake-bow-64").search("cancel order", k=5, validate=False)
    assert {h.record.commit for h in hits} == {first.head()}


def test_a_moved_clone_takes_its_entry_over(repo: Repo, tmp_path: Path) -> None:
    repo.commit_files({"shop/orders.py": ORDERS})
    index_dir = tmp_path / "index"
    embedder = FakeEmbedder()
    build_index(repo.root, index_dir, embedder)
    moved = tmp_path / "moved"
    repo.root.rename(moved)
    [again] = build_index(moved, index_dir, embedder)
    ledger = Ledger(index_dir, readonly=True)
    try:
        assert [(b.repo, b.coll) for b in ledger.branches()] == [
            (str(moved), collection_base(identify(moved).id, "main"))]
    finally:
        ledger.close()
    assert again.commit == Repo(moved).head()


def test_a_nightly_run_builds_a_repository_with_a_name_that_is_not_utf8(repo: Repo, tmp_path: Path) -> None:
    # The nightly run reported the same crash for that repository (and built the others).
    from codevouch.api import build_repos
    from codevouch.indexer.manyrepos import RepoSpec

    (repo.root / "billing.py").write_text(BILLING)
    with open(bytes(repo.root) + b"/caf\xe9.py", "wb") as handle:    # latin-1, as older tools wrote it
        handle.write(b"def legacy():\n    return 2\n")
    repo.git("add", "-A")
    repo.git("commit", "-q", "-m", "latin-1 name")
    other = Repo(tmp_path / "other")
    other.commit_files({"shop/orders.py": ORDERS})
    outcomes = build_repos([RepoSpec(repo.root), RepoSpec(other.root)], tmp_path / "index", FakeEmbedder())
    assert [o.ok for o in outcomes] == [True, True], [o.error for o in outcomes]
    assert outcomes[0].branches[0].skipped_files[0]["path"] == "caf\\xe9.py"


class LightFake(FakeEmbedder):
    """The fake with a light encoder, as the packaged MiniLM has one (its NumPy pass): the same
    vectors, counted apart, so a test sees which one a build chose."""

    def __init__(self) -> None:
        super().__init__()
        self.light_texts = 0

    def embed_light(self, texts):
        self.light_texts += len(texts)
        return [self._one(t) for t in texts]


def test_a_small_build_embeds_without_the_heavy_encoder_as_the_calls_setting_says(repo: Repo,
                                                                                   index_dir: Path) -> None:
    from codevouch.call import Call

    repo.commit_files({"shop/orders.py": ORDERS})
    model = LightFake()
    (first,) = build(repo, index_dir, model, numpy_texts=0)          # 0: always the model's own encoder
    assert first.embedded == model.texts_embedded > 0 and model.light_texts == 0
    repo.commit_files({"shop/billing.py": BILLING})                 # one new chunk
    (small,) = Index(repo.root, index_dir, embedder=model,
                     call=Call.of({**os.environ, "CODEVOUCH_BUILD_NUMPY_TEXTS": "1"}, repo.root)).build()
    assert small.embedded == model.light_texts == 1 and model.texts_embedded == first.embedded
    repo.commit_files({"shop/billing.py": BILLING.replace("card", "account"),
                       "shop/orders.py": ORDERS.replace("order", "purchase")})
    (large,) = Index(repo.root, index_dir, embedder=model,
                     call=Call.of({**os.environ, "CODEVOUCH_BUILD_NUMPY_TEXTS": "1"}, repo.root)).build()
    assert large.embedded >= 2 and model.light_texts == 1
    assert model.texts_embedded == first.embedded + large.embedded
