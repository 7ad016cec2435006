"""Index format migrations: an index built by the previous release opens and upgrades in place."""
from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from codevouch.api import Index
from codevouch.errors import BadIndex, NotIndexed
from codevouch.store import Ledger, migrations
from tests.gitrepo import Repo
from tests.storehelp import collection_names, vector_count

# Each older release's codevouch/ package as `git archive` wrote it (codevouch_bench.make_old_index,
# in bench/, says how to add one): the tests run the real old code with no need for this repository's history.
RELEASES = Path(__file__).resolve().parent / "releases"
# The last commit before the migrations framework: its ledger has meta.schema = 1 and no
# _migrations table, and it refused any other schema number with "build a new index".
PREVIOUS_RELEASE = "8e82e01f4385958aa9ec9841e24d038e1e046d63"
# The last commit before m004: branches share a space whose vectors are keyed by chunk id.
CHUNK_KEYED_RELEASE = "5d35eb8c94b7a6a7b35f7c0422980520d23b8bd2"

SHOP = {
    "shop/cancel.py": "def cancel_order(order):\n    order.cancel()\n    return order\n",
    "shop/refund.py": "def refund_order(order):\n    return order.refund()\n",
    "docs/orders.md": "# Orders\n\nTo cancel an order, call cancel order.\n",
}


def old_index(repo: Repo, index_dir: Path, release: str = PREVIOUS_RELEASE) -> None:
    """Build the repository's current branch into `index_dir` with an older release."""
    archive = RELEASES / f"{release}.tar.xz"
    assert archive.is_file(), f"{archive} is missing: the release's package, made as codevouch_bench.make_old_index says"
    subprocess.run([sys.executable, "-m", "codevouch_bench.make_old_index", release,
                    str(repo.root), str(index_dir), "--archive", str(archive)], check=True)


