"""The ledger (store/ledger.py) on a real SQLite file: what one commit makes visible, what
branches share, what garbage collection removes, and what a failed commit leaves."""
from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator, Sequence
from dataclasses import astuple, replace
from pathlib import Path

import pytest

from codevouch.errors import BadIndex, NotIndexed
from codevouch.store import BuildChange, Ledger, Outdated, lex_key
from codevouch.store.naming import collection_base
from tests.storehelp import MODEL, SPACE, branch_state, file_change, text_hash

ORDERS = ["def cancel_order(order):\n    return order.cancel()\n", "def ship_order(order):\n    return order.ship()\n"]
REFUND = ["def refund_payment(payment):\n    return payment.refund()\n"]


@pytest.fixture
def ledger(index_dir: Path) -> Iterator[Ledger]:
    led = Ledger(index_dir)
    yield led
    led.close()


def test_a_commit_makes_the_branch_and_its_chunks_visible(ledger: Ledger) -> None:
    state = branch_state("main")
    assert ledger.branch(state.coll) is None
    ledger.commit(file_change(state, {("shop/orders.py", "b1"): ORDERS, ("shop/refund.py", "b2"): REFUND}))
    assert ledger.branch(state.coll) == state and ledger.branches() == [state]
    assert set(ledger.files(state.coll)) == {"shop/orders.py", "shop/refund.py"}
    chunks = ledger.branch_chunks(state)
    assert [(c.path, c.start_line, c.branch, c.commit) for c in chunks] == [
        ("shop/orders.py", 1, "main", "c0ffee"), ("shop/orders.py", 2, "main", "c0ffee"),
        ("shop/refund.py", 1, "main", "c0ffee")]
    assert ledger.branch_size(state.coll) == 3 and ledger.space_size(SPACE) == 3
    assert ledger.chunk_counts(state.coll) == {"source": 3}
    hashes = [text_hash(t) for t in ORDERS]
    assert ledger.space_texts(SPACE, [*hashes, "absent"]) == set(hashes)
    members = ledger.branch_members(state, [hashes[1]])
    assert [r.symbol for r in members[hashes[1]]] == ["sym1"]
    [(hit, score)] = ledger.lexical_search(state, '"refund"', 5)
    assert hit.path == "shop/refund.py" and score > 0
    key = lex_key(hit.path, hit.symbol, hit.text_hash)
    assert ledger.branch_members(state, [key], by="lex_key")[key] == [hit]


def test_builds_say_what_each_branch_was_built_from_and_when(ledger: Ledger) -> None:
    # What a search's open reader is checked against (one per repository of a search across them).
    main, topic = branch_state("main"), branch_state("topic", commit="beef")
    ledger.commit(file_change(main, {("shop/orders.py", "b1"): ORDERS}))
    ledger.commit(file_change(topic, {("shop/orders.py", "b1"): ORDERS}))
    assert ledger.builds() == tuple((b.coll, b.commit, b.built_at) for b in ledger.branches())
    assert {b[1] for b in ledger.builds()} == {"c0ffee", "beef"}
    ledger.commit(file_change(replace(main, commit="d00d", built_at="2026-01-02T00:00:00Z"),
                              {("shop/orders.py", "b1"): ORDERS}, ledger))
    assert (main.coll, "d00d", "2026-01-02T00:00:00Z") in ledger.builds()


def test_more_keys_than_one_query_takes_are_all_found(ledger: Ledger) -> None:
    # The keys go 500 to a query: every part, not only the first, must look up its own keys.
    state = branch_state("main")
    texts = [f"def handler_{i}(request):\n    return {i}\n" for i in range(1203)]
    ledger.commit(file_change(state, {("shop/handlers.py", "b1"): texts}))
    hashes = [text_hash(t) for t in texts]
    members = ledger.branch_members(state, hashes)
    assert set(members) == set(hashes) and all(len(found) == 1 for found in members.values())
    chunks = ledger.branch_chunks(state)
    keys = [lex_key(c.path, c.symbol, c.text_hash) for c in chunks]
    assert set(ledger.branch_members(state, keys, by="lex_key")) == set(keys)


