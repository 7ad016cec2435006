"""Raw git errors become reasons or clear messages (issue 19, part 5): an indexed commit that a
force-push and gc took away, and a required filter whose program is missing. Real git, the
real CLI; before, search, context and drift printed `git failed (diff ...): fatal: bad object`,
and search and validate `fatal: s.py: clean filter 'crypt' failed`."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.clihelp import FAKE, cv
from tests.gitrepo import Repo

ORDERS = "def cancel(order):\n    return order.cancel()\n"


def no_raw_git(out: subprocess.CompletedProcess[str]) -> None:
    both = out.stdout + out.stderr
    assert "fatal:" not in both and "git failed" not in both and "Traceback" not in both, both[-1500:]


@pytest.fixture(scope="module")
def rewritten(tmp_path_factory: pytest.TempPathFactory) -> tuple[Repo, Path, str]:
    """A repository indexed at a commit that was then amended away and garbage-collected."""
    base = tmp_path_factory.mktemp("gone")
    repo = Repo(base / "repo")
    repo.commit_files({"README.md": "hello\n"})
    repo.commit_files({"src/orders.py": ORDERS})
    gone = repo.head()
    index = base / "index"
    built = cv("index", "build", "--repo", str(repo.root), *FAKE, index=index)
    assert built.returncode == 0, built.stderr
    repo.write("src/orders.py", ORDERS + "\n\ndef refund(order):\n    return order.refund()\n")
    repo.git("commit", "-q", "-a", "--amend", "-m", "rewritten")
    repo.git("reflog", "expire", "--expire=now", "--expire-unreachable=now", "--all")
    repo.git("gc", "-q", "--prune=now")
    assert subprocess.run(["git", "-C", str(repo.root), "cat-file", "-e", gone], capture_output=True).returncode != 0
    return repo, index, gone


def test_search_on_a_gone_indexed_commit_answers_and_says_why(rewritten: tuple[Repo, Path, str]) -> None:
    repo, index, _ = rewritten
    out = cv("search", "cancel order", "--json", cwd=repo.root, index=index)
    no_raw_git(out)
    assert out.returncode == 0 and json.loads(out.stdout), out.stderr
    text = cv("search", "cancel order", cwd=repo.root, index=index)
    no_raw_git(text)
    said = text.stderr + text.stdout
    assert "that commit is no longer in the repository" in said and "codevouch index build" in said


def test_context_on_a_gone_indexed_commit_answers(rewritten: tuple[Repo, Path, str]) -> None:
    repo, index, _ = rewritten
    out = cv("context", "cancel order", cwd=repo.root, index=index)
    no_raw_git(out)
    assert out.returncode == 0 and "no longer in the repository" in out.stdout + out.stderr


def test_drift_on_a_gone_indexed_commit_says_what_to_do(rewritten: tuple[Repo, Path, str]) -> None:
    repo, index, gone = rewritten
    out = cv("drift", cwd=repo.root, index=index)
    no_raw_git(out)
    assert out.returncode == 1, (out.returncode, out.stderr)
    assert f"indexed at commit {gone[:12]}, which is no longer in" in out.stderr
    assert "codevouch index build" in out.stderr


def test_validate_a_snippet_of_a_gone_commit_is_commit_gone(rewritten: tuple[Repo, Path, str]) -> None:
    repo, index, gone = rewritten
    snippet = {"path": "src/orders.py", "commit": gone, "start_line": 1, "end_line": 2}
    out = cv("validate", "-", "--json", cwd=repo.root, index=index, stdin=json.dumps(snippet))
    no_raw_git(out)
    [v] = json.loads(out.stdout)
    assert v["reason"] == "commit-gone", v
    status = cv("index", "status", cwd=repo.root, index=index)
    no_raw_git(status)
    assert status.returncode == 0


@pytest.fixture(scope="module")
def filtered(tmp_path_factory: pytest.TempPathFactory) -> tuple[Repo, Path]:
    """A file under a required filter whose program does not exist, changed in the working tree."""
    base = tmp_path_factory.mktemp("filter")
    repo = Repo(base / "repo")
    repo.commit_files({"src/orders.py": ORDERS, "src/secret.py": "def key():\n    return 1\n",
                       ".gitattributes": "src/secret.py filter=crypt\n"})
    repo.git("config", "filter.crypt.required", "true")
    index = base / "index"
    built = cv("index", "build", "--repo", str(repo.root), *FAKE, index=index)
    assert built.returncode == 0, built.stderr
    repo.write("src/secret.py", "def key():\n    return 2\n")
    return repo, index


def test_a_missing_required_filter_that_may_run_is_a_clear_error(filtered: tuple[Repo, Path],
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    repo, index = filtered
    monkeypatch.setenv("CODEVOUCH_RUN_GIT_FILTERS", "1")
    snippet = json.dumps({"path": "src/secret.py", "commit": repo.head(), "start_line": 1, "end_line": 2})
    for out in (cv("validate", "-", cwd=repo.root, index=index, stdin=snippet),
                cv("search", "key", cwd=repo.root, index=index)):
        no_raw_git(out)
        assert out.returncode == 1, (out.returncode, out.stderr)
        assert "clean filter 'crypt' failed on src/secret.py" in out.stderr
        assert "unset CODEVOUCH_RUN_GIT_FILTERS" in out.stderr


def test_a_missing_required_filter_not_run_is_checked_without_it(filtered: tuple[Repo, Path],
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    repo, index = filtered
    monkeypatch.delenv("CODEVOUCH_RUN_GIT_FILTERS", raising=False)
    snippet = json.dumps({"path": "src/secret.py", "commit": repo.head(), "start_line": 1, "end_line": 2})
    out = cv("validate", "-", "--json", cwd=repo.root, index=index, stdin=snippet)
    no_raw_git(out)
    [v] = json.loads(out.stdout)
    assert "filter 'crypt' is not run" in v["detail"]
    for args in (("search", "key"), ("drift",)):
        got = cv(*args, cwd=repo.root, index=index)
        no_raw_git(got)
        assert got.returncode == 0, got.stderr


def test_a_config_that_includes_itself_is_named_not_called_no_repository(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.commit_files({"a.py": "def f():\n    return 1\n"})
    with (repo.root / ".git" / "config").open("a") as config:
        config.write("[include]\n\tpath = config\n")
    out = cv("index", "build", "--repo", str(repo.root), *FAKE, index=tmp_path / "index")
    assert out.returncode == 1 and "includes itself" in out.stderr and "not inside a git repository" not in out.stderr
    assert ".git/config" in out.stderr and "\\x0a" not in out.stderr, out.stderr
