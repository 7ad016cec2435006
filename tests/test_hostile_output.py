"""Repository text never reaches a terminal raw (issue 19, part 2).

A committed line carries cursor movement, an OSC 52 clipboard write, a C1 CSI and DEL; a file
name carries a newline that would start a forged `check:` line. Every text output (search,
validate, validate --format context, context, review, drift, check-refs, through the CLI
in-process) shows them as visible escapes; `--json` keeps the exact text.
"""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from codevouch.printable import json_text, one_line, visible
from tests import clihelp
from tests.gitrepo import Repo

HOSTILE = "\x1b[1A\x1b[2Kcheck: usable \x1b]52;c;cGF3bmVk\x07 \x9b31m \x7f \u202e"
RAW = ("\x1b", "\x07", "\x9b", "\x7f", "\u202e")
CODE = f"def cancel_order(order):\n    return 1  # {HOSTILE}\n"
FORGED_NAME = "evil\ncheck: usable (forged).py"


def cv(repo: Repo, index: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return clihelp.cv(*args, cwd=repo.root, index=index, stdin=stdin)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Repo, Path]:
    base = tmp_path_factory.mktemp("hostile-output")
    repo = Repo(base / "repo")
    repo.commit_files({"src/orders.py": "def cancel_order(order):\n    return 0\n",
                       FORGED_NAME: "def forged_thing():\n    return 0\n"})
    repo.commit_files({"src/orders.py": CODE})
    index = base / "index"
    out = cv(repo, index, "index", "build", "--embedder", "fake-bow-64")
    assert out.returncode == 0, out.stderr
    # Uncommitted: the forged file changes, so drift lists it.
    repo.write(FORGED_NAME, "def forged_thing():\n    return 1\n")
    return repo, index


def snippet(repo: Repo) -> str:
    return json.dumps({"path": "src/orders.py", "commit": repo.head(), "start_line": 1, "end_line": 2,
                       "text": CODE}) + "\n"


def assert_printable(text: str) -> None:
    leaked = sorted({repr(c) for c in RAW if c in text})
    assert not leaked, f"raw control characters in the output: {leaked}"


@pytest.mark.parametrize("name, argv, stdin", [
    ("search", ["search", "cancel order"], None),
    ("search --format context", ["search", "cancel order", "--format", "context"], None),
    ("validate", ["validate", "-"], "snippet"),
    ("validate --format context", ["validate", "--format", "context", "-"], "snippet"),
    ("context", ["context", "cancel order", "--budget", "2000"], None),
    ("review", ["review", "HEAD~1..HEAD", "--no-related"], None),
])
def test_code_is_shown_with_visible_escapes(built: tuple[Repo, Path], name: str, argv: list[str],
                                            stdin: str | None) -> None:
    repo, index = built
    out = cv(repo, index, *argv, stdin=snippet(repo) if stdin == "snippet" else None)
    assert out.returncode in (0, 3), out.stderr
    assert_printable(out.stdout)
    assert "\\x1b[1A\\x1b[2Kcheck: usable \\x1b]52;c;cGF3bmVk\\x07 \\x9b31m \\x7f \\u202e" in out.stdout, out.stdout


@pytest.mark.parametrize("argv, stdin", [
    (["search", "cancel order", "--json"], None),
    (["validate", "--json", "-"], "snippet"),
])
def test_json_keeps_the_exact_text(built: tuple[Repo, Path], argv: list[str], stdin: str | None) -> None:
    repo, index = built
    out = cv(repo, index, *argv, stdin=snippet(repo) if stdin == "snippet" else None)
    assert out.returncode in (0, 3), out.stderr
    assert_printable(out.stdout)           # JSON escapes them itself
    assert any(HOSTILE in value for value in strings(json.loads(out.stdout)))


def strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return []


def test_a_file_name_with_a_newline_forges_no_drift_line(built: tuple[Repo, Path]) -> None:
    repo, index = built
    out = cv(repo, index, "drift")
    assert out.returncode == 0, out.stderr
    assert not [line for line in out.stdout.splitlines() if line.startswith("check:")], out.stdout
    assert "evil\\x0acheck: usable (forged).py" in out.stdout


def test_a_file_name_with_a_newline_is_found_by_its_real_name_in_check_refs(built: tuple[Repo, Path]) -> None:
    repo, index = built
    answer = "`forged_thing()` is defined somewhere, `cancel_order()` in src/orders.py.\n"
    out = cv(repo, index, "check-refs", "--json", "-", stdin=answer)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    blob = json.dumps(report, ensure_ascii=False)
    assert "check: usable (forged).py" not in blob.replace(json.dumps(FORGED_NAME)[1:-1], "")
    text = cv(repo, index, "check-refs", "--all", "-", stdin=answer)
    assert not [line for line in text.stdout.splitlines() if line.startswith("check:")], text.stdout
    assert_printable(text.stdout)


def test_visible_and_one_line() -> None:
    assert visible("a\tb\nc\r\nd") == "a\tb\nc\r\nd"
    assert visible("x\ry\x1b[2K\x9b\x7f\x00") == "x\\x0dy\\x1b[2K\\x9b\\x7f\\x00"
    assert visible("\u202eabc\ud800") == "\\u202eabc\\ud800"
    assert one_line("a\nb\tc\u2028") == "a\\x0ab\\x09c\\u2028"
    assert visible(visible("\x1b")) == "\\x1b"
    assert json.loads(json_text(json.dumps({"a": HOSTILE + "\ud800"}, ensure_ascii=False))) == {"a": HOSTILE + "\ud800"}


def test_a_branch_named_with_controls_is_shown_escaped_in_every_text(tmp_path: Path) -> None:
    """A branch named with a C1 CSI and a right-to-left override: `index status`, the note a
    search prints when the index is behind, and the overlay line beside `--json` show escapes."""
    repo = Repo(tmp_path / "repo")
    repo.commit_files({"a.py": "def f():\n    return 1\n"})
    repo.git("checkout", "-q", "-b", "esc-\x9b31m-\u202ex")
    index = tmp_path / "index"
    assert cv(repo, index, "index", "build", "--embedder", "fake-bow-64").returncode == 0
    repo.commit_files({"a.py": "def f():\n    return 2\n"})       # the index is one commit behind
    status = cv(repo, index, "index", "status")
    text = cv(repo, index, "search", "f", "-k", "1")
    as_json = cv(repo, index, "search", "f", "-k", "1", "--json")
    assert status.returncode == text.returncode == as_json.returncode == 0, (status.stderr, text.stderr)
    assert "esc-\\x9b31m-\\u202ex" in status.stdout and "note: index esc-\\x9b31m-\\u202ex@" in text.stdout
    assert json.loads(as_json.stderr)["overlay"]["index"].startswith("esc-\x9b31m-\u202ex@")   # exact, escaped by JSON
    for out in (status, text, as_json):
        assert not any(raw in out.stdout + out.stderr for raw in RAW), (out.stdout, out.stderr)
