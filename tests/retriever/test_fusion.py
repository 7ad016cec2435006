"""Reciprocal rank fusion, cut at a depth, and what comes of it (pure)."""
from __future__ import annotations

from dataclasses import replace

from codevouch.retriever.fusion import dedupe, fuse, fuse_scores, ranks, settled
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


def test_score_fusion_keeps_the_size_of_each_lists_gaps() -> None:
    # by rank, "a" (first of the heavier list) wins; by score, b's near-tie there and its wide
    # lead in the other list carry it
    lists = [(1.0, ["a", "b", "c"]), (0.75, ["b", "a", "c"])]
    scores = [{"a": 0.55, "b": 0.549, "c": 0.2}, {"b": 9.0, "a": 3.0, "c": 2.0}]
    assert max(fuse(lists, rrf_k=60).items(), key=lambda kv: kv[1])[0] == "a"
    by_score = fuse_scores(lists, scores)
    assert max(by_score.items(), key=lambda kv: kv[1])[0] == "b"
    # each list divided by its best: c keeps what it measured, 0.2 of 0.55 and 2 of 9
    assert by_score["c"] == (0.2 / 0.55 + 0.75 * 2.0 / 9.0) / 1.75
    assert fuse_scores([(1.0, ["x"]), (2.0, ["x"])], [{"x": 0.3}, None]) == {"x": 1.0}
    # a list with no scores counts by rank; a list cut at `depth` scales over what is left
    assert fuse_scores([(1.0, ["a", "b"])], [None]) == {"a": 1.0, "b": 0.5}
    assert set(fuse_scores(lists, scores, depth=1)) == {"a", "b"}


def test_a_lists_floor_stretches_its_scores_from_that_share_of_its_best() -> None:
    # the dense list's cosines: 0.66 and 0.51 are 1.0 and 0.77 of the best, 0.31 under half
    lists = [(1.0, ["t", "n", "x"]), (1.0, ["n", "t"])]
    scores = [{"t": 0.66, "n": 0.51, "x": 0.31}, {"n": 2.0, "t": 1.5}]
    flat = fuse_scores(lists, scores)
    assert flat["n"] > flat["t"]       # the neighbour's words outweigh the target's cosine
    floored = fuse_scores(lists, scores, floors=[0.5, 0.0])
    assert floored["t"] > floored["n"]   # from half the best, 0.77 of it counts 0.55
    assert floored["t"] == (1.0 + 0.75) / 2 and floored["x"] == 0.0
    assert floored["n"] == ((0.51 / 0.66 - 0.5) / 0.5 + 1.0) / 2
    # a list given no floor is divided by its best, as before
    assert fuse_scores(lists, scores, floors=[0.0, 0.0]) == flat


def _rec(cid: str) -> ChunkRecord:
    return ChunkRecord(id=cid, repo="/r", path=f"{cid}.py", branch="main", commit="c", commit_date="d", symbol=cid,
                       start_line=1, end_line=3, indexed_at="t", blob_sha=cid, text_hash=cid, kind="source",
                       language="python", status="live")


def test_a_tie_is_broken_by_similarity_then_lexical_score_not_by_order() -> None:
    sims = {"a": 0.5, "b": 0.6, "c": 0.6, "d": 0.9}
    lex = {"a": 1.0, "b": 1.0, "c": 2.0, "d": 0.0}
    found = [(_rec("a"), 0.9), (_rec("b"), 0.9), (_rec("c"), 0.9), (_rec("d"), 0.5)]

    def evidence(rec: ChunkRecord) -> tuple[float, float]:
        return sims[rec.id], lex[rec.id]
    assert [r.id for r, _ in settled(found, lambda rec: 0, evidence)] == ["c", "b", "a", "d"]
    # within a band, near-ties too; never across tiers
    near = [(_rec("a"), 0.9), (_rec("b"), 0.897), (_rec("d"), 0.89)]
    assert [r.id for r, _ in settled(near, lambda rec: 0, evidence, band=0.005)] == ["b", "a", "d"]
    assert [r.id for r, _ in settled(near, lambda rec: rec.id == "a", evidence, band=0.5)] == ["a", "d", "b"]


def test_score_fusion_keeps_the_last_of_a_short_list_at_what_it_measured() -> None:
    # A two-chunk repository: the function and the test that repeats its words. Dense: the
    # function well ahead; lexical and name words: the test by a hair. Scaled between each list's
    # last and first, the function scored 0.0 in the two lists the test led, and the test came
    # first (1.75 against 1.0 of 2.75); scaled by each list's best, a hair apart stays a hair apart.
    lists = [(1.0, ["function", "test"]), (0.75, ["test", "function"]), (1.0, ["test", "function"])]
    scores = [{"function": 0.55, "test": 0.30}, {"test": 4.1, "function": 4.0}, {"test": 2.05, "function": 2.0}]
    by_score = fuse_scores(lists, scores)
    assert by_score["function"] > by_score["test"]
    assert by_score["function"] == (1.0 + 0.75 * 4.0 / 4.1 + 2.0 / 2.05) / 2.75
    # a negative cosine counts as no similarity, not below it
    assert fuse_scores([(1.0, ["a", "b"])], [{"a": 0.4, "b": -0.2}]) == {"a": 1.0, "b": 0.0}
    # and a list that measured nothing anywhere adds nothing, not full marks to each
    assert fuse_scores([(1.0, ["a"])], [{"a": -0.2}]) == {"a": 0.0}
    both = fuse_scores([(1.0, ["a", "b"]), (1.0, ["b", "a"])], [{"a": 0.5, "b": 0.25}, {"b": 0.0, "a": 0.0}])
    assert both == {"a": 0.5, "b": 0.25}
