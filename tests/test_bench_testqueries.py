"""The quality figure's test queries (bench/codevouch_bench/lib/testqueries.py): the docs of test
functions asked as written, and the names-tests rule measured on them and on library docstrings,
per repository and pooled over a split. No model, no network."""
from __future__ import annotations

import json
from pathlib import Path

from codevouch_bench.lib.testqueries import KIND_TEST, ROWS, RULE_OFF, is_test_code, summary


def test_test_files_by_the_benchs_own_rule() -> None:
    for path in ("tests/test_api.py", "src/test_util.py", "cmd/root_test.go", "src/a.test.ts", "spec/x.js",
                 "conftest.py", "pkg/__tests__/b.js"):
        assert is_test_code(path), path
    for path in ("src/testing.py", "flask/app.py", "docs/testing.rst", "src/contest.ts"):
        assert not is_test_code(path), path


def test_the_rule_is_paired_on_test_queries_those_that_name_tests_and_library_docstrings() -> None:
    ranks = {"codevouch": [1, 3, None, 2], RULE_OFF: [None, 3, None, 4], KIND_TEST: [1, 1, 2, 1]}
    naming = [True, False, False, True]
    library = {"codevouch": [1, 2, 1], RULE_OFF: [1, 1, 1]}
    out = summary(ranks, naming, library)
    assert (out["queries"], out["naming_tests"]) == (4, 2)
    assert out["scores"][KIND_TEST]["mrr@10"] == round((1 + 1 + 0.5 + 1) / 4, 3)
    rule = out["rule"]
    # on: 1, 1/3, 0, 1/2; off: 0, 1/3, 0, 1/4
    assert (rule["tests"]["better"], rule["tests"]["worse"]) == (2, 0)
    assert rule["tests"]["mrr@10_difference"] == round((1 + 0.25) / 4, 3)
    assert rule["tests_naming"]["queries"] == 2 and rule["tests_naming"]["mrr@10_difference"] == round(1.25 / 2, 3)
    assert (rule["library"]["better"], rule["library"]["worse"]) == (0, 1)
    assert "rule" not in summary({"codevouch": [1]}, [True], {})   # no rule-off row: nothing to pair


def test_a_split_is_pooled_over_its_repositories_and_rendered(tmp_path: Path) -> None:
    from codevouch_bench.lib.whole_quality_report import section
    from codevouch_bench.quality import SOURCE, pooled

    def corpus(name: str, docs: list[int | None], source: list[int | None]) -> dict:
        return {"corpus": name, "ranks": {"overlap": {"codevouch": docs, SOURCE: source, RULE_OFF: source}},
                "acronym_ranks": {"with": {"codevouch": [1]}, "without": {"codevouch": [2]}},
                "test_ranks": {"codevouch": [1, 5], RULE_OFF: [None, 5]}, "test_naming": [True, False]}
    part = [corpus("a", [1, 2], [1, 1]), corpus("b", [None, 1, 1], [3, 1, 1])]
    pool = pooled(part)
    assert pool["default_vs_source_only"]["queries"] == 5
    assert (pool["default_vs_source_only"]["better"], pool["default_vs_source_only"]["worse"]) == (0, 2)
    assert pool["acronyms_with_vs_without"] == {**pool["acronyms_with_vs_without"], "queries": 2, "better": 2}
    assert pool["test_queries"]["naming_tests"] == 2
    assert pool["test_queries"]["rule"]["tests_naming"]["better"] == 2
    assert pool["test_queries"]["rule"]["library"]["worse"] == 2

    def sc(mrr: float) -> dict[str, float]:
        return {"queries": 2, "mrr@10": mrr}
    per = {"corpus": "a", "language": "python", "chunks": {"codevouch": 10}, "queries": 2,
           "scores": {"overlap": {"codevouch": sc(0.75)}}, "docstring_misses": {"misses": 1, "lost_to_a_stub": 0},
           "identifiers": {"name": {"codevouch": {}}, "words": {"codevouch": {}}},
           "test_queries": {"queries": 2, "naming_tests": 1,
                            "scores": {"codevouch": sc(0.6), RULE_OFF: sc(0.1), KIND_TEST: sc(0.9),
                                       "langchain-1000-source": sc(0.5), "langchain-1000": sc(0.4)},
                            "rule": pool["test_queries"]["rule"],
                            "against_baseline": {"baseline": "langchain-1000-source", "target": 0.9, "ratio": 1.2,
                                                 "interval_95": [0.8, None]}}}
    path = tmp_path / "stubs.json"
    path.write_text(json.dumps({"runs": [{"per_corpus": [per], "overall": {"held-out": {"pooled": pool}}}]}))
    text = section(path)
    assert ("| a | 2 | 1 | 0.6 | 0.5 | x1.2 [0.8, ∞] (meets x0.9) | 0.1 | 0.9 | +1.000 [+1.000, +1.000]; 2 / 0 "
            "| -0.167 [") in text
    assert "*All held-out repositories pooled*" in text and "acronyms with − without +0.500" in text
    # a run that set the target against the splitter over every file shows no ratio under this one
    per["test_queries"]["against_baseline"]["baseline"] = "langchain-1000"
    path.write_text(json.dumps({"runs": [{"per_corpus": [per], "overall": {"held-out": {"pooled": pool}}}]}))
    assert "| a | 2 | 1 | 0.6 | 0.5 | – | 0.1 |" in section(path)


