"""plan_refresh over hand-built trees: the pure decision of what a build must do."""
from __future__ import annotations

from codevouch.indexer.plan import plan_refresh
from codevouch.store import FileRow
from codevouch.worktree.gitio import TreeEntry


def tree(**blobs: str) -> dict[str, TreeEntry]:
    return {path.replace("__", "/").replace("_py", ".py"): TreeEntry(path.replace("__", "/").replace("_py", ".py"),
                                                                     "100644", sha, 10)
            for path, sha in blobs.items()}


def row(path: str, sha: str, status: str = "live", chunks: int = 2) -> FileRow:
    return FileRow(path, sha, "source", None, "python", status, None, chunks)


def ledger(*rows: FileRow) -> dict[str, FileRow]:
    return {r.path: r for r in rows}


def test_first_build_indexes_everything() -> None:
    plan = plan_refresh({}, tree(a_py="1", b_py="2"))
    assert (plan.index, plan.retire, plan.to_history, plan.drop, plan.unchanged) == (("a.py", "b.py"), (), (), (), 0)
    assert not plan.is_noop


def test_unchanged_tree_is_a_noop() -> None:
    plan = plan_refresh(ledger(row("a.py", "1"), row("b.py", "2")), tree(a_py="1", b_py="2"))
    assert plan.is_noop and plan.unchanged == 2


def test_changed_file_is_reindexed_and_its_chunks_retired() -> None:
    plan = plan_refresh(ledger(row("a.py", "1"), row("b.py", "2")), tree(a_py="1", b_py="3"))
    assert (plan.index, plan.retire, plan.unchanged) == (("b.py",), ("b.py",), 1)


def test_gone_files_become_history_or_are_dropped() -> None:
    old = ledger(row("a.py", "1"), row("gone.py", "2"), row("skipped.py", "3", "skipped", 0),
                 row("empty.py", "4", "live", 0), row("old.py", "5", "deleted"))
    plan = plan_refresh(old, tree(a_py="1"))
    assert plan.to_history == ("gone.py",)                     # it had chunks: kept as history
    assert plan.drop == ("empty.py", "skipped.py")             # nothing to keep
    assert plan.index == () and plan.unchanged == 1


def test_a_file_back_after_deletion_is_indexed_not_retired() -> None:
    plan = plan_refresh(ledger(row("a.py", "1", "deleted")), tree(a_py="1"))
    assert (plan.index, plan.retire) == (("a.py",), ())


def test_full_rebuild_rereads_every_file() -> None:
    plan = plan_refresh(ledger(row("a.py", "1"), row("b.py", "2")), tree(a_py="1", b_py="2"), full=True)
    assert (plan.index, plan.retire, plan.unchanged) == (("a.py", "b.py"), ("a.py", "b.py"), 0)


def test_nested_paths_keep_their_order() -> None:
    plan = plan_refresh({}, tree(src__b_py="1", src__a_py="2", a_py="3"))
    assert plan.index == ("a.py", "src/a.py", "src/b.py")