def test_branches_share_a_file_version_and_each_sees_it_as_its_own(ledger: Ledger) -> None:
    main, topic = branch_state("main"), branch_state("topic", commit="beef")
    ledger.commit(file_change(main, {("shop/orders.py", "b1"): ORDERS}))
    ledger.commit(file_change(topic, {("shop/orders.py", "b1"): ORDERS}, held=ledger))
    assert ledger.space_size(SPACE) == 2  # one vector per distinct text, however many branches
    # Each branch reads the shared rows as its own (the commit stays the file version's first
    # indexer's: a search cites the branch's indexed commit for live chunks, retriever/search.py).
    assert {(c.branch, c.commit) for c in ledger.branch_chunks(topic)} == {("topic", "c0ffee")}
    assert [c.branch for c in ledger.branch_chunks(main)] == ["main", "main"]
    # main leaves the file (no history): topic still has it, nothing is collected.
    done = ledger.commit(BuildChange(state=main, dropped_paths=["shop/orders.py"]))
    assert done.removed_ids == [] and ledger.pending() == []
    assert ledger.branch_chunks(main) == [] and len(ledger.branch_chunks(topic)) == 2
    # The last reference goes: its rows go in the same transaction, its vectors are listed.
    done = ledger.commit(BuildChange(state=topic, dropped_paths=["shop/orders.py"]))
    assert sorted(done.removed_ids) == sorted(lex_key("shop/orders.py", f"sym{n}", text_hash(t))
                                              for n, t in enumerate(ORDERS))
    assert sorted(ledger.pending()) == sorted((SPACE, text_hash(t)) for t in ORDERS)
    assert ledger.space_size(SPACE) == 0 and ledger.space_texts(SPACE, [text_hash(ORDERS[0])]) == set()


def test_a_deleted_file_is_history_cited_at_the_last_commit_that_had_it(ledger: Ledger) -> None:
    state = branch_state("main")
    ledger.commit(file_change(state, {("shop/refund.py", "b2"): REFUND}))
    later = branch_state("main", commit="d00d")
    ledger.commit(BuildChange(state=later, deleted_paths=["shop/refund.py"], gone_at=("c0ffee", "2026-01-01")))
    assert ledger.branch_chunks(later) == [] and ledger.branch_size(later.coll, history=True) == 1
    h = text_hash(REFUND[0])
    assert ledger.branch_members(later, [h]) == {}
    [old] = ledger.branch_members(later, [h], history=True)[h]
    assert (old.status, old.commit, old.commit_date) == ("deleted", "c0ffee", "2026-01-01")


def test_a_failure_before_commit_leaves_the_previous_state(ledger: Ledger) -> None:
    state = branch_state("main")
    ledger.commit(file_change(state, {("shop/orders.py", "b1"): ORDERS}))
    before = ledger.branch_chunks(state)

    def crash(removed: list[str], stamp: str) -> None:
        raise RuntimeError("killed inside the transaction")

    with pytest.raises(RuntimeError):
        ledger.commit(file_change(branch_state("main", commit="d00d"), {("shop/refund.py", "b2"): REFUND}),
                      before_commit=crash)
    assert ledger.branch(state.coll) == state and ledger.branch_chunks(state) == before
    assert ledger.space_size(SPACE) == 2


def test_a_chunk_without_its_lexical_row_is_refused(ledger: Ledger) -> None:
    state = branch_state("main")
    change = file_change(state, {("shop/orders.py", "b1"): ORDERS})
    with pytest.raises(BadIndex, match="no lexical row"):
        ledger.commit(BuildChange(state=state, chunks=change.chunks, lexical=change.lexical[:1], files=change.files))
    assert ledger.branch(state.coll) is None


def test_the_embedding_cache_round_trips_float32(ledger: Ledger) -> None:
    ledger.put_vectors(MODEL, {"h1": [0.5, -1.25, 3.0], "h2": [1.0, 0.0, 0.0]})
    assert ledger.cached_hashes(MODEL, ["h1", "h2", "h3"]) == {"h1", "h2"}
    assert ledger.cached_vectors(MODEL, ["h1", "h3"]) == {"h1": [0.5, -1.25, 3.0]}
    assert ledger.cached_hashes("another-model", ["h1"]) == set()