def test_the_rank_fusion_row_is_asked_the_test_queries_and_pooled_only_when_run() -> None:
    """The ranking before score fusion (codevouch-rank-fusion) answers the test queries too, so the
    old default and the new one are compared on them; a run without that row pools without it."""
    from codevouch_bench.quality import pooled

    def corpus(rows: dict[str, list[int | None]]) -> dict:
        return {"ranks": {"overlap": {m: [1] for m in rows}}, "acronym_ranks": {"with": {}, "without": {}},
                "test_ranks": rows, "test_naming": [False, False]}
    old = "codevouch-rank-fusion"
    assert old in ROWS
    both = pooled([corpus({"codevouch": [1, None], RULE_OFF: [1, None], old: [2, 2]})])["test_queries"]
    assert both["scores"][old]["mrr@10"] == 0.5
    assert old not in pooled([corpus({"codevouch": [1, None], RULE_OFF: [1, None]})])["test_queries"]["scores"]


def test_the_baseline_answers_the_test_queries_and_the_target_is_a_ratio_with_an_interval() -> None:
    """The 0.9x target of test docstrings is measurable: the LangChain 1000/100 row's ranks on the
    same queries give the default's MRR@10 as a multiple of it, with a paired-bootstrap interval,
    per repository and pooled over a split."""
    from codevouch_bench.lib.testqueries import BASELINE, BASELINES
    from codevouch_bench.quality import pooled

    out = summary({"codevouch": [1, None, 2, 1], BASELINE: [1, 1, None, 2]}, [False] * 4, {})
    against = out["against_baseline"]
    assert against["baseline"] == "langchain-1000-source" and against["target"] == 0.9
    assert against["ratio"] == round(2.5 / 2.5, 2)
    low, high = against["interval_95"]
    assert low < 1.0 < high
    assert summary({"codevouch": [1], BASELINE: [None]}, [False], {})["against_baseline"]["ratio"] is None

    def corpus(rows: dict[str, list[int | None]]) -> dict:
        return {"ranks": {"overlap": {m: [1] for m in ("codevouch", RULE_OFF)}},
                "acronym_ranks": {"with": {}, "without": {}}, "test_ranks": rows, "test_naming": [False, False]}
    pool = pooled([corpus({"codevouch": [1, 2], RULE_OFF: [1, 2], BASELINE: [2, 2]}),
                   corpus({"codevouch": [1, 1], RULE_OFF: [1, 1], BASELINE: [1, None]})])["test_queries"]
    assert set(BASELINES) & set(pool["scores"]) == {BASELINE}
    assert pool["against_baseline"]["ratio"] == round(3.5 / 2.0, 2)