def tables(index_dir: Path) -> set[str]:
    db = sqlite3.connect(index_dir / "state.sqlite")
    try:
        return {n for (n,) in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    finally:
        db.close()


def outdated_rows(index_dir: Path) -> list[tuple[str, str, str]]:
    db = sqlite3.connect(index_dir / "state.sqlite")
    try:
        return sorted(db.execute("SELECT coll, layout, collections FROM outdated"))
    finally:
        db.close()


def schema_of(index_dir: Path) -> tuple[str, list[str]]:
    db = sqlite3.connect(index_dir / "state.sqlite")
    try:
        schema = db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()[0]
        has = db.execute("SELECT 1 FROM sqlite_master WHERE name='_migrations'").fetchone()
        names = [n for (n,) in db.execute("SELECT name FROM _migrations ORDER BY rowid")] if has else []
        return schema, names
    finally:
        db.close()


@pytest.mark.process
def test_previous_release_index_upgrades_in_place(repo: Repo, index_dir: Path) -> None:
    repo.commit_files(SHOP)
    old_index(repo, index_dir)
    assert schema_of(index_dir) == ("1", [])
    # Read before any upgrade, straight from the old ledger, to compare with after.
    raw = sqlite3.connect(index_dir / "state.sqlite")
    old_ids = sorted(i for (i,) in raw.execute("SELECT id FROM chunks"))
    raw.close()

    idx = Index(repo.root, index_dir, embedder="fake-bow-64")
    # A read opens it and upgrades it in place (the previous release's data is kept as is).
    [row] = idx.status()
    assert row["branch"] == "main" and sum(row["chunks_by_kind"].values()) == len(old_ids)
    assert schema_of(index_dir) == ("2", [m.name for m in migrations.MIGRATIONS])
    # m005: the branch is listed with the collections its build drops; the older layout's rows are gone.
    raw = sqlite3.connect(index_dir / "state.sqlite")
    [(coll,)] = raw.execute("SELECT coll FROM branches").fetchall()
    assert raw.execute("SELECT count(*) FROM lexmap").fetchone()[0] == 0
    raw.close()
    assert outdated_rows(index_dir) == [(coll, "per-branch", f'["{coll}-live", "{coll}-hist"]')]
    assert collection_names(index_dir) == {f"{coll}-live"}  # no history yet: no -hist collection
    assert not {"chunks", "shared_chunks"} & tables(index_dir)
    # Intentional change (m003, shared vectors): the old release kept a Chroma collection per
    # branch, which a ledger migration cannot move. The branch is marked, a search says what
    # to do, and one build moves it. Intentional change (indexer/embedtext.py): the embedded text
    # now carries each chunk's path and symbol, so that build embeds each chunk once more.
    assert row["needs_rebuild"] is True
    with pytest.raises(NotIndexed, match="older codevouch.*embeds each chunk once more"):
        idx.search("cancel order", k=3, mode="dense")
    [summary] = idx.build()
    assert not summary.noop and summary.embedded == summary.chunks == len(old_ids)  # all texts differ here
    [row] = idx.status()
    assert row["needs_rebuild"] is False
    hits = idx.search("cancel order", k=3, mode="dense")
    assert hits and hits[0].path == "shop/cancel.py" and hits[0].verdict == "usable"
    assert {h.record.id for h in idx.search("cancel order", k=10)} <= set(old_ids)
    # The old per-branch collections and rows are gone.
    raw = sqlite3.connect(index_dir / "state.sqlite")
    assert raw.execute("SELECT count(*) FROM branches WHERE space IS NULL").fetchone()[0] == 0
    assert raw.execute("SELECT count(*) FROM files WHERE coll=?", (coll,)).fetchone()[0] == 0
    raw.close()
    assert outdated_rows(index_dir) == []
    names = collection_names(index_dir)
    assert not any(n.endswith(("-live", "-hist")) for n in names) and len(names) == 1
    # The next build finds the branch up to date and embeds nothing.
    [summary] = idx.build()
    assert summary.noop and summary.embedded == 0
    repo.commit(**{"shop/refund.py": "def refund_order(order, amount):\n    return order.refund(amount)\n"})
    [summary] = idx.build()
    assert summary.indexed_files == 1 and not summary.noop


@pytest.mark.process
def test_space_keyed_by_chunk_id_moves_once(repo: Repo, index_dir: Path) -> None:
    """m004: a space of the release before (a vector per chunk) reads as needing a build; each
    branch's build moves it, and the old space goes with the last. Intentional change
    (indexer/embedtext.py): the embedded text now carries each chunk's path and symbol, so the
    move embeds each distinct text once more (it came from the cache before)."""
    repo.commit_files(SHOP)
    repo.git("checkout", "-q", "-b", "topic")
    repo.commit(**{"shop/refund.py": "def refund_order(order, amount):\n    return order.refund(amount)\n"})
    old_index(repo, index_dir, CHUNK_KEYED_RELEASE)
    repo.git("checkout", "-q", "main")
    old_index(repo, index_dir, CHUNK_KEYED_RELEASE)
    raw = sqlite3.connect(index_dir / "state.sqlite")
    old_ids = {i for (i,) in raw.execute("SELECT id FROM shared_chunks")}
    [old_space] = {s for (s,) in raw.execute("SELECT space FROM branches")}
    raw.close()
    assert old_ids and collection_names(index_dir) == {old_space}

    idx = Index(repo.root, index_dir, embedder="fake-bow-64")
    assert [r["needs_rebuild"] for r in idx.status()] == [True, True]
    # m005: both branches are listed; the space goes with the last of them, not with either.
    assert [(layout, names) for _, layout, names in outdated_rows(index_dir)] == [("per-chunk", "[]")] * 2
    assert not {"chunks", "shared_chunks"} & tables(index_dir)
    with pytest.raises(NotIndexed, match="older codevouch.*embeds each chunk once more"):
        idx.search("cancel order", k=3)
    [summary] = idx.build()
    assert not summary.noop and summary.embedded == summary.chunks  # all texts differ here
    hits = idx.search("cancel order", k=3)
    assert hits[0].path == "shop/cancel.py" and hits[0].verdict == "usable"
    assert {h.record.id for h in idx.search("order", k=10)} <= old_ids  # same chunk identities
    # topic still lives in the old space, which stays until its last branch has moved.
    assert old_space in collection_names(index_dir)
    with pytest.raises(NotIndexed, match="older codevouch"):
        idx.search("refund", k=3, branch="topic")
    [summary] = idx.build(branches=["topic"])
    assert summary.embedded == 1  # refund.py; the files topic shares with main were moved with main
    hits = idx.search("refund amount", k=3, branch="topic", mode="lexical")
    assert hits[0].path == "shop/refund.py" and "amount" in hits[0].text
    [new_space] = collection_names(index_dir)
    assert new_space != old_space and not (index_dir / "lexical" / old_space).exists()
    assert outdated_rows(index_dir) == []
    raw = sqlite3.connect(index_dir / "state.sqlite")
    assert raw.execute("SELECT count(*) FROM lexmap WHERE coll=?", (old_space,)).fetchone()[0] == 0
    texts = raw.execute("SELECT count(*) FROM space_texts").fetchone()[0]
    raw.close()
    assert vector_count(index_dir, new_space) == texts == len(old_ids)  # all texts differ here
    assert all(r["needs_rebuild"] is False for r in idx.status())


def test_fresh_ledger_has_every_migration_and_reopens_without_changes(index_dir: Path) -> None:
    Ledger(index_dir).close()
    assert schema_of(index_dir) == ("2", [m.name for m in migrations.MIGRATIONS])
    db = sqlite3.connect(index_dir / "state.sqlite")
    assert migrations.pending(db) == [] and migrations.migrate(db) == []
    db.close()


def test_index_from_a_newer_release_is_refused(index_dir: Path) -> None:
    Ledger(index_dir).close()
    db = sqlite3.connect(index_dir / "state.sqlite")
    db.execute("INSERT INTO _migrations VALUES ('m999_from_the_future', '2030-01-01T00:00:00Z')")
    db.commit()
    db.close()
    for readonly in (False, True):
        with pytest.raises(BadIndex, match="newer codevouch"):
            Ledger(index_dir, readonly=readonly)


def test_a_failing_migration_leaves_the_ledger_as_it_was(index_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    Ledger(index_dir).close()

    def m900_broken(db: sqlite3.Connection) -> None:
        db.execute("CREATE TABLE half_done (x)")
        raise RuntimeError("boom")

    monkeypatch.setattr(migrations, "MIGRATIONS", [*migrations.MIGRATIONS, migrations.Migration("m900", m900_broken)])
    with pytest.raises(RuntimeError):
        Ledger(index_dir)
    db = sqlite3.connect(index_dir / "state.sqlite")
    assert db.execute("SELECT 1 FROM sqlite_master WHERE name='half_done'").fetchone() is None
    assert "m900" not in [n for (n,) in db.execute("SELECT name FROM _migrations")]
    db.close()


def test_an_index_without_lexical_copies_gets_them_from_the_upgrade_and_fts5_never_ranks(
        repo: Repo, index_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """m006: an index as a release before the tantivy copy left it (FTS5 rows, no lexical stamps,
    no lexical/ directory) is stamped by the upgrade, which writes each space's copy; searches
    rank with the copy, even with the ledger's FTS5 table emptied, and never call FTS5."""
    import shutil

    from codevouch.store import IndexDir, lexindex

    repo.commit_files(SHOP)
    idx = Index(repo.root, index_dir, embedder="fake-bow-64", record=False)
    idx.build()
    fresh = [(h.path, h.symbol) for h in idx.search("cancel order", k=5, mode="lexical", validate=False)]
    assert fresh and fresh[0][0] == "shop/cancel.py"
    raw = sqlite3.connect(index_dir / "state.sqlite")
    with raw:
        raw.execute("DELETE FROM meta WHERE key LIKE 'lexical%'")
        raw.execute("DELETE FROM _migrations WHERE name = ?", (migrations.LEXICAL_COPIES,))
    raw.close()
    shutil.rmtree(IndexDir(index_dir).lexical)
    lexindex._open.clear()

    def no_fts5(*args: object, **kwargs: object) -> None:
        raise AssertionError("FTS5 ranked a search")
    monkeypatch.setattr(Ledger, "lexical_search", no_fts5)

    ledger = Ledger(index_dir, readonly=True)            # a reader's open upgrades it in place
    try:
        [state] = ledger.branches()
        assert state.space is not None
        stamp = ledger.lexical_stamp(state.space)
        copy = ledger.copy_of(state)
    finally:
        ledger.close()
    assert stamp is not None and stamp.startswith("m006 ")
    assert copy is not None and copy.stamp == stamp     # a branch stamped by no build: its space's
    assert lexindex.read_stamp(lexindex.index_path(index_dir, copy)) == stamp
    # (The step applied again comes after those the index already had, later ones included.)
    assert sorted(schema_of(index_dir)[1]) == sorted(m.name for m in migrations.MIGRATIONS)
    raw = sqlite3.connect(index_dir / "state.sqlite")
    with raw:
        raw.execute("DELETE FROM lexicon")                # the FTS5 rows: nothing left to rank with
    raw.close()
    assert [(h.path, h.symbol) for h in idx.search("cancel order", k=5, mode="lexical", validate=False)] == fresh
    assert idx.search("cancel order", k=5, validate=False)[0].path == "shop/cancel.py"   # hybrid


def test_an_index_built_before_chunks_said_they_declare_opens_and_says_so_after_its_next_build(
        repo: Repo, index_dir: Path) -> None:
    """m008: chunk rows without a `declaration` column (as every release before it wrote them) are
    upgraded by the reader that opens them: the search answers, every chunk a body as before; a
    build that reads a changed file marks its declarations."""
    repo.commit_files({"src/hooks.ts": "export interface Hooks {\n  beforeRequest?: Hook[]\n}\n",
                       "src/ky.ts": "export function run(hooks: Hooks) {\n  return hooks.beforeRequest\n}\n"})
    idx = Index(repo.root, index_dir, embedder="fake-bow-64", record=False)
    idx.build()
    raw = sqlite3.connect(index_dir / "state.sqlite")
    with raw:
        raw.execute("ALTER TABLE space_chunks DROP COLUMN declaration")
        raw.execute("DELETE FROM _migrations WHERE name = 'm008_chunks_say_whether_they_only_declare'")
    raw.close()
    hits = idx.search("Hooks", k=5, validate=False)        # the reader's open upgrades it in place
    assert schema_of(index_dir) == ("2", [m.name for m in migrations.MIGRATIONS])
    assert hits[0].path == "src/hooks.ts" and not any(h.record.declaration for h in hits)
    repo.commit(**{"src/hooks.ts": "export interface Hooks {\n  beforeRequest?: Hook[]\n  afterResponse?: Hook[]\n}\n"})
    idx.build()
    hits = idx.search("Hooks", k=5, validate=False)
    assert {h.path: h.record.declaration for h in hits} == {"src/hooks.ts": True, "src/ky.ts": False}