def test_a_space_s_vectors_come_whole_from_the_cache_or_not_at_all(ledger: Ledger) -> None:
    from array import array

    state = branch_state("main")
    ledger.commit(file_change(state, {("shop/orders.py", "b1"): ORDERS}))
    first, second = (text_hash(t) for t in ORDERS)
    ledger.put_vectors(MODEL, {first: [1.0, 0.0]})
    assert ledger.space_vectors(SPACE, MODEL) is None          # one text of the space has no vector here
    ledger.put_vectors(MODEL, {second: [0.0, 2.0], "not-in-the-space": [3.0, 3.0]})
    assert ledger.space_vectors(SPACE, "another-model") is None
    got = ledger.space_vectors(SPACE, MODEL)
    assert got is not None and [h for h, _ in got] == sorted([first, second])     # the space's order
    assert {h: array("f", v).tolist() for h, v in got} == {first: [1.0, 0.0], second: [0.0, 2.0]}


def test_pending_ids_and_the_builder_id(ledger: Ledger, index_dir: Path) -> None:
    ledger.add_pending([(SPACE, "a"), (SPACE, "b"), (SPACE, "a")])
    assert sorted(ledger.pending()) == [(SPACE, "a"), (SPACE, "b")] and ledger.pending_count() == 2
    ledger.clear_pending([(SPACE, "a")])
    assert ledger.pending() == [(SPACE, "b")]
    first = ledger.builder_id()
    assert len(first) == 32 and ledger.builder_id() == first
    again = Ledger(index_dir)
    try:
        assert again.builder_id() == first
    finally:
        again.close()


def test_a_reader_creates_nothing_and_sees_committed_state(tmp_path: Path, ledger: Ledger, index_dir: Path) -> None:
    missing = tmp_path / "nowhere" / "index"
    with pytest.raises(NotIndexed, match="nothing is indexed"):
        Ledger(missing, readonly=True)
    assert not missing.parent.exists()
    state = branch_state("main")
    ledger.commit(file_change(state, {("shop/orders.py", "b1"): ORDERS}))
    reader = Ledger(index_dir, readonly=True)
    try:
        assert reader.branch(state.coll) == state
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            reader.add_pending([(SPACE, "x")])
    finally:
        reader.close()


def test_export_repository_copies_one_repository_only(ledger: Ledger, tmp_path: Path) -> None:
    state = branch_state("main")
    ledger.commit(file_change(state, {("shop/orders.py", "b1"): ORDERS}))
    other = replace(branch_state("main", space="cv-ffffffffffffffffffff-txt"), coll="cv-other", repo_id="other")
    ledger.commit(file_change(other, {("x.py", "b9"): ["X = 1\n"]}))
    ledger.put_vectors(MODEL, {"h": [1.0]})
    dest = tmp_path / "snapshot"
    ledger.export_repository("repo-id", dest)
    snap = Ledger(dest, readonly=True)
    try:
        assert snap.branches() == [state] and len(snap.branch_chunks(state)) == 2
        assert snap.cached_hashes(MODEL, ["h"]) == set()  # not the embedding cache
        assert [r.path for r, _ in snap.lexical_search(state, '"cancel"', 5)] == ["shop/orders.py"]
    finally:
        snap.close()


