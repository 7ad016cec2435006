"""Odd file names, real files: check-refs reads a name with spaces, dashes, brackets, `=`, `,`
or `%` whole (a backticked span, or the word around a path the pattern stopped short of), never
as a shorter name that is missing; the validator vouches for a file named with a newline.
Real repositories, the library and the CLI (--json)."""
from __future__ import annotations

import json

import pytest

from codevouch.refs.check import check_refs
from codevouch.refs.extract import extract
from codevouch.validator import validate
from tests.clihelp import cv
from tests.gitrepo import Repo

NAMES = ["space file.py", "L1-L2.py", "-L2.py", "br[1].py", "a=b.py", "x,y.py", "100%.py", "a~1.py",
         "q&a.py", "a#L1.py", "sp .py", "my dir/x.py"]


@pytest.fixture
def odd(repo: Repo) -> Repo:
    repo.commit_files({name: "x = 1\ny = 2\n" for name in NAMES})
    return repo


@pytest.mark.parametrize("name", NAMES)
def test_a_backticked_odd_name_is_the_file(odd: Repo, name: str) -> None:
    report = check_refs(odd.root, f"See `{name}` and `{name}#L1-L2`.")
    assert [(r.ref.path, r.status, r.reason) for r in report.results] == \
        [(name, "ok", "path-exists"), (name, "ok", "lines-in-file")]


@pytest.mark.parametrize("name", ["L1-L2.py", "-L2.py", "a=b.py", "x,y.py", "q&a.py", "a#L1.py"])
def test_an_odd_name_in_prose_is_read_whole(odd: Repo, name: str) -> None:
    (result,) = check_refs(odd.root, f"see {name}#L2 for it").results
    assert (result.ref.path, result.reason) == (name, "lines-in-file")


def test_the_wider_name_is_only_taken_when_that_file_exists(odd: Repo) -> None:
    # `see L1-L2.py` in backticks is prose around a real file; `key=L1-L2.py` names that file;
    # with no file by the wider name, the path is read as the pattern reads it.
    results = check_refs(odd.root, "Run `see L1-L2.py` with key=L1-L2.py#L1, then `nope/a=b.py`.").results
    assert [(r.ref.path, r.reason) for r in results] == [("L1-L2.py", "path-exists"), ("L1-L2.py", "lines-in-file"),
                                                         ("b.py", "path-missing")]


def test_extraction_keeps_the_order_of_appearance() -> None:
    refs = extract("`br[1].py` then a.py then `100%.py`").refs
    assert [r.path for r in refs] == ["br[1].py", "a.py", "100%.py"]


def test_cli_json_reports_no_false_missing(odd: Repo) -> None:
    text = "".join(f"- `{name}#L1`\n" for name in NAMES)
    out = cv("check-refs", "-", "--json", "--repo", str(odd.root), stdin=text)
    assert out.returncode == 0, out.stdout + out.stderr
    refs = json.loads(out.stdout)["references"]
    assert sorted(r["path"] for r in refs) == sorted(NAMES) and {r["status"] for r in refs} == {"ok"}


def test_a_file_named_with_a_newline_validates_as_usable(repo: Repo) -> None:
    name = "new\nline.py"
    head = repo.commit("odd", **{name: "def f():\n    return 1\n"})
    items = [{"path": name, "commit": head, "start_line": 1, "end_line": 2, "text": "def f():\n    return 1",
              "symbol": "f"},
             {"path": name, "commit": head, "start_line": 1, "end_line": 2}]
    assert [(r.verdict, r.reason) for r in validate(repo.root, items)] == [("usable", "same-commit")] * 2
    assert [r.verdict for r in validate(repo.root, items, strict=True)] == ["usable"] * 2     # hashed, one by one
    repo.write(name, "def f():\n    return 2\n")
    (changed,) = validate(repo.root, items[:1])
    assert (changed.verdict, changed.reason) == ("historical-only", "content-changed")
    out = cv("validate", "-", "--json", "--repo", str(repo.root), stdin=json.dumps(items[1:2]))
    repo.write(name, "def f():\n    return 1\n")
    again = cv("validate", "-", "--json", "--repo", str(repo.root), stdin=json.dumps(items[1:2]))
    assert json.loads(out.stdout)[0]["verdict"] != "usable"
    assert (json.loads(again.stdout)[0]["verdict"], json.loads(again.stdout)[0]["reason"]) == ("usable", "same-commit")


def test_a_gone_newline_name_never_in_history(repo: Repo) -> None:
    repo.commit("base", **{"a.py": "x = 1\n"})
    (r,) = validate(repo.root, [{"path": "gone\nname.py", "text": "x = 1"}])
    assert r.reason == "path-never-existed"
