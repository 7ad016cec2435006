"""Reciprocal rank fusion, cut at a depth, and what comes of it (pure)."""
from __future__ import annotations

from dataclasses import replace

from codevouch.retriever.fusion import dedupe, fuse, ranks
from codevouch.store import ChunkRecord


def test_fusion_weighs_each_lists_rank_and_a_depth_counts_only_the_first() -> None:
    lists = [(1.0, ["a", "b", "c"]), (0.5, ["c", "a"])]
    scores = fuse(lists, rrf_k=60)
    assert scores["a"] > scores["c"] > scores["b"]
    assert fuse([(1.0, ["a"]), (2.0, ["a"])], rrf_k=60) == {"a": 1.0}    # first everywhere: 1.0
    cut = fuse(lists, rrf_k=60, depth=1)
    assert set(cut) == {"a", "c"} and cut["a"] == 1.0 / 1.5 and cut["c"] == 0.5 / 1.5
    assert fuse([], rrf_k=60) == {}


def test_ranks_keep_each_ids_first_place() -> None:
    assert ranks(["x", "y", "x"]) == {"x": 0, "y": 1}


def test_the_same_lines_of_a_blob_come_once_at_their_best() -> None:
    rec = ChunkRecord(id="1", repo="/r", path="a.py", branch="main", commit="c", commit_date="d", symbol="f",
                      start_line=1, end_line=3, indexed_at="t", blob_sha="b", text_hash="h", kind="source",
                      language="python", status="live")
    other = replace(rec, id="2", status="deleted")
    moved = replace(rec, id="3", start_line=2)
    assert [r.id for r, _ in dedupe([(rec, 0.9), (other, 0.8), (moved, 0.7)])] == ["1", "3"]