def test_outdated_branches_are_found_by_repository_id_or_path_and_travel_with_a_snapshot(
        ledger: Ledger, tmp_path: Path) -> None:
    """`outdated` is written by migration m005 from an older layout (tests/store/test_migrations.py
    builds real ones); here its rows are written by hand to pin the lookups down."""
    state = branch_state("main")
    older = replace(branch_state("topic"), coll="cv-by-path", repo_id=None, space=None)
    ledger.commit(file_change(state, {("shop/orders.py", "b1"): ORDERS}))
    with ledger.transaction() as db:
        db.execute("INSERT INTO branches (coll, repo, branch, commit_sha, commit_date, built_at, embedder, "
                   "rules_json, repo_id, remote, space) VALUES (?,?,?,?,?,?,?,?,?,?,?)", astuple(older)[:11])
        db.executemany("INSERT INTO outdated VALUES (?, ?, ?)", [
            (state.coll, "per-chunk", "[]"), (older.coll, "per-branch", '["cv-by-path-live", "cv-by-path-hist"]')])
    assert ledger.outdated_branches() == {state.coll, older.coll}
    assert ledger.outdated("repo-id", "/elsewhere", "main") == Outdated(state.coll, "per-chunk", ())
    assert ledger.outdated("repo-id", "/repo", "topic") == Outdated(
        older.coll, "per-branch", ("cv-by-path-live", "cv-by-path-hist"))
    assert ledger.outdated("repo-id", "/elsewhere", "topic") is None  # no id: found by its path only
    assert ledger.outdated("another-repo", "/repo", "main") is None
    dest = tmp_path / "snapshot"
    ledger.export_repository("repo-id", dest)  # the branches with the repository's id, and their rows
    snap = Ledger(dest, readonly=True)
    try:
        assert snap.outdated_branches() == {state.coll}
    finally:
        snap.close()
    # The build that moves the branch forgets the row, and the older key's branch and files.
    done = ledger.commit(BuildChange(state=branch_state("topic"), outdated=Outdated(
        older.coll, "per-branch", ("cv-by-path-live", "cv-by-path-hist"))))
    assert done.old_collections == ["cv-by-path-live", "cv-by-path-hist"]
    assert ledger.outdated_branches() == {state.coll} and ledger.branch(older.coll) is None


def test_an_entry_built_elsewhere_answers_only_a_clone_that_holds_its_commit(ledger: Ledger) -> None:
    # Entries are found by root commit; a fork shares that and nothing else. The shared entry
    # (built by /repo at c0ffee) and another clone's own (/second at beef) answer a third clone
    # only when it holds their commits; each clone's own entry answers whatever its commit became.
    shared = branch_state("main")
    second = replace(branch_state("main", commit="beef"), coll=collection_base("repo-id", "main", "/second"),
                     repo="/second", built_at="2026-02-01T00:00:00Z")
    for state in (shared, second):
        ledger.commit(file_change(state, {("shop/orders.py", "b1"): ORDERS}, held=ledger))

    def holding(*commits: str) -> Callable[[Sequence[str]], bool]:
        return lambda asked: any(commit in commits for commit in asked)

    assert ledger.find_branch("repo-id", "main", "/fork", holding()) is None
    assert ledger.find_branch("repo-id", "main", "/third", holding("c0ffee", "beef")) == shared
    assert ledger.find_branch("repo-id", "main", "/third", holding("beef")) == second
    assert ledger.find_branch("repo-id", "main", "/repo", holding()) == shared
    assert ledger.find_branch("repo-id", "main", "/second", holding()) == second
    assert ledger.has_entries("repo-id", "main") and not ledger.has_entries("other-id", "main")


def test_an_entry_answers_a_clone_that_holds_one_of_its_sampled_ancestors(ledger: Ledger, tmp_path: Path) -> None:
    # A clone behind the build (a team reader that has not fetched the nightly's commit) holds an
    # older commit of the same history: one the build sampled answers for it; the root commit is
    # never sampled, so a fork that shares only that holds none. The samples are kept as written.
    sampled = replace(branch_state("main"), ancestors=("a1", "a2", "a4"))
    ledger.commit(file_change(sampled, {("shop/orders.py", "b1"): ORDERS}, held=ledger))
    asked: list[tuple[str, ...]] = []

    def holding(*commits: str) -> Callable[[Sequence[str]], bool]:
        def holds(wanted: Sequence[str]) -> bool:
            asked.append(tuple(wanted))
            return any(commit in commits for commit in wanted)
        return holds

    assert ledger.branch(sampled.coll) == sampled
    assert ledger.find_branch("repo-id", "main", "/behind", holding("a4", "root")) == sampled
    assert asked[-1] == ("c0ffee", "a1", "a2", "a4")      # one question for all of them
    assert ledger.find_branch("repo-id", "main", "/fork", holding("root")) is None
    ledger.export_repository("repo-id", tmp_path / "snapshot")     # a team reader's copy keeps them
    snap = Ledger(tmp_path / "snapshot", readonly=True)
    try:
        assert snap.find_branch("repo-id", "main", "/behind", holding("a2")) == sampled
    finally:
        snap.close()
