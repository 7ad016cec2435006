"""Queries that want tests: the first doc sentence of each documented function in a test file
(`"Test that intermediate requests sent as part of an auth flow are recorded."`), asked as
written; the answer is that test function. Ground truth is the bench's own parse of the test
files' docs (lib/doccomments.py), never codevouch.

The default search ranks tests after the code they test (Settings.sentence_kind_weights) unless
the query names tests (Settings.named_tests_weight). Library docstring queries alone can only
show what that exception costs ("Creates a test client ..." then meets the tests that call it);
these queries show what it gains. `--kind test` is their ceiling: what a person who knows they
want a test gets.

The baselines (LangChain's splitters, the 40-line windows, BM25) answer the same queries, so the
target "test docstrings at least 0.9x a LangChain 1000/100 pipeline" is a ratio with an interval
(`against_baseline`)."""
from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from codevouch_bench.lib.config import BASELINES as BASELINES
from codevouch_bench.lib.config import SOURCE_BASELINE
from codevouch_bench.lib.retrieval import paired, ratio, scores

# Test files by the bench's own rule (the common layouts of Python, Go, JavaScript and Rust).
TEST_CODE = re.compile(r"(^|/)(tests?|__tests__|spec)/|(^|/)(test_[^/]*\.py|[^/]*_test\.(py|go)|"
                       r"[^/]*\.(test|spec)\.[jt]sx?|conftest\.py)$")
DEFAULT, RULE_OFF, KIND_TEST = "codevouch", "codevouch-no-names-tests", "codevouch-kind-test"
# The rows asked these queries (the --kind test ceiling is asked of the default row's index), and
# the ranking before score fusion was the default (quality.py's codevouch-rank-fusion), when run.
# The sentence test prior before these queries retuned it (quality.py's row of that name).
PRIOR_BEFORE = "codevouch-sentence-tests-0.1"
# The fusion before a large module's neighbours were read (quality.py's row of that name).
NEIGHBOURS_BEFORE = "codevouch-neighbours-before"
ROWS = (DEFAULT, RULE_OFF, "codevouch-rank-fusion", PRIOR_BEFORE, NEIGHBOURS_BEFORE)
# The baselines asked them too (quality.py's BASELINES), and the one the target is set against.
BASELINE, TARGET = SOURCE_BASELINE, 0.9


def is_test_code(path: str) -> bool:
    return bool(TEST_CODE.search(path))


def _subset(ranks: Sequence[int | None], keep: Sequence[bool]) -> list[int | None]:
    return [r for r, k in zip(ranks, keep) if k]


def summary(ranks: dict[str, list[int | None]], naming: Sequence[bool],
            library: dict[str, list[int | None]]) -> dict[str, Any]:
    """Scores of each row on the test queries; with the rule-off row, the rule's paired effect on
    the test queries, on those that name tests (the only ones it touches) and on the library
    docstring queries (`library`: the docstring ranks per row); with the LangChain 1000/100 row,
    the default's MRR@10 as a multiple of it, with a 95% interval."""
    out: dict[str, Any] = {"queries": len(naming), "naming_tests": sum(naming),
                           "scores": {m: scores(r) for m, r in ranks.items()}}
    if DEFAULT in ranks and RULE_OFF in ranks:
        on, off = ranks[DEFAULT], ranks[RULE_OFF]
        out["rule"] = {"tests": paired(on, off), "tests_naming": paired(_subset(on, naming), _subset(off, naming))}
        if DEFAULT in library and RULE_OFF in library:
            out["rule"]["library"] = paired(library[DEFAULT], library[RULE_OFF])
    if DEFAULT in ranks and PRIOR_BEFORE in ranks:
        out["prior"] = {"tests": paired(ranks[DEFAULT], ranks[PRIOR_BEFORE])}
        if DEFAULT in library and PRIOR_BEFORE in library:
            out["prior"]["library"] = paired(library[DEFAULT], library[PRIOR_BEFORE])
    if DEFAULT in ranks and BASELINE in ranks:
        out["against_baseline"] = {"baseline": BASELINE, "target": TARGET, **ratio(ranks[DEFAULT], ranks[BASELINE])}
    return out
