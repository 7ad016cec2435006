"""Line ranges against the lines a file has: the empty string after a final newline is no line
(an 8-line file has no line 9), and a snippet without a version cites lines of the working-tree
file, so lines past its end are lines-out-of-range even where its text is elsewhere. Real
repositories, the library and the CLI (--json)."""
from __future__ import annotations

import json
from typing import Any

import pytest

from codevouch.commands.exits import EXIT_HISTORICAL
from codevouch.validator import validate
from tests.clihelp import cv
from tests.gitrepo import Repo

EIGHT = "".join(f"line{n}\n" for n in range(1, 9))       # 8 lines, ending in a newline


def verdicts(repo: Repo, items: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(r.verdict, r.reason) for r in validate(repo.root, items)]


def cli(repo: Repo, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = cv("validate", "-", "--json", "--repo", str(repo.root), stdin=json.dumps(items))
    results = json.loads(out.stdout)
    historical = any(r["verdict"] == "historical-only" for r in results)
    assert out.returncode == (EXIT_HISTORICAL if historical else 0), out.stderr
    return results


OUT = ("historical-only", "lines-out-of-range")


@pytest.mark.parametrize("start, end", [(1, 9), (9, 9), (8, 9)])
def test_line_nine_of_an_eight_line_file_is_past_its_end(repo: Repo, start: int, end: int) -> None:
    old = repo.commit("eight", **{"eight.txt": EIGHT})
    head = repo.commit("other", **{"other.txt": "x\n"})         # eight.txt unchanged: same-content at `old`
    items = [{"path": "eight.txt", "commit": rev, "start_line": start, "end_line": end} for rev in (head, old)]
    assert verdicts(repo, items) == [OUT, OUT]
    assert [(r["verdict"], r["reason"]) for r in cli(repo, items)] == [OUT, OUT]
    assert "(8 lines)" in validate(repo.root, items[:1])[0].detail


def test_the_last_real_line_is_in_range(repo: Repo) -> None:
    head = repo.commit("eight", **{"eight.txt": EIGHT, "bare.txt": EIGHT[:-1]})
    assert verdicts(repo, [{"path": "eight.txt", "commit": head, "start_line": 1, "end_line": 8},
                           {"path": "eight.txt", "commit": head, "start_line": 8, "end_line": 8, "text": "line8"},
                           {"path": "bare.txt", "commit": head, "start_line": 8, "end_line": 8},
                           {"path": "bare.txt", "commit": head, "start_line": 9, "end_line": 9}]) == \
        [("usable", "same-commit")] * 3 + [OUT]


def test_a_text_ending_in_the_phantom_line_is_past_the_end(repo: Repo) -> None:
    head = repo.commit("eight", **{"eight.txt": EIGHT})
    # "line8\n" at lines 8-9: its second line is the empty string after the final newline.
    assert verdicts(repo, [{"path": "eight.txt", "commit": head, "start_line": 8, "end_line": 9,
                            "text": "line8\n"}]) == [OUT]


def test_an_unversioned_snippet_past_the_end_is_out_of_range_though_its_text_is_there(repo: Repo) -> None:
    repo.commit("eight", **{"eight.txt": EIGHT})
    items = [{"path": "eight.txt", "start_line": 100, "end_line": 120, "text": "line3"},
             {"path": "eight.txt", "start_line": 9, "end_line": 9},
             {"path": "eight.txt", "start_line": 5, "end_line": 5, "text": "line3"}]
    results = validate(repo.root, items)
    assert [(r.verdict, r.reason) for r in results] == [OUT, OUT, ("stale-but-ok", "text-found")]
    found = results[0].current
    assert found is not None and (found.start_line, found.end_line, found.text) == (3, 3, "line3")
    assert "its text is at lines 3-3" in results[0].detail
    assert [(r["verdict"], r["reason"]) for r in cli(repo, items)] == [OUT, OUT, ("stale-but-ok", "text-found")]


def test_an_empty_file_has_no_lines(repo: Repo) -> None:
    head = repo.commit("empty", **{"empty.txt": ""})
    assert verdicts(repo, [{"path": "empty.txt", "commit": head, "start_line": 1, "end_line": 1}]) == [OUT]
